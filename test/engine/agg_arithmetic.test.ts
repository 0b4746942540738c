// Arithmetic on aggregations inside agg() and select(): the output of
// col("v").sum().div(col("f").sum()) equals DuckDB's sum(v) / sum(f), grouped and
// over the whole frame, with the same aggregation reused and group keys read; a
// column read outside any aggregation is a clear BASIN_PLAN error at the call.
import { describe, expect, it } from "vitest";
import { col, count, fromColumns, lit } from "../../engine/api/index.js";
import { thrown } from "../helpers/errors.js";
import { describeTripsCases, tripsFixture, type TripsCase } from "../helpers/trips_fixture.js";

const fx = tripsFixture({ rows: 2000, seed: 23 });

const cases: TripsCase[] = [
  {
    name: "grouped ratio of sums, a plain sum and a scaled count",
    basin: (t) =>
      t
        .groupBy("city")
        .agg(
          col("v").sum().div(col("f").sum()).alias("ratio"),
          col("v").sum().alias("total"),
          count().mul(2).alias("twice"),
        ),
    sql: "SELECT city, sum(v) / sum(f), sum(v), count(*) * 2 FROM t GROUP BY city",
  },
  {
    name: "a key read next to aggregations, and a spread of max minus min",
    basin: (t) =>
      t
        .groupBy("k")
        .agg(col("k").mul(1000).add(count()).alias("tagged"), col("f").max().sub(col("f").min()).alias("spread")),
    sql: "SELECT k, k * 1000 + count(*), max(f) - min(f) FROM t GROUP BY k",
  },
  {
    name: "whole-frame agg() and select() computing on aggregates",
    basin: (t) =>
      t.select(col("f").sum().div(7).alias("per_day"), col("v").mean().add(col("v").std()).alias("upper"), nullShare()),
    sql: "SELECT sum(f) / 7, avg(v) + stddev_samp(v), 100.0 * (count(*) - count(v)) / count(*) FROM t",
  },
];

function nullShare() {
  return lit(100)
    .mul(count().sub(col("v").count()))
    .div(count())
    .alias("null_share");
}

describeTripsCases(fx, cases, { exactAcrossWorkers: false });

describe("agg() arithmetic errors", () => {
  const t = fromColumns({ k: [1, 1, 2], x: [1.5, 2.5, 3] });
  it("a column read outside any aggregation names itself and the fix", () => {
    const e = thrown(() => t.groupBy("k").agg(col("x").sum().add(col("x")).alias("bad")), "BASIN_PLAN");
    expect(e.message).toMatch(/"bad" reads column "x" outside an aggregation/);
    expect(e.location).toMatch(/agg_arithmetic\.test\.ts:\d+/);
  });
  it("an output that aggregates nothing is refused", () => {
    const e = thrown(() => t.groupBy("k").agg(lit(1).alias("one")), "BASIN_PLAN");
    expect(e.message).toMatch(/aggregates nothing/);
  });
});
