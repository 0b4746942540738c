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
}

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
    ws.onopen = () => {
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
    };
  }
}
