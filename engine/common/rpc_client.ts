// The EngineClient contract (rpc.ts) over any message channel: the requests, their
// pending promises, events and connection state. Transports (the workbench's
// WebSocket and MessagePort clients in renderer/common, RemoteEngine over SSH in
// engine/cluster/remote) only move messages; they share everything else.
import { BasinError } from "./errors.js";
import type {
  Bins2d,
  Bins2dView,
  ClusterStatus,
  ColumnProfile,
  EngineClient,
  EngineEvent,
  EngineMethod,
  ExportFormat,
  ExportSummary,
  OpenedFile,
  Page,
  ResultFilter,
  ResultInfo,
  ResultSample,
  ResultSort,
  RpcResponse,
  RunRecord,
  SessionState,
  WorkspaceInfo,
} from "./rpc.js";

/** "crashed": the desktop engine process stopped; it comes back only with restartEngine(). */
export type ConnectionState = "connecting" | "open" | "closed" | "crashed";

/** What the workbench needs of a transport, beyond the contract itself. */
export interface WorkbenchClient extends EngineClient {
  readonly state: ConnectionState;
  /** Why the engine stopped, while the state is "crashed". */
  readonly crashMessage: string | undefined;
  onEvent(listener: (e: EngineEvent) => void): () => void;
  onConnection(listener: (s: ConnectionState) => void): () => void;
  /** Desktop only: starts a stopped engine process again. */
  restartEngine?(): void;
  close(): void;
}

interface Pending {
  method: EngineMethod;
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}

/**
 * @example
 * class LoopbackClient extends RpcClient {
 *   protected transmit(message: object) { void dispatch(engine, message).then((r) => this.receive(r)); }
 *   close() {}
 * }
 */
export abstract class RpcClient implements WorkbenchClient {
  private next = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly eventListeners = new Set<(e: EngineEvent) => void>();
  private readonly stateListeners = new Set<(s: ConnectionState) => void>();
  protected closedByUser = false;
  state: ConnectionState = "connecting";
  crashMessage: string | undefined;

  /** Sends one request now, or queues it until the channel opens. */
  protected abstract transmit(message: object): void;

  /** Calls `listener` for every engine event; returns the unsubscribe function. */
  onEvent(listener: (e: EngineEvent) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  /** Calls `listener` whenever the connection opens, drops or the engine crashes. */
  onConnection(listener: (s: ConnectionState) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  workspace(): Promise<WorkspaceInfo> {
    return this.call("workspace");
  }
  readFile(path: string): Promise<string> {
    return this.call("readFile", path);
  }
  writeFile(path: string, text: string): Promise<void> {
    return this.call("writeFile", path, text);
  }
  openFile(path: string): Promise<OpenedFile> {
    return this.call("openFile", path);
  }
  saveFile(path: string, text: string, version?: string): Promise<{ version: string }> {
    return this.call("saveFile", path, text, version);
  }
  attach(sessionId: string): Promise<SessionState> {
    return this.call("attach", sessionId);
  }
  preview(path: string, rows?: number): Promise<ResultInfo> {
    return this.call("preview", path, rows);
  }
  sample(resultId: string, n: number, columns: string[]): Promise<ResultSample> {
    return this.call("sample", resultId, n, columns);
  }
  run(path: string, source?: string): Promise<{ runId: string }> {
    return this.call("run", path, source);
  }
  cancel(runId: string): Promise<void> {
    return this.call("cancel", runId);
  }
  page(resultId: string, offset: number, limit: number, columns?: string[]): Promise<Page> {
    return this.call("page", resultId, offset, limit, columns);
  }
  view(resultId: string, sort: ResultSort[], filters: ResultFilter[]): Promise<ResultInfo> {
    return this.call("view", resultId, sort, filters);
  }
  profile(resultId: string, column: string): Promise<ColumnProfile> {
    return this.call("profile", resultId, column);
  }
  release(resultId: string): Promise<void> {
    return this.call("release", resultId);
  }
  countDistinct(resultId: string, column: string): Promise<number> {
    return this.call("countDistinct", resultId, column);
  }
  bins2d(resultId: string, x: string, y: string, xBins: number, yBins: number, view?: Bins2dView): Promise<Bins2d> {
    return this.call("bins2d", resultId, x, y, xBins, yBins, view);
  }
  runHistory(): Promise<RunRecord[]> {
    return this.call("runHistory");
  }
  cluster(since?: number): Promise<ClusterStatus> {
    return this.call("cluster", since);
  }
  exportResult(resultId: string, path: string, format: ExportFormat): Promise<ExportSummary> {
    return this.call("exportResult", resultId, path, format);
  }

  abstract close(): void;

  protected call<T>(method: EngineMethod, ...params: unknown[]): Promise<T> {
    if (this.closedByUser)
      return Promise.reject(new BasinError("BASIN_IO", `${method}: the connection to the engine is closed`));
    const id = this.next++;
    // undefined is not JSON: trailing optional params are dropped rather than sent as null.
    while (params.length > 0 && params[params.length - 1] === undefined) params.pop();
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { method, resolve: resolve as (v: unknown) => void, reject });
      this.transmit({ id, method, params });
    });
  }

  /** Handles one message from the engine: a response or an event (anything else is ignored). */
  protected receive(msg: unknown): void {
    if (typeof msg !== "object" || msg === null) return;
    if ("event" in msg) {
      for (const l of this.eventListeners) l((msg as { event: EngineEvent }).event);
      return;
    }
    const reply = msg as RpcResponse;
    const p = this.pending.get(reply.id);
    if (!p) return;
    this.pending.delete(reply.id);
    if ("error" in reply) p.reject(BasinError.fromJSON(reply.error));
    else p.resolve(reply.result);
  }

  /** Fails every request still waiting. */
  protected dropped(why: string): void {
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const p of waiting) p.reject(new BasinError("BASIN_IO", `${p.method}: ${why}`));
  }

  protected setState(s: ConnectionState, crashMessage?: string): void {
    this.state = s;
    this.crashMessage = s === "crashed" ? crashMessage : undefined;
    for (const l of this.stateListeners) l(s);
  }
}
