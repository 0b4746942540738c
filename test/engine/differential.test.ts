// Every operation of the engine core against DuckDB, on generated data with nulls,
// unicode, a skewed key, empty and one-row partitions, read from CSV (many small
// blocks) and from in-memory columns; 1 and 4 workers must agree exactly.
import { col, count } from "../../engine/api/index.js";
import { describeTripsCases, tripsFixture, type TripsCase } from "../helpers/trips_fixture.js";

const fx = tripsFixture({ rows: 3000, seed: 7 });

const cases: TripsCase[] = [
  {
    name: "filter with and/comparison",
    basin: (t) => t.filter(col("v").gt(0).and(col("city").ne("plain"))),
    sql: "SELECT * FROM t WHERE v > 0 AND city <> 'plain'",
  },
  {
    name: "filter with three-valued or",
    basin: (t) => t.filter(col("flag").or(col("v").lt(-500))),
    sql: "SELECT * FROM t WHERE flag OR v < -500",
  },
  { name: "filter with not", basin: (t) => t.filter(col("flag").not()), sql: "SELECT * FROM t WHERE NOT flag" },
  {
    name: "filter on dates and strings",
    basin: (t) => t.filter(col("day").ge("2024-02-01").and(col("city").le("Zürich"))),
    sql: "SELECT * FROM t WHERE day >= DATE '2024-02-01' AND city <= 'Zürich'",
  },
  {
    name: "filter eq and le",
    basin: (t) => t.filter(col("k").eq(1).or(col("f").le(-40))),
    sql: "SELECT * FROM t WHERE k = 1 OR f <= -40",
  },
  {
    name: "arithmetic",
    basin: (t) =>
      t.select(
        "rid",
        col("v").add(col("f")).alias("a"),
        col("v").sub(3).alias("b"),
        col("v").mul(col("k")).alias("c"),
        col("v").div(7).alias("d"),
        col("v").mod(7).alias("e"),
        col("f").neg().alias("g"),
        col("v").div(col("k")).alias("h"),
        col("v").mod(col("k")).alias("i"),
      ),
    sql: "SELECT rid, v + f, v - 3, v * k, v / 7, v % 7, -f, CASE WHEN k = 0 THEN NULL ELSE v / k END, CASE WHEN k = 0 THEN NULL ELSE v % k END FROM t",
  },
  {
    name: "null tests and fillNull",
    basin: (t) =>
      t.select(
        "rid",
        col("v").isNull().alias("a"),
        col("city").isNotNull().alias("b"),
        col("f").fillNull(0).alias("c"),
        col("city").fillNull("?").alias("d"),
        col("v").fillNull(col("f")).alias("e"),
      ),
    sql: "SELECT rid, v IS NULL, city IS NOT NULL, coalesce(f, 0), coalesce(city, '?'), coalesce(v::DOUBLE, f) FROM t",
  },
  {
    name: "casts",
    basin: (t) =>
      t.select(
        "rid",
        col("v").cast("float64").alias("a"),
        col("f").cast("int64").alias("b"),
        col("v").cast("string").alias("c"),
        col("flag").cast("int64").alias("d"),
        col("day").cast("string").alias("e"),
        col("day").cast("timestamp").alias("g"),
      ),
    sql: "SELECT rid, v::DOUBLE, f::BIGINT, v::VARCHAR, flag::BIGINT, day::VARCHAR, day::TIMESTAMP FROM t",
  },
  {
    name: "groupBy an int key with every aggregation",
    basin: (t) =>
      t
        .groupBy("k")
        .agg(
          col("v").sum().alias("s"),
          col("f").mean().alias("m"),
          col("city").min().alias("mn"),
          col("day").max().alias("mx"),
          col("v").count().alias("c"),
          count().alias("n"),
          col("f").std().alias("sd"),
          col("v").var().alias("vr"),
          col("f").median().alias("md"),
          col("city").nUnique().alias("u"),
          col("v").first().alias("fv"),
          col("city").last().alias("lc"),
        ),
    sql: `SELECT k, sum(v), avg(f), min(city), max(day), count(v), count(*), stddev_samp(f), var_samp(v), median(f), count(DISTINCT city),
            first(v ORDER BY rid) FILTER (WHERE v IS NOT NULL), last(city ORDER BY rid) FILTER (WHERE city IS NOT NULL) FROM t GROUP BY k`,
  },
  {
    name: "groupBy two keys (int, unicode string), decomposable aggregations",
    basin: (t) =>
      t
        .groupBy("k", "city")
        .agg(col("v").sum().alias("s"), count().alias("n"), col("f").max().alias("mx"), col("f").std().alias("sd")),
    sql: "SELECT k, city, sum(v), count(*), max(f), stddev_samp(f) FROM t GROUP BY k, city",
  },
  {
    name: "groupBy a string key with median and nunique (shuffle)",
    basin: (t) =>
      t.groupBy("city").agg(col("f").median().alias("md"), col("v").nUnique().alias("u"), col("v").first().alias("fv")),
    sql: "SELECT city, median(f), count(DISTINCT v), first(v ORDER BY rid) FILTER (WHERE v IS NOT NULL) FROM t GROUP BY city",
  },
  {
    name: "groupBy an expression key, with the agg object form",
    basin: (t) => t.groupBy(col("v").mod(3).alias("m"), "flag").agg({ f: ["sum", "min"], v: "mean" }),
    sql: "SELECT v % 3 AS m, flag, sum(f), min(f), avg(v) FROM t GROUP BY ALL",
  },
  {
    name: "reductions with select",
    basin: (t) =>
      t.select(
        col("v").sum().alias("s"),
        col("f").mean().alias("m"),
        col("f").min().alias("mn"),
        col("city").max().alias("mx"),
        count().alias("n"),
        col("v").std().alias("sd"),
        col("f").median().alias("md"),
      ),
    sql: "SELECT sum(v), avg(f), min(f), max(city), count(*), stddev_samp(v), median(f) FROM t",
  },
  { name: "frame-wide sum", basin: (t) => t.sum(), sql: "SELECT sum(rid), sum(k), sum(v), sum(f) FROM t" },
  {
    name: "frame-wide count and nUnique",
    basin: (t) => t.select("k", "city").count(),
    sql: "SELECT count(k), count(city) FROM t",
  },
  {
    name: "aggregation over no rows",
    basin: (t) =>
      t.filter(col("v").gt(10_000)).select(col("v").sum().alias("s"), count().alias("n"), col("f").mean().alias("m")),
    sql: "SELECT sum(v), count(*), avg(f) FROM t WHERE v > 10000",
  },
  {
    name: "groupBy over no rows",
    basin: (t) => t.filter(col("v").gt(10_000)).groupBy("k").agg(count().alias("n")),
    sql: "SELECT k, count(*) FROM t WHERE v > 10000 GROUP BY k",
  },
  {
    name: "head keeps partition order",
    basin: (t) => t.head(7),
    sql: "SELECT * FROM t ORDER BY rid LIMIT 7",
    ordered: true,
  },
  {
    name: "head after filter and withColumns",
    basin: (t) =>
      t
        .filter(col("k").eq(1))
        .withColumns({ v: col("v").mul(2), w: col("f").add(1) })
        .head(25),
    sql: "SELECT rid, k, city, v * 2 AS v, f, flag, day, f + 1 AS w FROM t WHERE k = 1 ORDER BY rid LIMIT 25",
    ordered: true,
  },
];

describeTripsCases(fx, cases);
