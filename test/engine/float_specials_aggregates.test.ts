// Aggregates and rolling windows over NaN, ±inf and huge doubles against DuckDB: NaN
// is the largest value (so a max that sees one is NaN, a min skips it unless the group
// holds nothing else, and medians and quantiles rank it last), and a rolling sum whose
// window overflows to inf comes back once the huge value leaves it.
import { describe, expect, it } from "vitest";
import { col, fromColumns } from "../../engine/api/index.js";
import { describeExprCases } from "../helpers/expr_cases.js";

const NAN = Number.NaN;
const INF = Number.POSITIVE_INFINITY;
// Group g: 0 all NaN; 1 numbers and a NaN; 2 numbers, +inf and nulls; 3 -inf and a NaN;
// 4 numbers only; 5 nulls only.
const groups: [number, (number | null)[]][] = [
  [0, [NAN, NAN]],
  [1, [3, NAN, 1, 2]],
  [2, [5, null, INF, -2, null]],
  [3, [-INF, NAN, 7]],
  [4, [4, -0, 0, 9, 1.5]],
  [5, [null, null]],
];
const g: number[] = [];
const x: (number | null)[] = [];
for (const [k, values] of groups)
  for (const v of values) {
    g.push(k);
    x.push(v);
  }
const id = g.map((_, i) => i);
// Rolling windows over huge values: 1e308 + 1e308 overflows to inf, then leaves.
// A small value beside a huge one that leaves (1e40, 0.1) must come back whole.
const big = [
  1e308,
  1e308,
  1,
  2,
  3,
  -1e308,
  -1e308,
  5,
  NAN,
  6,
  7,
  INF,
  8,
  9,
  1e40,
  1e20,
  0.1,
  0.2,
  0.3,
  1e30,
  1e15,
  0.1,
];
const cols = { id, g, x, r: id.map((i) => big[i % big.length]!) };
const types = { id: "int64", g: "int64", x: "float64", r: "float64" } as const;

describeExprCases("aggregates and rolling sums over NaN, infinities and huge doubles", cols, types, [
  {
    name: "min, max, median and quantiles per group",
    basin: (t) =>
      t
        .groupBy("g")
        .agg(
          col("x").min().alias("mn"),
          col("x").max().alias("mx"),
          col("x").median().alias("md"),
          col("x").quantile(0).alias("q0"),
          col("x").quantile(0.25).alias("q25"),
          col("x").quantile(1).alias("q1"),
        ),
    sql: "SELECT g, min(x), max(x), quantile_cont(x, 0.5), quantile_cont(x, 0), quantile_cont(x, 0.25), quantile_cont(x, 1) FROM t GROUP BY g",
  },
  {
    name: "min and max of the whole column",
    basin: (t) => t.agg(col("x").min().alias("mn"), col("x").max().alias("mx")),
    sql: "SELECT min(x), max(x) FROM t",
  },
  {
    name: "rolling sums and means of 2 and 1 rows",
    basin: (t) =>
      t
        .sort("id")
        .select(
          "id",
          col("r").rolling(2).sum().alias("s2"),
          col("r").rolling(1).sum().alias("s1"),
          col("r").rolling(3).mean().alias("m3"),
        ),
    sql: `SELECT id,
        CASE WHEN count(r) OVER w2 >= 2 THEN sum(r) OVER w2 END,
        sum(r) OVER (ORDER BY id ROWS 0 PRECEDING),
        CASE WHEN count(r) OVER w3 >= 3 THEN avg(r) OVER w3 END
      FROM t WINDOW w2 AS (ORDER BY id ROWS 1 PRECEDING), w3 AS (ORDER BY id ROWS 2 PRECEDING)`,
  },
]);

describe("std and var over NaN and infinities", () => {
  it("are NaN, as NumPy gives (DuckDB raises), never 0; grouped and over the whole frame alike", async () => {
    const df = fromColumns(
      { g: [1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3], x: [1, 2, NAN, 4, 1, 2, INF, 4, 1, 2, 4] },
      { partitions: [3, 0, 5, 3] },
    );
    const whole = await df.agg(col("x").std().alias("s"), col("x").var().alias("v")).compute();
    expect([whole.column("s")[0], whole.column("v")[0]]).toEqual([NAN, NAN]);
    const t = await df.groupBy("g").agg(col("x").std().alias("s"), col("x").var().alias("v")).sort("g").compute();
    expect(t.column("s").slice(0, 2)).toEqual([NAN, NAN]);
    expect(t.column("v")[2]).toBeCloseTo(7 / 3, 12);
  });
});
