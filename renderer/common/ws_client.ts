// The workbench's transport to the engine in a browser: the EngineClient contract
// (engine/common/rpc.ts) as JSON over one WebSocket. It reconnects when the engine
// restarts; requests still waiting when the connection drops fail with a clear
// error instead of hanging.
import { RpcClient, type ConnectionState } from "./rpc_client.js";

export type { ConnectionState };

/** The part of the WebSocket API the client uses (the browser's, or `ws` in tests). */
export interface SocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(): void;
  onopen: ((ev: unknown) => void) | null;
  onclose: ((ev: unknown) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
}

export interface WsClientOptions {
  /** ws://127.0.0.1:PORT/?token=… */
  url: string;
  /** Default: the global WebSocket. */
  createSocket?: (url: string) => SocketLike;
  /** First reconnect delay; doubles up to 2 s. Default 100 ms. */
  reconnectMs?: number;
  /**
   * Whether the server refuses this page's token, asked when a socket did not open
   * (default: the server's /token answer, 403 for another token). Unreachable or slow
   * is not refused: the page goes on reconnecting.
   */
  tokenRefused?: () => Promise<boolean>;
}

/** Why a page stops reconnecting: the server there refuses its socket. */
export const TOKEN_REFUSED =
  "basin serve was restarted (or another server took its port): it refuses this page's token. Open the URL it printed at start; your files are safe, and unsaved editor changes stay in this page until you leave it";

const OPEN = 1;

/**
 * @example
 * const client = new WsEngineClient({ url: `ws://${location.host}/?token=${token}` });
 * client.onEvent((e) => e.type === "runFinished" && console.log(e.result.rows));
 * await client.run("pipelines/taxi.ts");
 */
export class WsEngineClient extends RpcClient {
  private socket: SocketLike | undefined;
  /** Requests made while (re)connecting, sent on open. */
  private readonly queued: string[] = [];
  private delay: number;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly options: WsClientOptions) {
    super();
    this.delay = options.reconnectMs ?? 100;
    this.connect();
  }

  /** Closes for good: no reconnect; waiting requests fail. */
  close(): void {
    this.closedByUser = true;
    clearTimeout(this.timer);
    this.socket?.close();
    this.queued.length = 0;
    this.dropped("the workbench closed its connection to the engine");
  }

  protected transmit(message: object): void {
    const text = JSON.stringify(message);
    if (this.socket && this.socket.readyState === OPEN) this.socket.send(text);
    else this.queued.push(text);
  }

  private connect(): void {
    this.setState("connecting");
    const make = this.options.createSocket ?? ((url: string) => new WebSocket(url) as unknown as SocketLike);
    const ws = make(this.options.url);
    this.socket = ws;
    let opened = false;
    ws.onopen = () => {
      opened = true;
      this.delay = this.options.reconnectMs ?? 100;
      this.setState("open");
      for (const text of this.queued.splice(0)) ws.send(text);
    };
    ws.onmessage = (ev) => {
      let msg: unknown;
      try {
        msg = JSON.parse(String(ev.data));
      } catch {
        return;
      }
      this.receive(msg);
    };
    ws.onerror = () => {}; // onclose follows and handles it
    ws.onclose = () => {
      if (this.socket !== ws) return;
      this.socket = undefined;
      this.queued.length = 0;
      this.dropped(
        "the connection to the engine dropped before it answered (did `basin serve` stop or restart?); it reconnects by itself — try again",
      );
      if (this.closedByUser) return;
      this.setState("closed");
      this.timer = setTimeout(() => this.connect(), this.delay);
      this.delay = Math.min(this.delay * 2, 2000);
      if (!opened) void this.checkRefused();
    };
  }

  /** A socket that never opened: a server that refuses this page's token was restarted, and retrying cannot help. */
  private async checkRefused(): Promise<void> {
    const refused = this.options.tokenRefused ?? (() => serverRefusesToken(this.options.url));
    if (!(await refused().catch(() => false)) || this.closedByUser || this.state === "open") return;
    this.closedByUser = true;
    clearTimeout(this.timer);
    this.socket?.close();
    this.setState("crashed", TOKEN_REFUSED);
  }
}

/** Whether the server behind a ws:// address says its token is not the address's. */
async function serverRefusesToken(wsUrl: string): Promise<boolean> {
  const ws = new URL(wsUrl);
  const check = new URL("/token", `${ws.protocol === "wss:" ? "https:" : "http:"}//${ws.host}`);
  check.searchParams.set("token", ws.searchParams.get("token") ?? "");
  const res = await fetch(check, { cache: "no-store" });
  return res.status === 403;
}
