// What happens while a pipeline runs: progress, cancellation, lost workers,
// runtime errors that name the pipeline line, and an empty store afterwards.
import { execFile } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bag, col, count, fromColumns, LocalCluster, readCsv, type ProgressEvent } from "../../engine/api/index.js";
import { BasinError } from "../../engine/common/errors.js";
import { native } from "../../engine/native/addon.js";
import { makeTrips, writeTripsCsv } from "../helpers/data.js";
import { tableRows } from "../helpers/oracle.js";

let dir: string;
const frame = () =>
  readCsv(`${dir}/*.csv`, { blocksize: 1024 }).groupBy("city").agg(count().alias("n"), col("f").median().alias("md"));

beforeAll(() => {
  dir = writeTripsCsv(makeTrips(3000, 5), 3);
});

describe("a running pipeline", () => {
  let cluster: LocalCluster;
  beforeAll(() => {
    cluster = new LocalCluster({ workers: 2 });
  });
  afterAll(() => cluster.close());

  it("reports progress per task group up to every task done", async () => {
    const events: ProgressEvent[] = [];
    const t = await frame().compute({ cluster, onProgress: (e) => events.push(e) });
    const last = new Map(events.map((e) => [e.group, e]));
    expect(last.size).toBeGreaterThanOrEqual(2);
    for (const e of last.values()) expect(e.done).toBe(e.total);
    expect([...last.values()].reduce((n, e) => n + e.total, 0)).toBe(t.info.tasks);
    expect(events[0].done).toBe(0);
  });

  it("cancels: the run rejects with BASIN_CANCELLED, queued tasks never run, nothing is leaked", async () => {
    const ac = new AbortController();
    let finished = 0;
    const run = frame().compute({
      cluster,
      signal: ac.signal,
      onProgress: (e) => {
        if (e.done > 0) finished++;
        if (finished === 1) ac.abort("test");
      },
    });
    await expect(run).rejects.toMatchObject({ code: "BASIN_CANCELLED" });
    const total = (await frame().compute({ cluster })).info.tasks;
    expect(finished).toBeLessThan(total);
    expect(native().storeStats()).toMatchObject({ handles: 0, buffers: 0 });
  });

  it("cancels the run, saying why, when the progress callback throws", async () => {
    const run = frame().compute({
      cluster,
      onProgress: (e) => {
        if (e.done > 0) throw new Error("callback broke");
      },
    });
    await expect(run).rejects.toMatchObject({
      code: "BASIN_CANCELLED",
      message: expect.stringContaining("callback broke"),
    });
    await cluster.idle(); // the tasks already running finish, and their results are dropped
    expect(native().storeStats()).toMatchObject({ handles: 0, buffers: 0 });
  });

  it("a cancelled task that never ends: BASIN_CANCELLED at once, its worker ended after the grace period and replaced, the next run not blocked", async () => {
    const ac = new AbortController();
    const forever = bag.fromItems([1, 2, 3, 4], { partitions: 2 }).map((x: number) => {
      for (;;) if (x < 0) return x; // a user function that loops
    });
    const run = forever.compute({ cluster, signal: ac.signal });
    await new Promise((r) => setTimeout(r, 300));
    expect(cluster.busyWorkers().length).toBe(2);
    const t0 = performance.now();
    ac.abort("user pressed Stop");
    await expect(run).rejects.toMatchObject({ code: "BASIN_CANCELLED" });
    expect(performance.now() - t0, "the cancel answers at once").toBeLessThan(200);
    const next = await readCsv(`${dir}/*.csv`).agg(count().alias("n")).compute({ cluster });
    expect(next.toRows()).toEqual([{ n: 3000 }]);
    expect(performance.now() - t0, "within the 1 s grace period and a worker restart").toBeLessThan(5000);
    expect(cluster.pool.names.length).toBe(2);
    expect(native().storeStats()).toMatchObject({ handles: 0, buffers: 0 });
  });

  it("finishes with the same answer when workers die mid-run (their tasks are rerun)", async () => {
    const expected = tableRows(await frame().compute({ cluster }));
    let killed = false;
    const t = await frame().compute({
      cluster,
      onProgress: (e) => {
        if (!killed && e.done === 1) {
          killed = true;
          for (const w of cluster.pool.names) void cluster.pool.kill(w);
        }
      },
    });
    expect(killed).toBe(true);
    expect(tableRows(t)).toEqual(expected);
    expect(native().storeStats(), "tables made by the killed threads are freed").toMatchObject({
      handles: 0,
      buffers: 0,
    });
    expect(cluster.pool.names.length).toBe(2);
  });

  it("runs concurrent computes side by side, each with its own answer", async () => {
    const [a, b] = await Promise.all([
      frame().compute({ cluster }),
      readCsv(`${dir}/*.csv`).agg(count().alias("n")).compute({ cluster }),
    ]);
    expect(a.numRows).toBeGreaterThan(1);
    expect(b.toRows()).toEqual([{ n: 3000 }]);
  });
});

describe("a closed cluster", () => {
  it("refuses a run with BASIN_PLAN saying what to do, instead of waiting forever for workers", async () => {
    const closed = new LocalCluster({ workers: 1 });
    await closed.close();
    await expect(fromColumns({ a: [1, 2] }).compute({ cluster: closed })).rejects.toMatchObject({
      code: "BASIN_PLAN",
      message: expect.stringContaining("create a new one"),
    });
  });
});

describe("a script that computes", () => {
  it.each([[[]], [["--max-old-space-size=2048"]]])(
    "exits by itself afterwards (node flags %j): idle workers never keep the process alive",
    async (flags: string[]) => {
      const api = new URL("../../dist/engine/api/index.js", import.meta.url).href;
      const script = `import { fromColumns, col } from ${JSON.stringify(api)};
      const t = await fromColumns({ a: [1, 2, 3] }, { partitions: 2 }).filter(col("a").gt(1)).compute();
      console.log(t.numRows);`;
      const r = await new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = execFile(
          process.execPath,
          [...flags, "--input-type=module", "-e", script],
          { timeout: 15_000 },
          (err, stdout) => resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, out: stdout }),
        );
        child.stdin?.end();
      });
      expect(r).toEqual({ code: 0, out: "2\n" });
    },
  );
});

describe("an error while running", () => {
  it("names the pipeline line of the step that failed (a cast of a bad value)", async () => {
    const df = fromColumns({ s: ["1", "2", "x"] }, { partitions: 2 });
    const line = new Error().stack!.split("\n")[1].match(/:(\d+):\d+\)?$/)![1];
    const bad = df.withColumns({ n: col("s").cast("int64") }); // the line after `line`
    const err = await bad.compute().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BasinError);
    expect(err).toMatchObject({ code: "BASIN_CAST" });
    expect((err as BasinError).location).toMatch(new RegExp(`runtime\\.test\\.ts:${Number(line) + 1}:`));
    expect((err as BasinError).message).toContain('cannot cast "x" to int64');
  });
});
