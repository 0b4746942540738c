// A WebSocket client for the engine's RPC (engine/common/rpc.ts), as the browser
// workbench speaks it, for tests against a real `serve()`.
import WebSocket from "ws";
import type { EngineEvent, RpcResponse } from "../../engine/common/rpc.js";
import type { SerializedError } from "../../engine/common/errors.js";

export class RpcError extends Error {
  constructor(readonly error: SerializedError) {
    super(`${error.code}: ${error.location ? `${error.location}: ` : ""}${error.message}`);
  }
}

export class RpcClient {
  readonly events: EngineEvent[] = [];
  private next = 1;
  private readonly pending = new Map<number, (r: RpcResponse) => void>();
  private readonly waiters: { match: (e: EngineEvent) => boolean; resolve: (e: EngineEvent) => void }[] = [];

  private constructor(private readonly ws: WebSocket) {
    ws.on("message", (data) => {
      const msg = JSON.parse(String(data)) as RpcResponse | { event: EngineEvent };
      if ("event" in msg) {
        this.events.push(msg.event);
        for (const w of [...this.waiters])
          if (w.match(msg.event)) {
            this.waiters.splice(this.waiters.indexOf(w), 1);
            w.resolve(msg.event);
          }
      } else this.pending.get(msg.id)?.(msg);
    });
  }

  /** Connects; rejects with the HTTP status when the server refuses. */
  static connect(url: string, origin: string): Promise<RpcClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { origin });
      ws.once("open", () => resolve(new RpcClient(ws)));
      ws.once("unexpected-response", (_req, res) => reject(new Error(`refused: HTTP ${res.statusCode}`)));
      ws.once("error", reject);
    });
  }

  /** Connects to the URL `basin serve` printed, as the page it serves would. */
  static open(printed: URL): Promise<RpcClient> {
    return RpcClient.connect(`ws://${printed.host}/?token=${printed.searchParams.get("token")}`, printed.origin);
  }

  call<T>(method: string, ...params: unknown[]): Promise<T> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, (r) => {
        this.pending.delete(id);
        if ("error" in r) reject(new RpcError(r.error));
        else resolve(r.result as T);
      });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  /** The first event (already seen or coming) that matches; fails after `ms`. */
  waitFor(match: (e: EngineEvent) => boolean, ms = 20_000): Promise<EngineEvent> {
    const seen = this.events.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new Error(`no matching event within ${ms} ms; got ${JSON.stringify(this.events.map((e) => e.type))}`)),
        ms,
      );
      this.waiters.push({ match, resolve: (e) => (clearTimeout(timer), resolve(e)) });
    });
  }

  close(): void {
    this.ws.close();
  }
}
