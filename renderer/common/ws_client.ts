// The workbench's transport to the engine in a browser: the EngineClient contract
// (engine/common/rpc.ts) as JSON over one WebSocket. It reconnects when the engine
// restarts; requests still waiting when the connection drops fail with a clear
// error instead of hanging.
import { BasinError } from "../../engine/common/errors.js";
import type { ClusterStatus, ColumnProfile, EngineClient, EngineEvent, EngineMethod, Page, ResultFilter, ResultInfo, ResultSort, RpcResponse, WorkspaceInfo } from "../../engine/common/rpc.js";

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

export type ConnectionState = "connecting" | "open" | "closed";

export interface WsClientOptions {
  /** ws://127.0.0.1:PORT/?token=… */
  url: string;
  /** Default: the global WebSocket. */
  createSocket?: (url: string) => SocketLike;
  /** First reconnect delay; doubles up to 2 s. Default 100 ms. */
  reconnectMs?: number;
}

const OPEN = 1;

interface Pending {
  method: EngineMethod;
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}

/**
 * @example
 * const client = new WsEngineClient({ url: `ws://${location.host}/?token=${token}` });
 * client.onEvent((e) => e.type === "runFinished" && console.log(e.result.rows));
 * await client.run("pipelines/taxi.ts");
 */
export class WsEngineClient implements EngineClient {
  private socket: SocketLike | undefined;
  private next = 1;
  private readonly pending = new Map<number, Pending>();
  /** Requests made while (re)connecting, sent on open. */
  private readonly queued: string[] = [];
  private readonly eventListeners = new Set<(e: EngineEvent) => void>();
  private readonly stateListeners = new Set<(s: ConnectionState) => void>();
  private delay: number;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private closedByUser = false;
  state: ConnectionState = "connecting";

  constructor(private readonly options: WsClientOptions) {
    this.delay = options.reconnectMs ?? 100;
    this.connect();
  }

  /** Calls `listener` for every engine event; returns the unsubscribe function. */
  onEvent(listener: (e: EngineEvent) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  /** Calls `listener` whenever the connection opens or drops. */
  onConnection(listener: (s: ConnectionState) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  workspace(): Promise<WorkspaceInfo> { return this.call("workspace"); }
  readFile(path: string): Promise<string> { return this.call("readFile", path); }
  writeFile(path: string, text: string): Promise<void> { return this.call("writeFile", path, text); }
  run(path: string, source?: string): Promise<{ runId: string }> { return this.call("run", path, source); }
  cancel(runId: string): Promise<void> { return this.call("cancel", runId); }
  page(resultId: string, offset: number, limit: number, columns?: string[]): Promise<Page> { return this.call("page", resultId, offset, limit, columns); }
  view(resultId: string, sort: ResultSort[], filters: ResultFilter[]): Promise<ResultInfo> { return this.call("view", resultId, sort, filters); }
  profile(resultId: string, column: string): Promise<ColumnProfile> { return this.call("profile", resultId, column); }
  release(resultId: string): Promise<void> { return this.call("release", resultId); }
  cluster(): Promise<ClusterStatus> { return this.call("cluster"); }

  /** Closes for good: no reconnect; waiting requests fail. */
  close(): void {
    this.closedByUser = true;
    clearTimeout(this.timer);
    this.socket?.close();
    this.dropped("the workbench closed its connection to the engine");
  }

  private call<T>(method: EngineMethod, ...params: unknown[]): Promise<T> {
    if (this.closedByUser) return Promise.reject(new BasinError("BASIN_IO", `${method}: the connection to the engine is closed`));
    const id = this.next++;
    // undefined is not JSON: trailing optional params are dropped rather than sent as null.
    while (params.length > 0 && params[params.length - 1] === undefined) params.pop();
    const text = JSON.stringify({ id, method, params });
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { method, resolve: resolve as (v: unknown) => void, reject });
      if (this.socket && this.socket.readyState === OPEN) this.socket.send(text);
      else this.queued.push(text);
    });
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
    ws.onmessage = (ev) => this.receive(String(ev.data));
    ws.onerror = () => {}; // onclose follows and handles it
    ws.onclose = () => {
      if (this.socket !== ws) return;
      this.socket = undefined;
      this.dropped("the connection to the engine dropped before it answered (did `basin serve` stop or restart?); it reconnects by itself — try again");
      if (this.closedByUser) return;
      this.setState("closed");
      this.timer = setTimeout(() => this.connect(), this.delay);
      this.delay = Math.min(this.delay * 2, 2000);
    };
  }

  private receive(text: string): void {
    let msg: RpcResponse | { event: EngineEvent };
    try {
      msg = JSON.parse(text) as RpcResponse | { event: EngineEvent };
    } catch {
      return;
    }
    if ("event" in msg) {
      for (const l of this.eventListeners) l(msg.event);
      return;
    }
    const p = this.pending.get(msg.id);
    if (!p) return;
    this.pending.delete(msg.id);
    if ("error" in msg) p.reject(BasinError.fromJSON(msg.error));
    else p.resolve(msg.result);
  }

  /** Fails every request still waiting (sent or queued). */
  private dropped(why: string): void {
    this.queued.length = 0;
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const p of waiting) p.reject(new BasinError("BASIN_IO", `${p.method}: ${why}`));
  }

  private setState(s: ConnectionState): void {
    this.state = s;
    for (const l of this.stateListeners) l(s);
  }
}
