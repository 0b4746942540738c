// 200 runs in a row through the server, as a workbench would send them: good runs,
// runs cancelled at random moments, tasks that never end, pipelines with syntax,
// plan and runtime errors, and page reloads. Afterwards the store is empty, no worker
// is stuck, no temp file is left, and the process's memory is back where it was.
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { LocalCluster } from "../../engine/api/index.js";
import { seededRandom } from "../../engine/common/random.js";
import type { EngineEvent } from "../../engine/common/rpc.js";
import { native } from "../../engine/native/addon.js";
import { serve, type RunningServer } from "../../engine/server/http_server.js";
import { writeTripsCsv, makeTrips } from "../helpers/data.js";
import { writeText } from "../helpers/cli.js";
import { RpcClient } from "../helpers/rpc_client.js";

const RUNS = 200;
const dir = mkdtempSync(join(tmpdir(), "basin-soak-"));
let server: RunningServer;
let cluster: LocalCluster;
let client: RpcClient;
const SESSION = "soak-tab";

const connect = async () => {
  const c = await RpcClient.connect(
    `ws://127.0.0.1:${server.port}/?token=${server.token}`,
    `http://127.0.0.1:${server.port}`,
  );
  await c.call("attach", SESSION);
  return c;
};

beforeAll(async () => {
  const data = writeTripsCsv(makeTrips(4000, 3), 2);
  const read = `readCsv(${JSON.stringify(`${data}/*.csv`)}, { blocksize: 4096 })`;
  writeText(
    dir,
    "good.ts",
    `import { readCsv, col, count } from "basin";\nexport default ${read}.groupBy("city").agg(count().alias("n"), col("f").mean().alias("m"));\n`,
  );
  writeText(
    dir,
    "slow.ts",
    `import { bag } from "basin";\nexport default bag.fromItems(Array.from({ length: 64 }, (_, i) => i), { partitions: 8 }).map((x: number) => { let s = 0; for (let i = 0; i < 3e5; i++) s += i % 7; return s + x; });\n`,
  );
  writeText(
    dir,
    "loop.ts",
    `import { bag } from "basin";\nexport default bag.fromItems([1, 2], { partitions: 2 }).map((x: number) => { for (;;) if (x < 0) return x; });\n`,
  );
  writeText(dir, "syntax.ts", `import { col } from "basin";\nexport default col(;\n`);
  writeText(
    dir,
    "plan.ts",
    `import { readCsv, col } from "basin";\nexport default ${read}.filter(col("nope").gt(1));\n`,
  );
  writeText(dir, "throws.ts", `throw new Error("the pipeline's own bug");\n`);
  cluster = new LocalCluster({ workers: 2 });
  server = await serve({ root: dir, cluster, sessionGraceMs: 300 });
  client = await connect();
});
afterAll(async () => {
  client?.close();
  await server?.close();
  await cluster?.close();
  rmSync(dir, { recursive: true, force: true });
});

const ended = (runId: string) => (e: EngineEvent) =>
  (e.type === "runFinished" || e.type === "runFailed") && e.runId === runId;

/** Runs `file`, cancelling it after `cancelMs` if given; resolves with how it ended. */
async function runOnce(file: string, cancelMs?: number): Promise<EngineEvent> {
  const { runId } = await client.call<{ runId: string }>("run", file);
  if (cancelMs !== undefined) {
    await new Promise((r) => setTimeout(r, cancelMs));
    await client.call("cancel", runId).catch(() => undefined); // it may have ended already
  }
  return client.waitFor(ended(runId), 15_000);
}

/** Resident memory held, not what the allocators keep for reuse: glibc's per-thread
 * arenas swing RSS by ±20 MiB from run to run (measured over 800 runs) unless trimmed,
 * as the engine trims once idle. */
function rss(): number {
  (globalThis as { gc?: () => void }).gc?.();
  native().releaseFreeMemory();
  return process.memoryUsage().rss;
}

it(`${RUNS} runs with random cancels, reloads and bad pipelines leave an empty store, free workers, no temp files and the memory it started with`, async () => {
  // Warm up past what the engine keeps by design (the dashboard's last 20 runs, the task
  // stream, V8's code caches), so that what is measured after is what runs leak.
  for (let i = 0; i < 60; i++) await runOnce(i % 2 ? "good.ts" : "slow.ts");
  const before = rss();
  const rnd = seededRandom(2026);
  const seen: Record<string, number> = {};
  for (let i = 0; i < RUNS; i++) {
    const x = rnd();
    let what: string;
    let e: EngineEvent;
    if (x < 0.3) [what, e] = ["good", await runOnce("good.ts")];
    else if (x < 0.5) [what, e] = ["cancelled", await runOnce("slow.ts", Math.floor(rnd() * 60))];
    else if (x < 0.55) [what, e] = ["never ends", await runOnce("loop.ts", 20)];
    else if (x < 0.75) {
      const bad = ["syntax.ts", "plan.ts", "throws.ts"][Math.floor(rnd() * 3)];
      [what, e] = [bad, await runOnce(bad)];
      expect(e.type, bad).toBe("runFailed");
      if (e.type === "runFailed") expect(e.error.code, bad).not.toBe("BASIN_INTERNAL");
    } else if (x < 0.9) {
      // A reload mid-run: the page goes, its run goes on, the new page attaches.
      const { runId } = await client.call<{ runId: string }>("run", "slow.ts");
      client.close();
      client = await connect();
      [what, e] = ["reload", await client.waitFor(ended(runId), 15_000).catch(() => ({ type: "gone" }) as never)];
    } else [what, e] = ["slow", await runOnce("slow.ts")];
    seen[`${what}:${e.type}`] = (seen[`${what}:${e.type}`] ?? 0) + 1;
    if (e.type === "runFailed")
      expect(e.error.code, `${what}: ${e.error.message}`).toMatch(/BASIN_(CANCELLED|SYNTAX|PLAN|PIPELINE)/);
  }
  console.log(seen);
  expect(seen["good:runFinished"]).toBeGreaterThan(30);
  expect(seen["cancelled:runFailed"] ?? 0).toBeGreaterThan(5);

  // The page goes; after the session's grace period everything it held is released.
  const last = await runOnce("good.ts");
  expect(last.type).toBe("runFinished");
  client.close();
  await new Promise((r) => setTimeout(r, 600));
  await cluster.idle();
  expect(cluster.busyWorkers()).toEqual([]);
  expect(cluster.pool.names.length).toBe(2);
  expect(native().storeStats()).toMatchObject({ handles: 0, buffers: 0 });
  expect(readdirSync(tmpdir()).filter((n) => n.startsWith(`basin-pipeline-${process.pid}-`))).toEqual([]);
  expect(readdirSync(dir).filter((n) => n.includes(".partial-") || n.includes(".basin-save"))).toEqual([]);
  const after = rss();
  console.log(`rss ${(before / 2 ** 20).toFixed(0)} → ${(after / 2 ** 20).toFixed(0)} MiB`);
  expect(after, "RSS back within 10% of where it started").toBeLessThan(before * 1.1);
  client = await connect(); // for afterAll
}, 180_000);

it("a client that never attaches owns its runs' results too: they are released a grace period after it closes", async () => {
  const script = await RpcClient.connect(
    `ws://127.0.0.1:${server.port}/?token=${server.token}`,
    `http://127.0.0.1:${server.port}`,
  );
  const before = client.events.length;
  for (let i = 0; i < 5; i++) {
    const { runId } = await script.call<{ runId: string }>("run", "good.ts");
    const e = await script.waitFor(ended(runId), 15_000);
    expect(e.type).toBe("runFinished");
  }
  expect(native().storeStats().handles, "its results are kept while it is connected").toBeGreaterThan(0);
  expect(
    client.events.slice(before).filter((e) => e.type === "runFinished"),
    "another page does not see its runs",
  ).toEqual([]);
  script.close();
  await new Promise((r) => setTimeout(r, 600));
  expect(native().storeStats()).toMatchObject({ handles: 0, buffers: 0 });
}, 60_000);
