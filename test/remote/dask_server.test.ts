// The workbench server with its runs on a real Dask cluster: the same pipeline file
// gives the same rows as on the local engine, results are paged here, and the
// cluster() RPC reports the Dask workers (memory, tasks) and the scheduler; also
// `basin serve --cluster tcp://...` as a user starts it.
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DaskCluster } from "../../engine/cluster/dask/dask_cluster.js";
import type { ClusterStatus, EngineEvent, Page, ResultInfo } from "../../engine/common/rpc.js";
import { native } from "../../engine/native/addon.js";
import { serve, type RunningServer } from "../../engine/server/http_server.js";
import { BASIN_BIN, makeTempDir, printedUrl, removeDir, writeText } from "../helpers/cli.js";
import { expectSameRows } from "../helpers/oracle.js";
import { RpcClient } from "../helpers/rpc_client.js";
import { PYTHON, startDask, type DaskProcs } from "./dask_procs.js";

// Nulls, unicode and skewed keys; empty and one-row partitions.
const PIPELINE = `import { col, count, fromColumns } from "basin";
const n = 997;
const k = Array.from({ length: n }, (_, i) => (i % 11 === 0 ? null : ["α", "東京", "x", "x", "x"][i % 5]));
const v = Array.from({ length: n }, (_, i) => (i % 7 === 0 ? null : (i * 37) % 101));
export default fromColumns({ k, v }, { partitions: [0, 1, n - 5, 0, 4] })
  .filter(col("v").gt(3))
  .groupBy("k")
  .agg(col("v").sum().alias("s"), count().alias("n"), col("v").mean().alias("m"));
`;

let dask: DaskProcs;
let workspace: string;

beforeAll(async () => {
  dask = await startDask(2);
  workspace = makeTempDir("basin-dask-serve-");
  writeText(workspace, "p.ts", PIPELINE);
}, 90_000);

afterAll(async () => {
  await dask?.stop();
  if (workspace) removeDir(workspace);
  expect(native().storeStats()).toMatchObject({ handles: 0, buffers: 0 });
});

async function connect(server: RunningServer): Promise<RpcClient> {
  return RpcClient.connect(`ws://127.0.0.1:${server.port}/?token=${server.token}`, `http://127.0.0.1:${server.port}`);
}

/** Runs p.ts and returns all rows of its result (released afterwards). */
async function runRows(client: RpcClient): Promise<unknown[][]> {
  const { runId } = await client.call<{ runId: string }>("run", "p.ts");
  const done = await client.waitFor(
    (e) => (e.type === "runFinished" || e.type === "runFailed") && e.runId === runId,
    60_000,
  );
  if (done.type === "runFailed") throw new Error(done.error.message);
  const result = (done as Extract<EngineEvent, { type: "runFinished" }>).result as ResultInfo;
  const page = await client.call<Page>("page", result.id, 0, 1000);
  await client.call("release", result.id);
  return Array.from({ length: page.values[0].length }, (_, r) => page.values.map((c) => c[r]));
}

describe("the workbench server on a Dask cluster", () => {
  it("runs on Dask with the local engine's answers, and cluster() reports the Dask workers", async () => {
    const cluster = new DaskCluster(dask.address, { python: PYTHON });
    const onDask = await serve({ root: workspace, cluster });
    const local = await serve({ root: workspace });
    const a = await connect(onDask),
      b = await connect(local);
    try {
      expectSameRows(await runRows(a), await runRows(b), "Dask vs local through the server");
      const status = await a.call<ClusterStatus>("cluster");
      expect(status.kind).toBe("dask");
      expect(status.dask?.scheduler).toBe(dask.address);
      expect(status.dask?.dashboard).toMatch(/^http:\/\//);
      expect(status.workers).toHaveLength(2);
      for (const w of status.workers) {
        expect(w.memoryLimit).toBe(1e9);
        expect(w.memory).toBeGreaterThan(0);
        expect(w.tasks).toBeGreaterThanOrEqual(0);
      }
      expect(status.store.tables).toBe(0);
      expect((await b.call<ClusterStatus>("cluster")).kind).toBe("local");
    } finally {
      a.close();
      b.close();
      await onDask.close();
      await local.close();
      await cluster.close();
    }
  });

  it("basin serve --cluster tcp://... serves with runs on Dask; an unreachable scheduler fails at start", async () => {
    const child = spawn(process.execPath, [BASIN_BIN, "serve", workspace, "--port", "0", "--cluster", dask.address], {
      cwd: "/",
      env: { ...process.env, BASIN_WORKERS: "1", BASIN_PYTHON: PYTHON },
    });
    try {
      const { url, out } = await printedUrl(child, 40_000);
      expect(out).toContain(`(runs on Dask at ${dask.address})`);
      const client = await RpcClient.connect(`ws://${url.host}/?token=${url.searchParams.get("token")}`, url.origin);
      expect((await runRows(client)).length).toBe(4);
      expect((await client.call<ClusterStatus>("cluster")).workers).toHaveLength(2);
      client.close();
      const exit = new Promise<number | null>((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      expect(await exit).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
    const bad = spawn(
      process.execPath,
      [BASIN_BIN, "serve", workspace, "--port", "0", "--cluster", "tcp://127.0.0.1:1"],
      { cwd: "/", env: { ...process.env, BASIN_PYTHON: PYTHON } },
    );
    let err = "";
    bad.stderr.on("data", (d) => (err += String(d)));
    const code = await new Promise<number | null>((resolve) => bad.once("exit", resolve));
    expect(code).toBe(1);
    expect(err).toMatch(/127\.0\.0\.1:1/);
  });
});
