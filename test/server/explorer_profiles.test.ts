// The data explorer's and the dashboard's engine side over a real WebSocket: full
// column profiles (distinct, mean, median, std, histograms, top values), distinct
// counts asked for separately, 2-D histograms of all rows for binned scatters — each
// checked against DuckDB over the same files — and the run history with explain()
// text and the local cluster's task stream.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalCluster } from "../../engine/api/index.js";
import type { Bins2d, ClusterStatus, ColumnProfile, ResultInfo, RunRecord } from "../../engine/common/rpc.js";
import { serve, type RunningServer } from "../../engine/server/http_server.js";
import { makeTrips, TRIPS_SQL_COLUMNS, writeTripsCsv } from "../helpers/data.js";
import { Duck } from "../helpers/oracle.js";
import { RpcClient } from "../helpers/rpc_client.js";

const ROWS = 3000;
let dir: string;
let server: RunningServer;
let cluster: LocalCluster;
let client: RpcClient;
let duck: Duck;
let trips: ResultInfo;

beforeAll(async () => {
  dir = writeTripsCsv(makeTrips(ROWS, 5), 3);
  writeFileSync(
    join(dir, "trips.ts"),
    `import { readCsv } from "basin";\nexport default readCsv("${dir}/*.csv", { blocksize: 8192, dtypes: { k: "int64", v: "int64" }, parseDates: ["day"] });\n`,
  );
  cluster = new LocalCluster({ workers: 2 });
  server = await serve({ root: dir, cluster });
  const origin = `http://127.0.0.1:${server.port}`;
  client = await RpcClient.connect(`ws://127.0.0.1:${server.port}/?token=${server.token}`, origin);
  duck = await Duck.open();
  await duck.run(`CREATE TABLE t AS SELECT * FROM read_csv('${dir}/*.csv', header=true, columns=${TRIPS_SQL_COLUMNS})`);
  const { runId } = await client.call<{ runId: string }>("run", "trips.ts");
  const e = await client.waitFor((x) => (x.type === "runFinished" || x.type === "runFailed") && x.runId === runId);
  if (e.type !== "runFinished") throw new Error(`run failed: ${JSON.stringify(e)}`);
  trips = e.result;
});

afterAll(async () => {
  if (trips) await client.call("release", trips.id);
  client.close();
  await server.close();
  await cluster.close();
  duck.close();
});

const one = async (sql: string) => (await duck.rows(sql))[0].map((v) => (typeof v === "bigint" ? Number(v) : v));

describe("explorer: column profiles", () => {
  it("a number column's distinct, mean, median and std are DuckDB's", async () => {
    for (const c of ["v", "f", "k"]) {
      const p = await client.call<ColumnProfile>("profile", trips.id, c);
      const [nulls, distinct, mean, median, std] = await one(
        `SELECT count(*) - count(${c}), count(DISTINCT ${c}), avg(${c}), median(${c}), stddev_samp(${c}) FROM t`,
      );
      expect(p.nulls).toBe(nulls);
      expect(p.mean).toBeCloseTo(mean as number, 9);
      expect(p.median).toBeCloseTo(median as number, 9);
      expect(p.std).toBeCloseTo(std as number, 9);
      // Integers of a narrow range come with their distinct count; many-valued floats leave it to countDistinct.
      if (c === "f") expect(p.distinct).toBeUndefined();
      else expect(p.distinct).toBe(distinct);
      expect(await client.call<number>("countDistinct", trips.id, c)).toBe(distinct);
    }
  });

  it("an integer column of few values gets one histogram bin per value, with DuckDB's counts", async () => {
    const p = await client.call<ColumnProfile>("profile", trips.id, "k");
    const rows = await duck.rows("SELECT k, count(*) FROM t WHERE k IS NOT NULL GROUP BY k ORDER BY k");
    const [lo, hi] = [Number(rows[0][0]), Number(rows.at(-1)![0])];
    expect(p.histogram!.counts).toHaveLength(hi - lo + 1);
    const want = new Array<number>(hi - lo + 1).fill(0);
    for (const [k, n] of rows) want[Number(k) - lo] = Number(n);
    expect(p.histogram!.counts).toEqual(want);
  });

  it("a date column's median is a date, and strings and bools count their distinct values", async () => {
    const day = await client.call<ColumnProfile>("profile", trips.id, "day");
    const [median, days] = await one(
      "SELECT CAST(quantile_cont(day::TIMESTAMP, 0.5) AS VARCHAR), count(DISTINCT day) FROM t",
    );
    expect(String(day.median)).toBe(String(median).slice(0, 10));
    expect(day.distinct).toBe(days);
    expect(day.mean).toBeUndefined();
    const city = await client.call<ColumnProfile>("profile", trips.id, "city");
    const flag = await client.call<ColumnProfile>("profile", trips.id, "flag");
    const [cities, flags] = await one("SELECT count(DISTINCT city), count(DISTINCT flag) FROM t");
    expect([city.distinct, flag.distinct]).toEqual([cities, flags]);
    expect(flag.top!.reduce((n, t) => n + t.count, 0) + flag.nulls).toBe(ROWS);
  });

  it("a column that does not exist is a clear error naming it", async () => {
    await expect(client.call("countDistinct", trips.id, "nope")).rejects.toThrow(/has no column "nope"/);
  });
});

describe("explorer: binned scatter", () => {
  it("bins every row with x and y on the workers; each cell's count is DuckDB's", async () => {
    const b = await client.call<Bins2d>("bins2d", trips.id, "v", "f", 10, 8);
    const [n, vmin, vmax, fmin, fmax] = await one(
      "SELECT count(*) FILTER (WHERE v IS NOT NULL AND f IS NOT NULL), min(v), max(v), min(f), max(f) FROM t",
    );
    expect(b.total).toBe(ROWS);
    expect(b.counted).toBe(n);
    expect(b.xExtent).toEqual([vmin, vmax]);
    expect(b.yExtent).toEqual([fmin, fmax]);
    // Cells centred on min … max: round half to even of (value − min) / width.
    const wx = ((vmax as number) - (vmin as number)) / 9,
      wy = ((fmax as number) - (fmin as number)) / 7;
    expect(b.xRange[0]).toBeCloseTo((vmin as number) - wx / 2, 9);
    expect(b.yRange[1]).toBeCloseTo((fmax as number) + wy / 2, 9);
    const cells = await duck.rows(
      `SELECT round_even((v - (${vmin})) / ${wx}, 0)::INT AS bx, round_even((f - (${fmin})) / ${wy}, 0)::INT AS by, count(*)
       FROM t WHERE v IS NOT NULL AND f IS NOT NULL GROUP BY ALL`,
    );
    const want = new Array<number>(80).fill(0);
    for (const [bx, by, c] of cells) want[Number(by) * 10 + Number(bx)] = Number(c);
    expect(b.counts).toEqual(want);
  });

  it("a zoomed view counts only the rows inside its ranges, into cells that tile them", async () => {
    const view = { x: [-200, 300], y: [0.5, 80] };
    const b = await client.call<Bins2d>("bins2d", trips.id, "v", "f", 5, 4, view);
    const [inside] = await one(
      `SELECT count(*) FROM t WHERE v BETWEEN ${view.x[0]} AND ${view.x[1]} AND f BETWEEN ${view.y[0]} AND ${view.y[1]}`,
    );
    expect(b.counted).toBe(inside);
    expect(b.total).toBe(ROWS);
    expect(b.xRange).toEqual(view.x);
    expect(b.yRange[0]).toBeCloseTo(view.y[0], 12);
    expect(b.yRange[1]).toBeCloseTo(view.y[1], 12);
    const cells = await duck.rows(
      `SELECT least(round_even((v - (-200 + 50)) / 100, 0), 4)::INT, least(round_even((f - (0.5 + 79.5 / 8)) / (79.5 / 4), 0), 3)::INT, count(*)
       FROM t WHERE v BETWEEN -200 AND 300 AND f BETWEEN 0.5 AND 80 GROUP BY ALL`,
    );
    const want = new Array<number>(20).fill(0);
    for (const [bx, by, c] of cells) want[Number(by) * 5 + Number(bx)] += Number(c);
    expect(b.counts).toEqual(want);
    await expect(client.call("bins2d", trips.id, "v", "f", 5, 4, { x: [3, 1], y: [0, 1] })).rejects.toThrow(
      /view needs x and y as \[low, high\] with low < high/,
    );
  });

  it("refuses a text axis and a bin count out of range, saying what to do", async () => {
    await expect(client.call("bins2d", trips.id, "city", "f", 10, 10)).rejects.toThrow(
      /"city" is string: a binned scatter needs numbers, dates or timestamps/,
    );
    await expect(client.call("bins2d", trips.id, "v", "f", 0, 10)).rejects.toThrow(
      /xBins must be an integer in 1\.\.1000/,
    );
  });
});

describe("dashboard: history and task stream", () => {
  it("remembers the run with its plan as explain() prints it", async () => {
    const runs = await client.call<RunRecord[]>("runHistory");
    const r = runs.find((x) => x.file === "trips.ts")!;
    expect(r.status).toBe("done");
    expect(r.tasks).toBeGreaterThan(0);
    expect(r.results[0].rows).toBe(ROWS);
    expect(r.results[0].explain).toMatch(/ScanCsv 3 files/);
  });

  it("streams each task's span once, on the worker that ran it, typed by what it did", async () => {
    const first = await client.call<ClusterStatus>("cluster", 0);
    expect(first.stream!.spans.length).toBeGreaterThan(0);
    const kinds = new Set(first.stream!.spans.map((s) => s.kind));
    expect(kinds.has("disk read")).toBe(true); // the CSV scans
    for (const s of first.stream!.spans) {
      expect(cluster.pool.names).toContain(s.worker);
      expect(s.end).toBeGreaterThanOrEqual(s.start);
      expect(s.end).toBeLessThanOrEqual(first.stream!.now);
    }
    // Nothing ran since: the cursor gives nothing new; a profile's plans add spans after it.
    const again = await client.call<ClusterStatus>("cluster", first.stream!.next);
    expect(again.stream!.spans).toEqual([]);
    await client.call("countDistinct", trips.id, "city");
    const after = await client.call<ClusterStatus>("cluster", first.stream!.next);
    expect(after.stream!.spans.length).toBeGreaterThan(0);
    expect(after.stream!.spans.every((s) => s.kind !== "disk read")).toBe(true); // the result is in memory
  });

  it("says why there is no GPU worker when there is none", async () => {
    const s = await client.call<ClusterStatus>("cluster");
    expect(s.stream).toBeUndefined();
    if (cluster.gpus.length === 0) expect(s.gpu!.why).toMatch(/CUDA|GPU/);
    else expect(s.gpu!.workers).toBe(cluster.gpus.length);
  });
});

describe("explorer: NaN and infinities", () => {
  it("profiles a float column holding NaN and ±inf (histogram over the finite values), and bins it in a scatter", async () => {
    writeFileSync(
      join(dir, "specials.ts"),
      `import { fromColumns } from "basin";\nexport default fromColumns({ i: [1, 2, 3, 4, 5, 6, 7], x: [1.5, Number.NaN, 2, Infinity, -Infinity, null, 2.5] }, { partitions: 3 });\n`,
    );
    const { runId } = await client.call<{ runId: string }>("run", "specials.ts");
    const e = await client.waitFor((x) => (x.type === "runFinished" || x.type === "runFailed") && x.runId === runId);
    if (e.type !== "runFinished") throw new Error(`run failed: ${JSON.stringify(e)}`);
    try {
      const p = await client.call<ColumnProfile>("profile", e.result.id, "x");
      expect(p.nulls).toBe(1);
      expect(p.histogram!.counts.reduce((a, b) => a + b, 0)).toBe(3); // 1.5, 2, 2.5
      expect(p.histogram!.edges.every((v) => Number.isFinite(v))).toBe(true);
      const b = await client.call<Bins2d>("bins2d", e.result.id, "i", "x", 4, 4);
      expect(b.counted).toBe(3);
    } finally {
      await client.call("release", e.result.id);
    }
  });
});
