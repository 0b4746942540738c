// Statistical aggregations against DuckDB: quantile (quantile_cont), corr as a grouped
// and combinable aggregation, describe() and the frame-level correlation matrix. Data
// with nulls, a key holding half the rows, empty and one-row partitions; 1 and 4
// workers must agree exactly.
import { describe, expect, it } from "vitest";
import { col, corr, fromColumns, type DataFrame } from "../../engine/api/index.js";
import { expectSameRows, tableRows } from "../helpers/oracle.js";
import { describeTripsCases, tripsFixture, type TripsCase } from "../helpers/trips_fixture.js";

const ROWS = 3000;
const fx = tripsFixture({ rows: ROWS, seed: 5 });

const NUMERIC = ["rid", "k", "v", "f"];
const STATS = ["count", "null_count", "mean", "std", "min", "25%", "50%", "75%", "max"];

/** describe() as DuckDB computes it: numeric statistics as doubles, dates as ISO strings. */
async function describeSql(): Promise<unknown[][]> {
  const num = (s: string, c: string) =>
    ({
      count: `count(${c})`,
      null_count: `count(*) - count(${c})`,
      mean: `avg(${c})`,
      std: `stddev_samp(${c})`,
      min: `min(${c})`,
      "25%": `quantile_cont(${c}, 0.25)`,
      "50%": `quantile_cont(${c}, 0.5)`,
      "75%": `quantile_cont(${c}, 0.75)`,
      max: `max(${c})`,
    })[s]!;
  const days = "(day - DATE '1970-01-01')";
  const rows: unknown[][] = [];
  for (const s of STATS) {
    const [r] = await fx.duck.rows(
      `SELECT ${NUMERIC.map((c) => `(${num(s, c)})::DOUBLE`).join(", ")}, ${num(s, days)}::DOUBLE FROM t`,
    );
    const d = r[NUMERIC.length] as number | null;
    // Day numbers back to dates, rounding half to even like the cast.
    const even = (x: number) => (Math.abs(x % 1) === 0.5 ? 2 * Math.round(x / 2) : Math.round(x));
    const iso = (x: number) => new Date(even(x) * 86_400_000).toISOString().slice(0, 10);
    const day = d === null || s === "std" ? null : s === "count" || s === "null_count" ? String(d) : iso(d);
    rows.push([s, ...r.slice(0, NUMERIC.length), day]);
  }
  return rows;
}

const cases: TripsCase[] = [
  {
    name: "quantile per skewed int key: interior, 0 and 1",
    basin: (t) =>
      t
        .groupBy("k")
        .agg(
          col("f").quantile(0.1).alias("a"),
          col("v").quantile(0.9).alias("b"),
          col("f").quantile(0).alias("c"),
          col("v").quantile(1).alias("d"),
        ),
    sql: "SELECT k, quantile_cont(f, 0.1), quantile_cont(v, 0.9), quantile_cont(f, 0.0), quantile_cont(v, 1.0)::DOUBLE FROM t GROUP BY k",
  },
  {
    name: "quantile of an expression per unicode string key, with median alongside",
    basin: (t) =>
      t
        .groupBy("city")
        .agg(col("v").mul(col("f")).quantile(0.37).alias("q"), col("f").median().alias("m"), col("v").sum().alias("s")),
    sql: "SELECT city, quantile_cont(v * f, 0.37), median(f), sum(v) FROM t GROUP BY city",
  },
  {
    name: "quantile over the whole frame",
    basin: (t) => t.select(col("f").quantile(0.75).alias("a"), col("v").quantile(0.5).alias("b")),
    sql: "SELECT quantile_cont(f, 0.75), quantile_cont(v, 0.5) FROM t",
  },
  {
    name: "quantile over no rows is null",
    basin: (t) => t.filter(col("v").gt(5000)).select(col("f").quantile(0.3).alias("a")),
    sql: "SELECT quantile_cont(f, 0.3) FROM t WHERE v > 5000",
  },
  {
    name: "corr per group (q9's shape): nulls skip pairs, constant groups are NaN, no pairs null",
    basin: (t) =>
      t.groupBy("k", "flag").agg(corr("v", "f").alias("r"), corr("rid", "v").alias("r2"), corr("k", "f").alias("r3")),
    sql: "SELECT k, flag, corr(v, f), corr(rid, v), corr(k, f) FROM t GROUP BY k, flag",
  },
  {
    name: "corr of expressions with a large offset stays accurate",
    basin: (t) =>
      t.groupBy("city").agg(corr(col("f").add(1e6), col("v").mul(3)).alias("r"), col("f").count().alias("n")),
    sql: "SELECT city, corr(f + 1e6, v * 3), count(f) FROM t GROUP BY city",
  },
  {
    name: "corr over the whole frame",
    basin: (t) => t.agg(corr("v", "f").alias("r"), corr("f", "f").alias("self")),
    sql: "SELECT corr(v, f), corr(f, f) FROM t",
  },
  { name: "describe()", basin: (t) => t.describe(), sql: describeSql, ordered: true },
  {
    name: "corr() matrix of the numeric columns",
    basin: (t) => t.corr(),
    sql: `SELECT * EXCLUDE (i) FROM (${NUMERIC.map((a, i) => `SELECT ${i} AS i, '${a}' AS column, ${NUMERIC.map((b) => `corr(${a}, ${b})`).join(", ")} FROM t`).join(" UNION ALL ")}) ORDER BY i`,
    ordered: true,
  },
];

describeTripsCases(fx, cases, { exactAcrossWorkers: false });

describe("result types", () => {
  it("quantile and corr are float64; describe has a string statistic column first; corr() a string column first", () => {
    const df = fromColumns(
      { a: [1, 2, 3], b: [0.5, 1, null], s: ["x", "y", "z"], d: [new Date(0), null, new Date(86_400_000)] },
      { types: { d: "date" } },
    );
    expect(df.agg(col("a").quantile(0.5).alias("q"), corr("a", "b").alias("r")).schema).toEqual([
      { name: "q", type: "float64" },
      { name: "r", type: "float64" },
    ]);
    expect(df.describe().schema).toEqual([
      { name: "statistic", type: "string" },
      { name: "a", type: "float64" },
      { name: "b", type: "float64" },
      { name: "d", type: "string" },
    ]);
    expect(df.corr().schema).toEqual([
      { name: "column", type: "string" },
      { name: "a", type: "float64" },
      { name: "b", type: "float64" },
    ]);
  });

  it("combines corr partial states across many partitions to the single-partition answer", async () => {
    const n = 4000;
    const x = Array.from({ length: n }, (_, i) => 1e8 + Math.sin(i) * 10);
    const y = x.map((v, i) => v * 0.5 + Math.cos(i * 7));
    const g = x.map((_, i) => i % 3);
    const many = fromColumns({ g, x, y }, { partitions: 40 });
    const single = fromColumns({ g, x, y });
    const q = (df: DataFrame) => df.groupBy("g").agg(corr("x", "y").alias("r")).sort("g");
    const a = await q(many).compute({ cluster: fx.clusters.four });
    const b = await q(single).compute({ cluster: fx.clusters.one });
    expectSameRows(tableRows(a), tableRows(b), "partials vs one pass", true);
  });
});
