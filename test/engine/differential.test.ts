// Every operation of the engine core against DuckDB, on generated data with nulls,
// unicode, a skewed key, empty and one-row partitions, read from CSV (many small
// blocks) and from in-memory columns; 1 and 4 workers must agree exactly.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { col, count, fromColumns, LocalCluster, readCsv, type DataFrame } from "../../engine/api/index.js";
import { native } from "../../engine/native/addon.js";
import { makeTrips, TRIPS_SQL_COLUMNS, writeTripsCsv, type Trips } from "../helpers/data.js";
import { Duck, expectSameRows, tableRows } from "../helpers/oracle.js";

const ROWS = 3000;
let data: Trips;
let dir: string;
let duck: Duck;
let one: LocalCluster;
let four: LocalCluster;

beforeAll(async () => {
  data = makeTrips(ROWS);
  dir = writeTripsCsv(data, 3);
  duck = await Duck.open();
  await duck.run(`CREATE TABLE t AS SELECT * FROM read_csv('${dir}/*.csv', header=true, columns=${TRIPS_SQL_COLUMNS})`);
  one = new LocalCluster({ workers: 1 });
  four = new LocalCluster({ workers: 4 });
});

afterAll(async () => {
  await one.close();
  await four.close();
  duck.close();
  expect(native().storeStats()).toMatchObject({ handles: 0, buffers: 0 });
});

const sources: Record<string, () => DataFrame> = {
  "readCsv, 3 files in ~2 KB blocks": () => readCsv(`${dir}/*.csv`, { blocksize: 2048, dtypes: { k: "int64", v: "int64" }, parseDates: ["day"] }),
  "fromColumns with empty and one-row partitions": () =>
    fromColumns(
      { ...data, day: data.day.map((d) => (d === null ? null : new Date(`${d}T00:00:00Z`))) },
      { partitions: [0, 1, ROWS - 4, 0, 1, 2, 0], types: { k: "int64", v: "int64", f: "float64", day: "date" } },
    ),
};

interface Case {
  name: string;
  basin: (t: DataFrame) => DataFrame;
  sql: string;
  ordered?: boolean;
}

const cases: Case[] = [
  { name: "filter with and/comparison", basin: (t) => t.filter(col("v").gt(0).and(col("city").ne("plain"))), sql: "SELECT * FROM t WHERE v > 0 AND city <> 'plain'" },
  { name: "filter with three-valued or", basin: (t) => t.filter(col("flag").or(col("v").lt(-500))), sql: "SELECT * FROM t WHERE flag OR v < -500" },
  { name: "filter with not", basin: (t) => t.filter(col("flag").not()), sql: "SELECT * FROM t WHERE NOT flag" },
  { name: "filter on dates and strings", basin: (t) => t.filter(col("day").ge("2024-02-01").and(col("city").le("Zürich"))), sql: "SELECT * FROM t WHERE day >= DATE '2024-02-01' AND city <= 'Zürich'" },
  { name: "filter eq and le", basin: (t) => t.filter(col("k").eq(1).or(col("f").le(-40))), sql: "SELECT * FROM t WHERE k = 1 OR f <= -40" },
  {
    name: "arithmetic",
    basin: (t) => t.select("rid", col("v").add(col("f")).alias("a"), col("v").sub(3).alias("b"), col("v").mul(col("k")).alias("c"), col("v").div(7).alias("d"), col("v").mod(7).alias("e"), col("f").neg().alias("g"), col("v").div(col("k")).alias("h"), col("v").mod(col("k")).alias("i")),
    sql: "SELECT rid, v + f, v - 3, v * k, v / 7, v % 7, -f, CASE WHEN k = 0 THEN NULL ELSE v / k END, CASE WHEN k = 0 THEN NULL ELSE v % k END FROM t",
  },
  {
    name: "null tests and fillNull",
    basin: (t) => t.select("rid", col("v").isNull().alias("a"), col("city").isNotNull().alias("b"), col("f").fillNull(0).alias("c"), col("city").fillNull("?").alias("d"), col("v").fillNull(col("f")).alias("e")),
    sql: "SELECT rid, v IS NULL, city IS NOT NULL, coalesce(f, 0), coalesce(city, '?'), coalesce(v::DOUBLE, f) FROM t",
  },
  {
    name: "casts",
    basin: (t) => t.select("rid", col("v").cast("float64").alias("a"), col("f").cast("int64").alias("b"), col("v").cast("string").alias("c"), col("flag").cast("int64").alias("d"), col("day").cast("string").alias("e"), col("day").cast("timestamp").alias("g")),
    sql: "SELECT rid, v::DOUBLE, f::BIGINT, v::VARCHAR, flag::BIGINT, day::VARCHAR, day::TIMESTAMP FROM t",
  },
  {
    name: "groupBy an int key with every aggregation",
    basin: (t) =>
      t.groupBy("k").agg(
        col("v").sum().alias("s"), col("f").mean().alias("m"), col("city").min().alias("mn"), col("day").max().alias("mx"),
        col("v").count().alias("c"), count().alias("n"), col("f").std().alias("sd"), col("v").var().alias("vr"),
        col("f").median().alias("md"), col("city").nUnique().alias("u"), col("v").first().alias("fv"), col("city").last().alias("lc"),
      ),
    sql: `SELECT k, sum(v), avg(f), min(city), max(day), count(v), count(*), stddev_samp(f), var_samp(v), median(f), count(DISTINCT city),
            first(v ORDER BY rid) FILTER (WHERE v IS NOT NULL), last(city ORDER BY rid) FILTER (WHERE city IS NOT NULL) FROM t GROUP BY k`,
  },
  {
    name: "groupBy two keys (int, unicode string), decomposable aggregations",
    basin: (t) => t.groupBy("k", "city").agg(col("v").sum().alias("s"), count().alias("n"), col("f").max().alias("mx"), col("f").std().alias("sd")),
    sql: "SELECT k, city, sum(v), count(*), max(f), stddev_samp(f) FROM t GROUP BY k, city",
  },
  {
    name: "groupBy a string key with median and nunique (shuffle)",
    basin: (t) => t.groupBy("city").agg(col("f").median().alias("md"), col("v").nUnique().alias("u"), col("v").first().alias("fv")),
    sql: "SELECT city, median(f), count(DISTINCT v), first(v ORDER BY rid) FILTER (WHERE v IS NOT NULL) FROM t GROUP BY city",
  },
  {
    name: "groupBy an expression key, with the agg object form",
    basin: (t) => t.groupBy(col("v").mod(3).alias("m"), "flag").agg({ f: ["sum", "min"], v: "mean" }),
    sql: "SELECT v % 3 AS m, flag, sum(f), min(f), avg(v) FROM t GROUP BY ALL",
  },
  {
    name: "reductions with select",
    basin: (t) => t.select(col("v").sum().alias("s"), col("f").mean().alias("m"), col("f").min().alias("mn"), col("city").max().alias("mx"), count().alias("n"), col("v").std().alias("sd"), col("f").median().alias("md")),
    sql: "SELECT sum(v), avg(f), min(f), max(city), count(*), stddev_samp(v), median(f) FROM t",
  },
  { name: "frame-wide sum", basin: (t) => t.sum(), sql: "SELECT sum(rid), sum(k), sum(v), sum(f) FROM t" },
  { name: "frame-wide count and nUnique", basin: (t) => t.select("k", "city").count(), sql: "SELECT count(k), count(city) FROM t" },
  { name: "aggregation over no rows", basin: (t) => t.filter(col("v").gt(10_000)).select(col("v").sum().alias("s"), count().alias("n"), col("f").mean().alias("m")), sql: "SELECT sum(v), count(*), avg(f) FROM t WHERE v > 10000" },
  { name: "groupBy over no rows", basin: (t) => t.filter(col("v").gt(10_000)).groupBy("k").agg(count().alias("n")), sql: "SELECT k, count(*) FROM t WHERE v > 10000 GROUP BY k" },
  { name: "head keeps partition order", basin: (t) => t.head(7), sql: "SELECT * FROM t ORDER BY rid LIMIT 7", ordered: true },
  { name: "head after filter and withColumns", basin: (t) => t.filter(col("k").eq(1)).withColumns({ v: col("v").mul(2), w: col("f").add(1) }).head(25), sql: "SELECT rid, k, city, v * 2 AS v, f, flag, day, f + 1 AS w FROM t WHERE k = 1 ORDER BY rid LIMIT 25", ordered: true },
];

describe.each(Object.entries(sources))("%s", (_, source) => {
  it.each(cases)("$name matches DuckDB, with 1 and 4 workers alike", async (c) => {
    const frame = c.basin(source());
    const expected = await duck.rows(c.sql);
    const a = await frame.compute({ cluster: one });
    const b = await frame.compute({ cluster: four });
    expectSameRows(tableRows(a), expected, c.name, c.ordered);
    expect(tableRows(b)).toEqual(tableRows(a));
    expect(b.schema).toEqual(a.schema);
  });
});
