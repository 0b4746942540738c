// Worker processes (`workerProcesses: "all"`, as each GPU's worker runs): answers equal
// DuckDB's; a process killed mid-run takes its tables with it and they are recomputed
// from the task graph (same answer, nothing left behind); a task error in a process
// fails the run with its code and the process lives on.
import { execFile } from "node:child_process";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bag, col, count, LocalCluster, readCsv, type DataFrame, type ProgressEvent } from "../../engine/api/index.js";
import { native } from "../../engine/native/addon.js";
import { exchangeFolder } from "../../engine/workers/exchange_dir.js";
import { makeTrips, TRIPS_SQL_COLUMNS, writeTripsCsv } from "../helpers/data.js";
import { Duck, expectSameRows, tableRows } from "../helpers/oracle.js";

let dir: string;
let duck: Duck;
let cluster: LocalCluster;

const trips = () => readCsv(`${dir}/*.csv`, { blocksize: 2048, dtypes: { k: "int64", v: "int64" } });
/** Scans, a shuffle join of the trips with their own per-city sums, a group-by and a sort: several stages. */
const pipeline = (t: DataFrame = trips()): DataFrame => {
  const perCity = t.groupBy("city").agg(col("v").sum().alias("cv"), count().alias("cn"));
  return t
    .filter(col("f").gt(0))
    .join(perCity, { on: "city", how: "inner" })
    .groupBy("k")
    .agg(count().alias("n"), col("cv").sum().alias("s"), col("f").median().alias("md"), col("city").max().alias("cmax"))
    .sort("k");
};
const SQL = `WITH c AS (SELECT city, sum(v) AS cv, count(*) AS cn FROM t GROUP BY city)
  SELECT k, count(*) AS n, sum(cv) AS s, median(f) AS md, max(city) AS cmax
  FROM t JOIN c USING (city) WHERE f > 0 GROUP BY k ORDER BY k NULLS LAST`;

beforeAll(async () => {
  dir = writeTripsCsv(makeTrips(4000, 31), 4);
  duck = await Duck.open();
  await duck.run(`CREATE TABLE t AS SELECT * FROM read_csv('${dir}/*.csv', header=true, columns=${TRIPS_SQL_COLUMNS})`);
  cluster = new LocalCluster({ workers: 2, workerProcesses: "all" });
});

afterAll(async () => {
  await cluster.close();
  duck.close();
});

/** How many tables each worker process's store holds. */
async function workerTables(): Promise<Record<string, number>> {
  const stats = await cluster.pool.processStats(10_000);
  return Object.fromEntries(Object.entries(stats).map(([w, s]) => [w, s.store.handles]));
}

/** Nothing is left anywhere once a run is over: no held tables, no engine tables, no moved files. */
async function expectNothingLeft(): Promise<void> {
  await cluster.idle();
  expect(cluster.pool.held.size, "tables held by worker processes").toBe(0);
  expect(native().storeStats()).toMatchObject({ handles: 0, buffers: 0 });
  const inWorkers = await workerTables();
  expect(Object.keys(inWorkers).length).toBe(2);
  expect(inWorkers, "tables left in the worker processes' stores").toEqual(
    Object.fromEntries(Object.keys(inWorkers).map((w) => [w, 0])),
  );
  const folder = exchangeFolder();
  expect(folder, "tables moved through the exchange folder").toBeDefined();
  expect(readdirSync(folder!), "files left in the exchange folder").toEqual([]);
}

describe("worker processes", () => {
  it("run a multi-stage pipeline to DuckDB's answer, with nothing left behind", async () => {
    expect(cluster.pool.names.every((w) => cluster.pool.isProcess(w))).toBe(true);
    expectSameRows(tableRows(await pipeline().compute({ cluster })), await duck.rows(SQL), "pipeline", true);
    await expectNothingLeft();
  });

  it("persist into the engine's store; a persisted partition stays in the worker process that made it, and leaves it on unpersist", async () => {
    const stored = await trips().persist({ cluster, partitions: 3 });
    const smallest = Math.min(...(stored.node as { handles: number[] }).handles.map((h) => native().tableBytes(h)));
    const moved = () => cluster.pool.held.moved.bytes;
    const scanOnly = stored.agg(count().alias("n"));
    const m0 = moved();
    expect((await scanOnly.compute({ cluster })).toRows()).toEqual([{ n: 4000 }]);
    const m1 = moved();
    expect((await scanOnly.compute({ cluster })).toRows()).toEqual([{ n: 4000 }]);
    const m2 = moved();
    // Runs over it move partial counts only: no persisted partition moves into a worker.
    expect(m1 - m0, "the first run's moves").toBeLessThan(smallest);
    expect(m2 - m1, "the second run's moves").toBeLessThan(smallest);
    expectSameRows(tableRows(await pipeline(stored).compute({ cluster })), await duck.rows(SQL), "persisted", true);
    const held = Object.values(await workerTables()).reduce((a, b) => a + b, 0);
    expect(held, "copies of the persisted partitions stay in the workers while persisted").toBeGreaterThan(0);
    expect(held, "each of the 3 partitions is kept by one worker at most").toBeLessThanOrEqual(3);
    // The dashboard counts what the worker processes hold with the engine's own.
    await cluster.pool.processStats(10_000); // fresh answers, whatever the machine's load
    const status = await cluster.clusterStatus();
    const engine = native().storeStats().handles;
    expect(status.store.tables).toBe(engine + held);
    expect(status.memory?.host.tables).toBeGreaterThanOrEqual(engine + held);
    stored.unpersist();
    // The workers drop their copies at once, with no run after (bounded wait for their answers).
    let left = held;
    for (let i = 0; i < 50 && left > 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      left = Object.values(await workerTables()).reduce((a, b) => a + b, 0);
    }
    expect(left, "copies left in the workers after unpersist").toBe(0);
    await expectNothingLeft();
  });

  it("killed mid-run: what the dead process held is recomputed from lineage, same answer", async () => {
    const expected = await duck.rows(SQL);
    for (const when of [1, 4, 8]) {
      let killed = false;
      let held = 0;
      const groups = new Map<string, number[]>();
      const t = await pipeline().compute({
        cluster,
        onProgress: (e: ProgressEvent) => {
          groups.set(e.group, [...(groups.get(e.group) ?? []), e.done]);
          const done = [...groups.values()].reduce((n, d) => n + d[d.length - 1], 0);
          if (!killed && done >= when) {
            killed = true;
            // The worker holding most finished outputs: its loss takes them.
            const [victim] = cluster.pool.names.sort(
              (a, b) => cluster.pool.held.heldBy(b) - cluster.pool.held.heldBy(a),
            );
            held = cluster.pool.held.heldBy(victim);
            void cluster.pool.kill(victim);
          }
        },
      });
      expect(killed).toBe(true);
      expectSameRows(tableRows(t), expected, `killed after ${when} tasks`, true);
      if (when === 8) {
        // The killed process held finished tasks' outputs: their groups' progress went back.
        expect(held, "the killed process held outputs").toBeGreaterThan(0);
        const wentBack = [...groups.values()].some((d) => d.some((x, i) => i > 0 && x < d[i - 1]));
        expect(wentBack, "some finished task ran again").toBe(true);
      }
      await expectNothingLeft();
      expect(cluster.pool.names.length).toBe(2);
    }
  });

  it("killed while the result is taken from it: the output task runs again elsewhere, same answer", async () => {
    const expected = await duck.rows(SQL);
    const held = cluster.pool.held;
    const toHost = held.toHost.bind(held);
    for (const how of ["compute", "persist"]) {
      let victim: string | undefined;
      // Fault injection: the worker holding the output dies as the engine asks it for a table.
      held.toHost = (ref) => {
        if (!victim && held.holder(ref)) {
          victim = held.holder(ref)!;
          void cluster.pool.kill(victim);
        }
        return toHost(ref);
      };
      try {
        const stored = how === "persist" ? await pipeline().persist({ cluster, partitions: 3 }) : undefined;
        const t = await (stored ?? pipeline()).compute({ cluster });
        stored?.unpersist();
        expect(victim, `${how}: a worker was killed as the result was taken`).toBeDefined();
        expectSameRows(tableRows(t), expected, `${how}: killed while the result was taken`, true);
      } finally {
        delete (held as { toHost?: unknown }).toHost;
      }
      expect(cluster.pool.names.length).toBe(2);
    }
    await expectNothingLeft();
  });

  it("a holder killed while a task's inputs move in: the copies that did arrive leave the worker too", async () => {
    const three = new LocalCluster({ workers: 3, workerProcesses: "all" });
    try {
      const held = three.pool.held;
      const place = held.place.bind(held);
      let killedAt: number | undefined;
      // Fault injection: the first move out of another process kills its holder; moves
      // asked for in the next second land late, after that one has failed.
      held.place = async (ref, worker, isProcess) => {
        const holder = held.holder(ref);
        if (killedAt === undefined && holder && holder !== worker) {
          killedAt = performance.now();
          void three.pool.kill(holder);
        } else if (killedAt !== undefined && performance.now() - killedAt < 1000)
          await new Promise((r) => setTimeout(r, 150));
        return place(ref, worker, isProcess);
      };
      const t = await pipeline().compute({ cluster: three });
      expect(killedAt, "a holder was killed as inputs moved").toBeDefined();
      expectSameRows(tableRows(t), await duck.rows(SQL), "holder killed during a move", true);
      await three.idle();
      expect(held.size).toBe(0);
      const stores = await three.pool.processStats(10_000);
      expect(Object.keys(stores).length).toBe(3);
      for (const [w, s] of Object.entries(stores)) expect(s.store.handles, `tables left in ${w}`).toBe(0);
    } finally {
      await three.close();
    }
  });

  it("write one file through the engine's file sink: the write tasks run in the engine's process", async () => {
    for (const format of ["csv", "parquet"] as const) {
      const out = join(dir, "..", `out-${process.pid}.${format}`);
      const summary =
        format === "csv"
          ? await pipeline().writeCsv(out, { cluster })
          : await pipeline().writeParquet(out, { cluster });
      const back = await duck.rows(
        format === "csv"
          ? `SELECT * FROM read_csv('${out}', header=true, columns={'k': 'BIGINT', 'n': 'BIGINT', 's': 'DOUBLE', 'md': 'DOUBLE', 'cmax': 'VARCHAR'})`
          : `SELECT * FROM '${out}'`,
      );
      const expected = await duck.rows(SQL);
      expect(summary.rows).toBe(expected.length);
      expectSameRows(back, expected, format, true);
      await expectNothingLeft();
    }
  });

  it("the cluster status answers while a worker process is busy, with its last figures", async () => {
    await cluster.pool.processStats(10_000);
    const busy = bag
      .fromItems([1, 2], { partitions: 2 })
      .map((x: number) => {
        const until = Date.now() + 3000;
        while (Date.now() < until); // a task that keeps its process busy for 3 s
        return x;
      })
      .compute({ cluster });
    await new Promise((r) => setTimeout(r, 300));
    const t0 = performance.now();
    const status = await cluster.clusterStatus();
    expect(performance.now() - t0, "not held up until the tasks end").toBeLessThan(2000);
    expect(status.workers.filter((w) => w.busy).length).toBe(2);
    expect(await busy).toEqual([1, 2]);
    await expectNothingLeft();
  });

  it("spill under their share of the memory limit: same answer, spills on the task stream", async () => {
    const rows = 300_000;
    const big = join(dir, "..", `big-${process.pid}.csv`);
    const lines = ["id,city,fare"];
    for (let i = 0; i < rows; i++) lines.push(`${(i * 7919) % rows},c${i % 97},${((i * 31) % 1000) / 10}`);
    writeFileSync(big, lines.join("\n") + "\n");
    const small = new LocalCluster({ workers: 2, workerProcesses: "all", memoryLimit: "2MB" });
    try {
      const t = await readCsv(big, { blocksize: 1 << 20 })
        .sort("id")
        .compute({ cluster: small });
      expectSameRows(tableRows(t), await duck.rows(`SELECT * FROM read_csv('${big}') ORDER BY id`), "sorted", true);
      const stats = Object.values(await small.pool.processStats(10_000));
      expect(stats.length).toBe(2);
      for (const s of stats) expect(s.memory.hostLimit, "each process's share of 2 MB").toBe(1_000_000);
      expect(
        stats.reduce((n, s) => n + s.memory.spilledCount, 0),
        "tables the worker processes spilled",
      ).toBeGreaterThan(0);
      const kinds = new Set(small.taskStream.read(0).spans.map((x) => x.kind));
      expect(kinds.has("spill"), "their spilling shows on the task stream").toBe(true);
    } finally {
      await small.close();
    }
  });

  it("a script keeps running while its worker process is busy, even when an answer to a question arrives then", async () => {
    // Task a runs; a stats question waits behind it; its answer comes right after task b
    // was sent. The busy process must still keep the script alive until b's result.
    const api = new URL("../../dist/engine/api/index.js", import.meta.url).href;
    const script = `import { delayed, LocalCluster } from ${JSON.stringify(api)};
      const cluster = new LocalCluster({ workers: 1, workerProcesses: "all" });
      const a = delayed((x) => { const u = Date.now() + 500; while (Date.now() < u); return x + 1; })(1);
      const b = delayed((y) => { const u = Date.now() + 1500; while (Date.now() < u); return y * 10; })(a);
      const run = b.compute({ cluster });
      await new Promise((r) => setTimeout(r, 200));
      await cluster.pool.processStats(5000);
      console.log(JSON.stringify(await run));
      await cluster.close();`;
    const r = await new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        ["--input-type=module", "-e", script],
        { timeout: 20_000 },
        (err, stdout, stderr) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, out: stdout, err: stderr }),
      );
      child.stdin?.end();
    });
    expect(r).toEqual({ code: 0, out: "20\n", err: "" });
  });

  it("an unknown workerProcesses value is BASIN_PLAN naming the ones there are", () => {
    expect(() => new LocalCluster({ workers: 1, workerProcesses: "threads" as never })).toThrow(
      expect.objectContaining({
        code: "BASIN_PLAN",
        message: expect.stringContaining('must be one of "none", "gpu", "all", got "threads"'),
      }),
    );
  });

  it("fail the run with the task's own error, and live on for the next run", async () => {
    const bad = join(dir, "..", `bad-${process.pid}.csv`);
    writeFileSync(bad, "a,b\n1,2\n3\n");
    await expect(readCsv(bad).compute({ cluster })).rejects.toMatchObject({ code: "BASIN_PARSE" });
    const names = cluster.pool.names;
    expectSameRows(tableRows(await pipeline().compute({ cluster })), await duck.rows(SQL), "after an error", true);
    expect(cluster.pool.names).toEqual(names);
    await expectNothingLeft();
  });
});
