// A workspace served by a real `serve()` on 127.0.0.1 with one WebSocket client,
// as the workbench connects: the setup every engine-server suite shares.
import { afterAll, beforeAll } from "vitest";
import { LocalCluster } from "../../engine/api/index.js";
import type { EngineEvent, Page, ResultInfo } from "../../engine/common/rpc.js";
import { serve, type RunningServer } from "../../engine/server/http_server.js";
import { RpcClient } from "./rpc_client.js";

export interface Served {
  server: RunningServer;
  client: RpcClient;
  cluster: LocalCluster;
  /** Runs a workspace file (or `source` in its place) and waits for its runFinished or runFailed event. */
  runToEnd(path: string, source?: string): Promise<EngineEvent>;
  /** The result of a run that must succeed. */
  finished(path: string, source?: string): Promise<ResultInfo>;
  /** Every row of a result, fetched in pages of `size`. */
  allRows(id: string, rows: number, size?: number): Promise<unknown[][]>;
}

/**
 * Registers hooks that serve `root()` (called once the earlier hooks made the
 * folder) on a `workers`-worker local cluster, connect a client, and close it all.
 *
 * @example
 * const s = servedWorkspace(() => dir);
 * const info = await s.finished("p.ts");
 */
export function servedWorkspace(root: () => string, workers = 2, waitMs = 60_000): Served {
  const s = {} as Served;
  beforeAll(async () => {
    s.cluster = new LocalCluster({ workers });
    s.server = await serve({ root: root(), cluster: s.cluster });
    s.client = await RpcClient.connect(
      `ws://127.0.0.1:${s.server.port}/?token=${s.server.token}`,
      `http://127.0.0.1:${s.server.port}`,
    );
  });
  afterAll(async () => {
    s.client?.close();
    await s.server?.close();
    await s.cluster?.close();
  });
  s.runToEnd = async (path, source) => {
    const { runId } = await s.client.call<{ runId: string }>("run", path, source);
    return s.client.waitFor((e) => (e.type === "runFinished" || e.type === "runFailed") && e.runId === runId, waitMs);
  };
  s.finished = async (path, source) => {
    const e = await s.runToEnd(path, source);
    if (e.type !== "runFinished") throw new Error(`run failed: ${JSON.stringify(e)}`);
    return e.result;
  };
  s.allRows = async (id, rows, size = 333) => {
    const out: unknown[][] = [];
    for (let offset = 0; offset < rows; offset += size) {
      const p = await s.client.call<Page>("page", id, offset, size);
      for (let r = 0; r < p.values[0].length; r++) out.push(p.values.map((c) => c[r]));
    }
    return out;
  };
  return s;
}
