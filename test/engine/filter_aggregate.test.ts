// A filter feeding an aggregation runs as one step with it (native/src/ops/filter_aggregate.h):
// when the filter keeps most rows, the projection runs over every row and the group-by
// leaves the dropped rows out instead of cutting every column first. Both ways (most
// rows kept, few kept) must give DuckDB's answer, with nulls in keys and values, unicode
// keys, every aggregation that has partial states (the others run after a shuffle, not
// in the filter's task), and empty and one-row partitions.
import { expect, it } from "vitest";
import { col, count, fromColumns, lit } from "../../engine/api/index.js";
import { describeTripsCases, tripsFixture, type TripsCase } from "../helpers/trips_fixture.js";

const fx = tripsFixture({ rows: 3000, seed: 23 });

const MOST = col("v").isNull().or(col("v").gt(-900)); // ~95% of rows
const FEW = col("v").gt(800); // ~9%

const everyAgg = [
  col("v").sum().alias("s"),
  col("w").mean().alias("m"),
  col("city").min().alias("mn"),
  col("day").max().alias("mx"),
  col("v").count().alias("c"),
  count().alias("n"),
  col("w").std().alias("sd"),
  col("v").var().alias("vr"),
  col("v").first().alias("fv"),
  col("city").last().alias("lc"),
];
const everySql = `sum(v), avg(w), min(city), max(day), count(v), count(*), stddev_samp(w), var_samp(v),
  first(v ORDER BY rid) FILTER (WHERE v IS NOT NULL), last(city ORDER BY rid) FILTER (WHERE city IS NOT NULL)`;

const cases: TripsCase[] = [];
for (const [kept, predicate, where] of [
  ["most rows kept", MOST, "v IS NULL OR v > -900"],
  ["few rows kept", FEW, "v > 800"],
] as const) {
  cases.push(
    {
      name: `${kept}: projected, grouped by a unicode string key with nulls, every decomposable aggregation`,
      basin: (t) =>
        t
          .filter(predicate)
          .withColumns({ w: col("f").mul(lit(1).sub(col("f").div(100))) })
          .groupBy("city")
          .agg(...everyAgg),
      sql: `SELECT city, ${everySql} FROM (SELECT *, f * (1 - f / 100) AS w FROM t WHERE ${where}) GROUP BY city`,
    },
    {
      name: `${kept}: grouped by an int key and a bool`,
      basin: (t) =>
        t
          .filter(predicate)
          .withColumns({ w: col("f").add(col("v")) })
          .groupBy("k", "flag")
          .agg(col("w").sum().alias("s"), col("w").mean().alias("m"), count().alias("n")),
      sql: `SELECT k, flag, sum(f + v), avg(f + v), count(*) FROM t WHERE ${where} GROUP BY k, flag`,
    },
    {
      name: `${kept}: one group (no keys), no projection`,
      basin: (t) => t.filter(predicate).agg(col("f").sum().alias("s"), col("v").max().alias("mx"), count().alias("n")),
      sql: `SELECT sum(f), max(v), count(*) FROM t WHERE ${where}`,
    },
  );
}
cases.push({
  name: "a filter that keeps no row still gives the one group of a reduction",
  basin: (t) => t.filter(col("v").gt(5000)).agg(col("f").sum().alias("s"), count().alias("n")),
  sql: "SELECT sum(f), count(*) FROM t WHERE v > 5000",
});

describeTripsCases(fx, cases, { exactAcrossWorkers: false });

it("a strict cast in the projection never sees the rows the filter drops", async () => {
  const words = ["12", "oops", "7", "x", "40"];
  const frame = fromColumns({ s: Array.from({ length: 1000 }, (_, i) => words[i % 5]) }, { partitions: [0, 1, 999] });
  const numbers = frame.filter(col("s").ne("oops").and(col("s").ne("x")));
  const t = await numbers
    .withColumns({ n: col("s").cast("int64") })
    .agg(col("n").sum().alias("total"), count().alias("rows"))
    .compute();
  expect(t.toRows()).toEqual([{ total: 200 * (12 + 7 + 40), rows: 600 }]);
});
