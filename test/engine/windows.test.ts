// Window functions against DuckDB's window aggregates (a row-id column fixes the
// order: ORDER BY rid), on data with nulls, unicode and skewed group keys, read from
// CSV in many small blocks and from columns with empty and one-row partitions, on 1
// and 4 workers. Results are compared in order: windows must keep the frame's order.
import { describe, expect, it } from "vitest";
import { col, fromColumns, readCsv, type DataFrame } from "../../engine/api/index.js";
import { expectSameRows, tableRows } from "../helpers/oracle.js";
import { tripsFixture } from "../helpers/trips_fixture.js";

const ROWS = 3000;
const fx = tripsFixture({ rows: ROWS, seed: 11, partitions: [0, 1, ROWS - 7, 0, 1, 2, 0, 3] });

/** `frame` over window `w` (DuckDB), guarded by the rolling minPeriods rule: enough non-null values. */
const rolling = (agg: string, x: string, n: number, minPeriods: number, over = "") => {
  const w = `(${over} ORDER BY rid ROWS BETWEEN ${n - 1} PRECEDING AND CURRENT ROW)`;
  return `CASE WHEN count(${x}) OVER ${w} >= ${minPeriods} THEN ${agg}(${x}) OVER ${w} END`;
};
const RUNNING = "(ORDER BY rid ROWS UNBOUNDED PRECEDING)";
const byK = (frame: string) => `(PARTITION BY k ORDER BY rid ${frame})`;

interface Case {
  name: string;
  basin: (t: DataFrame) => DataFrame;
  sql: string;
}

const cases: Case[] = [
  {
    name: "cumulative sum/min/max/count over ints, floats and dates",
    basin: (t) =>
      t.select(
        "rid",
        col("v").cumSum().alias("sv"),
        col("f").cumSum().alias("sf"),
        col("v").cumMin().alias("minv"),
        col("f").cumMax().alias("maxf"),
        col("day").cumMax().alias("maxday"),
        col("city").cumCount().alias("nc"),
      ),
    sql: `SELECT rid, sum(v) OVER ${RUNNING}, sum(f) OVER ${RUNNING}, min(v) OVER ${RUNNING}, max(f) OVER ${RUNNING}, max(day) OVER ${RUNNING}, count(city) OVER ${RUNNING} FROM t ORDER BY rid`,
  },
  {
    name: "shift back and ahead on strings, ints and bools",
    basin: (t) =>
      t.select(
        "rid",
        col("city").shift().alias("c1"),
        col("v").shift(3).alias("v3"),
        col("flag").shift(-2).alias("b2"),
        col("city").shift(-1).alias("cn"),
        col("v").shift(0).alias("v0"),
      ),
    sql: "SELECT rid, lag(city, 1) OVER (ORDER BY rid), lag(v, 3) OVER (ORDER BY rid), lead(flag, 2) OVER (ORDER BY rid), lead(city, 1) OVER (ORDER BY rid), v FROM t ORDER BY rid",
  },
  {
    name: "diff back and ahead",
    basin: (t) =>
      t.select("rid", col("v").diff().alias("d1"), col("f").diff(2).alias("d2"), col("v").diff(-1).alias("dn")),
    sql: "SELECT rid, v - lag(v, 1) OVER (ORDER BY rid), f - lag(f, 2) OVER (ORDER BY rid), v - lead(v, 1) OVER (ORDER BY rid) FROM t ORDER BY rid",
  },
  {
    name: "rolling sum/mean/min/max with and without minPeriods",
    basin: (t) =>
      t.select(
        "rid",
        col("v").rolling(3).sum().alias("s3"),
        col("f").rolling(5, { minPeriods: 2 }).mean().alias("m5"),
        col("v").rolling(4).min().alias("min4"),
        col("f").rolling(10, { minPeriods: 1 }).max().alias("max10"),
        col("v").rolling(1).mean().alias("m1"),
        col("day").rolling(7, { minPeriods: 3 }).min().alias("day7"),
        col("v").rolling(40, { minPeriods: 20 }).sum().alias("s40"),
      ),
    sql: `SELECT rid, ${rolling("sum", "v", 3, 3)}, ${rolling("avg", "f", 5, 2)}, ${rolling("min", "v", 4, 4)}, ${rolling("max", "f", 10, 1)}, ${rolling("avg", "v", 1, 1)}, ${rolling("min", "day", 7, 3)}, ${rolling("sum", "v", 40, 20)} FROM t ORDER BY rid`,
  },
  {
    name: "over(k): every window per skewed group with a null key",
    basin: (t) =>
      t.select(
        "rid",
        col("v").cumSum().over("k").alias("s"),
        col("city").shift().over("k").alias("c1"),
        col("f").rolling(3, { minPeriods: 1 }).mean().over("k").alias("m3"),
        col("v").diff(-2).over("k").alias("dn"),
        col("f").cumMin().over("k").alias("mn"),
        col("v").rolling(2).max().over("k").alias("mx"),
      ),
    sql: `SELECT rid, sum(v) OVER ${byK("ROWS UNBOUNDED PRECEDING")}, lag(city) OVER ${byK("")}, ${rolling("avg", "f", 3, 1, "PARTITION BY k")}, v - lead(v, 2) OVER ${byK("")}, min(f) OVER ${byK("ROWS UNBOUNDED PRECEDING")}, ${rolling("max", "v", 2, 2, "PARTITION BY k")} FROM t ORDER BY rid`,
  },
  {
    name: "over unicode strings and two keys; windows with different keys side by side",
    basin: (t) =>
      t
        .withColumns({
          a: col("v").cumSum().over("city"),
          b: col("f").shift(2).over("city", "flag"),
          c: col("v").cumCount(),
        })
        .select("rid", "a", "b", "c"),
    sql: `SELECT rid, sum(v) OVER (PARTITION BY city ORDER BY rid ROWS UNBOUNDED PRECEDING), lag(f, 2) OVER (PARTITION BY city, flag ORDER BY rid), count(v) OVER ${RUNNING} FROM t ORDER BY rid`,
  },
  {
    name: "windows inside expressions, over expressions and nested windows",
    basin: (t) =>
      t.select(
        "rid",
        col("v").sub(col("v").shift(2)).alias("d2"),
        col("v").mul(2).cumSum().add(1).alias("s2"),
        col("v").diff().cumSum().alias("nested"),
        col("f").rolling(3, { minPeriods: 1 }).sum().over(col("k").mod(3)).alias("mod3"),
        col("v").cumMax().sub(col("v").cumMin()).over("k").alias("range"),
      ),
    sql: `SELECT rid, v - lag(v, 2) OVER (ORDER BY rid), sum(v * 2) OVER ${RUNNING} + 1, sum(d) OVER ${RUNNING}, ${rolling("sum", "f", 3, 1, "PARTITION BY k % 3")}, max(v) OVER ${byK("ROWS UNBOUNDED PRECEDING")} - min(v) OVER ${byK("ROWS UNBOUNDED PRECEDING")} FROM (SELECT *, v - lag(v) OVER (ORDER BY rid) AS d FROM t) ORDER BY rid`,
  },
  {
    name: "a filter after a window is not pushed below it",
    basin: (t) =>
      t
        .withColumns({ cs: col("v").cumSum(), r: col("f").rolling(2).mean().over("k") })
        .filter(col("v").gt(0))
        .select("rid", "cs", "r"),
    sql: `SELECT rid, cs, r FROM (SELECT *, sum(v) OVER ${RUNNING} AS cs, ${rolling("avg", "f", 2, 2, "PARTITION BY k")} AS r FROM t) WHERE v > 0 ORDER BY rid`,
  },
  {
    name: "windows after a filter see only the kept rows",
    basin: (t) =>
      t
        .filter(col("city").ne("plain"))
        .select("rid", col("v").cumSum().alias("cs"), col("v").shift().over("city").alias("p")),
    sql: `SELECT rid, sum(v) OVER ${RUNNING}, lag(v) OVER (PARTITION BY city ORDER BY rid) FROM t WHERE city <> 'plain' ORDER BY rid`,
  },
];

describe.each(Object.keys(fx.sources))("windows from %s", (name) => {
  const source = () => fx.sources[name]();
  it.each(cases)("$name", async ({ basin, sql, name }) => {
    const expected = await fx.duck.rows(sql);
    const frame = basin(source());
    const a = await frame.compute({ cluster: fx.clusters.one });
    const b = await frame.compute({ cluster: fx.clusters.four });
    expectSameRows(tableRows(a), expected, `${name} (1 worker)`, true);
    expectSameRows(tableRows(b), expected, `${name} (4 workers)`, true);
  });

  it("follows the order of a preceding sort (range-partitioned across tasks)", async () => {
    const frame = source()
      .sort(["k", "rid"], { descending: [true, false] })
      .select(
        "rid",
        "k",
        col("v").cumSum().alias("cs"),
        col("f").rolling(4, { minPeriods: 2 }).max().alias("r"),
        col("city").shift(-1).over("k").alias("nxt"),
      );
    const w = "(ORDER BY k DESC NULLS LAST, rid ROWS UNBOUNDED PRECEDING)";
    const r = "(ORDER BY k DESC NULLS LAST, rid ROWS BETWEEN 3 PRECEDING AND CURRENT ROW)";
    const expected = await fx.duck.rows(
      `SELECT rid, k, sum(v) OVER ${w}, CASE WHEN count(f) OVER ${r} >= 2 THEN max(f) OVER ${r} END, lead(city) OVER (PARTITION BY k ORDER BY rid) FROM t ORDER BY k DESC NULLS LAST, rid`,
    );
    expectSameRows(
      tableRows(await frame.compute({ cluster: fx.clusters.one })),
      expected,
      "after sort (1 worker)",
      true,
    );
    expectSameRows(
      tableRows(await frame.compute({ cluster: fx.clusters.four })),
      expected,
      "after sort (4 workers)",
      true,
    );
  });
});

describe("windows on small frames", () => {
  it("an empty frame and a one-row frame", async () => {
    const types = { g: "string", x: "int64" } as const;
    const empty = fromColumns({ g: [] as string[], x: [] as number[] }, { types, partitions: [0, 0] });
    const exprs = {
      s: col("x").cumSum(),
      p: col("x").shift(),
      r: col("x").rolling(2, { minPeriods: 1 }).mean(),
      o: col("x").cumSum().over("g"),
    };
    const e = await empty.withColumns(exprs).compute({ cluster: fx.clusters.four });
    expect(e.numRows).toBe(0);
    expect(e.columnNames).toEqual(["g", "x", "s", "p", "r", "o"]);
    const single = fromColumns({ g: ["ü"], x: [5] }, { types, partitions: [0, 1, 0] });
    expect(tableRows(await single.withColumns(exprs).compute({ cluster: fx.clusters.four }))).toEqual([
      ["ü", 5, 5, null, 5, 5],
    ]);
  });

  it("carries reach across many tiny partitions (a window longer than several partitions)", async () => {
    const x = Array.from({ length: 40 }, (_, i) => (i % 7 === 3 ? null : i * 1.5));
    const frame = fromColumns(
      { rid: x.map((_, i) => i), x },
      { partitions: [1, 0, 2, 1, 0, 0, 5, 1, 1, 3, 26], types: { x: "float64" } },
    );
    await fx.duck.run(
      `CREATE TABLE tiny AS SELECT * FROM (VALUES ${x.map((v, i) => `(${i}, ${v ?? "NULL"})`).join(", ")}) AS v(rid, x)`,
    );
    const expected = await fx.duck.rows(
      `SELECT rid, ${rolling("sum", "x", 6, 3)}, lag(x, 4) OVER (ORDER BY rid), lead(x, 5) OVER (ORDER BY rid), max(x) OVER ${RUNNING} FROM tiny ORDER BY rid`,
    );
    const out = frame.select(
      "rid",
      col("x").rolling(6, { minPeriods: 3 }).sum().alias("r"),
      col("x").shift(4).alias("p"),
      col("x").shift(-5).alias("n"),
      col("x").cumMax().alias("m"),
    );
    expectSameRows(tableRows(await out.compute({ cluster: fx.clusters.four })), expected, "tiny partitions", true);
  });

  it("orders NaN after every number in min/max, as DuckDB does", async () => {
    const x = [3, Number.NaN, 1, null, 5, 2, Number.NaN, 0];
    const frame = fromColumns({ rid: x.map((_, i) => i), x }, { partitions: [2, 3, 3], types: { x: "float64" } });
    await fx.duck.run(
      `CREATE TABLE nan AS SELECT * FROM (VALUES ${x.map((v, i) => `(${i}, ${v === null ? "NULL" : Number.isNaN(v) ? "'NaN'::DOUBLE" : v}::DOUBLE)`).join(", ")}) AS v(rid, x)`,
    );
    const expected = await fx.duck.rows(
      `SELECT rid, min(x) OVER ${RUNNING}, max(x) OVER ${RUNNING}, ${rolling("min", "x", 2, 1)}, ${rolling("max", "x", 3, 1)} FROM nan ORDER BY rid`,
    );
    const out = frame.select(
      "rid",
      col("x").cumMin().alias("a"),
      col("x").cumMax().alias("b"),
      col("x").rolling(2, { minPeriods: 1 }).min().alias("c"),
      col("x").rolling(3, { minPeriods: 1 }).max().alias("d"),
    );
    expectSameRows(tableRows(await out.compute({ cluster: fx.clusters.four })), expected, "NaN", true);
  });

  it("lets infinities leave a rolling float sum again", async () => {
    const x = [1, Infinity, 2, 3, 4, -Infinity, 5, 6, 7];
    const out = await fromColumns({ x }, { partitions: [3, 3, 3] })
      .select(col("x").rolling(2).sum().alias("s"))
      .compute({ cluster: fx.clusters.one });
    expect(tableRows(out).map((r) => r[0])).toEqual([null, Infinity, Infinity, 5, 7, -Infinity, -Infinity, 11, 13]);
  });
});

describe("window plans", () => {
  const frame = () => readCsv(`${fx.dir}/*.csv`, { dtypes: { k: "int64", v: "int64" } });

  it("explain() shows the window node, with filters kept above it", () => {
    const text = frame()
      .withColumns({ cs: col("v").cumSum().over("k") })
      .filter(col("v").gt(0))
      .explain();
    const lines = text.split("\n").map((l) => l.trim());
    // The filter passes the projection but stops right above the window.
    const filter = lines.indexOf('Filter (col("v") > 0)');
    expect(lines[filter + 1]).toBe('Window cumSum(col("v")) over [col("k")] as __window0');
    expect(lines[filter + 2]).toMatch(/^ScanCsv/);
  });

  it("projection pushdown keeps a window's inputs and drops windows nobody reads", () => {
    const used = frame()
      .withColumns({ cs: col("v").cumSum().over("k"), unused: col("f").shift() })
      .select("rid", "cs")
      .explain();
    expect(used).toContain("columns=[rid, k, v]");
    expect(used).not.toContain("shift");
    const none = frame()
      .withColumns({ unused: col("f").shift() })
      .select("rid")
      .explain();
    expect(none).not.toContain("Window");
  });

  it("gives the same answers with the optimizer off", async () => {
    const f = frame()
      .withColumns({ cs: col("v").cumSum(), p: col("city").shift().over("k") })
      .filter(col("k").eq(1))
      .select("rid", "cs", "p");
    const on = await f.compute({ cluster: fx.clusters.four });
    const off = await f.compute({
      cluster: fx.clusters.four,
      optimize: { predicatePushdown: false, projectionPushdown: false },
    });
    expect(tableRows(on)).toEqual(tableRows(off));
  });
});
