// Parquet both ways against DuckDB: files DuckDB writes read identically in Basin
// (several types with nulls, unicode, dates, timestamps, many row groups, globs),
// files Basin writes read identically in DuckDB; row groups are pruned by
// statistics and columns by projection, without changing any answer.
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { col, count, fromColumns, readParquet, type DataFrame } from "../../engine/api/index.js";
import { makeTrips, TRIPS_SQL_COLUMNS, writeTripsCsv, type Trips } from "../helpers/data.js";
import { Duck, expectSameRows, tableRows } from "../helpers/oracle.js";
import { expectOnBoth, twoClusters } from "../helpers/clusters.js";

const ROWS = 9000;
const COLS = "rid, k, city, v, f, flag, day, ts";
let data: Trips;
let out: string;
let duck: Duck;
const clusters = twoClusters();

beforeAll(async () => {
  data = makeTrips(ROWS, 11);
  const csv = writeTripsCsv(data, 1);
  out = mkdtempSync(join(tmpdir(), "basin-parquet-"));
  duck = await Duck.open();
  // A timestamp with microseconds, null where day is null.
  await duck.run(
    `CREATE TABLE t AS SELECT *, day::TIMESTAMP + to_microseconds(rid * 1000003) AS ts FROM read_csv('${csv}/*.csv', header=true, columns=${TRIPS_SQL_COLUMNS})`,
  );
  // Sorted by rid, about 2048 rows per row group (DuckDB's smallest), so ~5 groups.
  await duck.run(`COPY (SELECT * FROM t ORDER BY rid) TO '${out}/duck.parquet' (FORMAT parquet, ROW_GROUP_SIZE 1000)`);
  for (let i = 0; i < 3; i++)
    await duck.run(
      `COPY (SELECT * FROM t WHERE rid % 3 = ${i} ORDER BY rid) TO '${out}/part-${i}.parquet' (FORMAT parquet, ROW_GROUP_SIZE 1000)`,
    );
});

afterAll(() => duck.close());

/** Same rows as DuckDB with 1 and 4 workers, and the same result on both. */
async function expectDuck(frame: DataFrame, sql: string, label: string, ordered = false): Promise<void> {
  await expectOnBoth(clusters, frame, await duck.rows(sql), label, { ordered });
}

describe("reading Parquet written by DuckDB", () => {
  it("maps the footer's types to Basin's", () => {
    expect(readParquet(`${out}/duck.parquet`).schema).toEqual([
      { name: "rid", type: "int64" },
      { name: "k", type: "int64" },
      { name: "city", type: "string" },
      { name: "v", type: "int64" },
      { name: "f", type: "float64" },
      { name: "flag", type: "bool" },
      { name: "day", type: "date" },
      { name: "ts", type: "timestamp" },
    ]);
  });

  it("reads every row and type identically, one partition per row group", async () => {
    const df = readParquet(`${out}/duck.parquet`, { blocksize: 1 });
    await expectDuck(df, `SELECT ${COLS} FROM t`, "all rows");
    const t = await df.compute({ cluster: clusters.four });
    expect(t.info.tasks).toBeGreaterThan(4); // ≥ 5 row-group scans plus the concat
  });

  it("merges small row groups into one partition by default", async () => {
    const t = await readParquet(`${out}/duck.parquet`).compute({ cluster: clusters.one });
    expect(t.info.tasks).toBe(1);
    expect(t.numRows).toBe(ROWS);
  });

  it("reads a glob of files in order, with filters and aggregations", async () => {
    const df = readParquet(`${out}/part-*.parquet`, { blocksize: 1 });
    await expectDuck(df, `SELECT ${COLS} FROM t`, "glob");
    await expectDuck(
      df
        .filter(col("city").ne("plain").and(col("ts").ge("2024-01-20T00:00:00")))
        .groupBy("city")
        .agg(col("v").sum().alias("s"), count().alias("n"), col("ts").max().alias("mx")),
      "SELECT city, sum(v), count(*), max(ts) FROM t WHERE city <> 'plain' AND ts >= TIMESTAMP '2024-01-20' GROUP BY city",
      "glob + filter + groupBy",
    );
  });

  it("reads only the projected columns", async () => {
    const q = readParquet(`${out}/duck.parquet`).filter(col("f").gt(10)).select("city", col("v").mul(2).alias("v2"));
    expect(q.explain()).toContain("columns=[city, v, f]");
    await expectDuck(q, "SELECT city, v * 2 FROM t WHERE f > 10", "projection");
  });

  it("the columns option picks columns in the given order", async () => {
    const df = readParquet(`${out}/duck.parquet`, { columns: ["ts", "rid"] });
    expect(df.columns).toEqual(["ts", "rid"]);
    await expectDuck(df, "SELECT ts, rid FROM t", "columns option");
  });
});

describe("row-group pruning", () => {
  it("a filter on the sorted column reads fewer row groups and still matches DuckDB", async () => {
    const base = readParquet(`${out}/duck.parquet`, { blocksize: 1 });
    const q = base.filter(col("rid").lt(1500));
    const plan = q.explain();
    const [, kept, total] = /row groups: (\d+) of (\d+)/.exec(plan) ?? [];
    expect(Number(total)).toBeGreaterThanOrEqual(4);
    expect(Number(kept)).toBe(1);
    await expectDuck(q, `SELECT ${COLS} FROM t WHERE rid < 1500`, "pruned");
    const pruned = await q.compute({ cluster: clusters.one });
    const full = await base.compute({ cluster: clusters.one });
    expect(pruned.info.tasks).toBeLessThan(full.info.tasks);
    // Switched off, every row group is read and the answer is the same.
    const unpruned = await q.compute({ cluster: clusters.one, optimize: { rowGroupPruning: false } });
    expect(unpruned.info.tasks).toBe(full.info.tasks + 0);
    expect(tableRows(unpruned)).toEqual(tableRows(pruned));
  });

  it("and/or, between, equality, strings and dates prune only what cannot match", async () => {
    const df = readParquet(`${out}/duck.parquet`, { blocksize: 1 });
    const cases: [DataFrame, string, number][] = [
      [df.filter(col("rid").ge(3000).and(col("rid").le(3100))), "rid >= 3000 AND rid <= 3100", 1],
      [df.filter(col("rid").eq(5).or(col("rid").gt(8500))), "rid = 5 OR rid > 8500", 2],
      [df.filter(col("rid").lt(0)), "rid < 0", 0],
      [df.filter(col("city").eq("Zürich").and(col("rid").lt(100))), "city = 'Zürich' AND rid < 100", 1],
      [df.filter(col("day").ge("2024-01-15").and(col("rid").ge(8000))), "day >= DATE '2024-01-15' AND rid >= 8000", 2],
      [df.filter(col("v").isNull().or(col("f").gt(1e9))), "v IS NULL OR f > 1e9", -1],
    ];
    for (const [q, where, groups] of cases) {
      const kept = Number(/row groups: (\d+) of/.exec(q.explain())?.[1]);
      if (groups >= 0) expect(kept, where).toBe(groups);
      await expectDuck(q, `SELECT ${COLS} FROM t WHERE ${where}`, where);
    }
  });
});

describe("writing Parquet that DuckDB reads", () => {
  const withTs = () => ({ ...data, day: data.day.map((d) => (d === null ? null : new Date(`${d}T00:00:00Z`))) });

  it("from columns with empty and one-row partitions: same rows and types in DuckDB", async () => {
    const df = fromColumns(withTs(), {
      partitions: [0, 1, ROWS - 4, 0, 1, 2, 0],
      types: { k: "int64", v: "int64", f: "float64", day: "date" },
    });
    const path = join(out, "basin.parquet");
    const summary = await df.writeParquet(path, { cluster: clusters.four });
    expect(summary).toMatchObject({ path, rows: ROWS });
    expect(summary.bytes).toBeGreaterThan(0);
    const types = await duck.rows(
      `SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('${path}'))`,
    );
    expect(types).toEqual([
      ["rid", "BIGINT"],
      ["k", "BIGINT"],
      ["city", "VARCHAR"],
      ["v", "BIGINT"],
      ["f", "DOUBLE"],
      ["flag", "BOOLEAN"],
      ["day", "DATE"],
    ]);
    expectSameRows(
      await duck.rows(`SELECT * FROM read_parquet('${path}')`),
      await duck.rows("SELECT rid, k, city, v, f, flag, day FROM t"),
      "basin → duckdb",
    );
    expect(readdirSync(out).filter((f) => f.includes("partial"))).toEqual([]);
  });

  it("a read → write round trip keeps timestamps with microseconds, in order, over several row groups", async () => {
    const path = join(out, "roundtrip.parquet");
    await readParquet(`${out}/duck.parquet`, { blocksize: 1 }).writeParquet(path, {
      cluster: clusters.four,
      rowGroupSize: 1000,
      compression: "zstd",
    });
    // Row groups of at most 1000 rows; they never span the partitions the workers encoded apart.
    const groups = await duck.rows(
      `SELECT count(DISTINCT row_group_id), max(row_group_num_rows) FROM parquet_metadata('${path}')`,
    );
    const n = Number(groups[0][0]);
    expect(n).toBeGreaterThanOrEqual(9);
    expect(Number(groups[0][1])).toBeLessThanOrEqual(1000);
    const us = "epoch_us(ts)";
    expectSameRows(
      await duck.rows(`SELECT rid, ${us}, city FROM read_parquet('${path}')`),
      await duck.rows(`SELECT rid, ${us}, city FROM t ORDER BY rid`),
      "round trip",
      true,
    );
    // And Basin reads its own file back identically, one partition per row group.
    const back = await readParquet(path, { blocksize: 1 }).compute({ cluster: clusters.four });
    expect(back.info.tasks).toBe(n + 1);
    expectSameRows(tableRows(back), await duck.rows(`SELECT ${COLS} FROM t ORDER BY rid`), "basin reads basin", true);
  });

  it("an empty frame writes a file with the schema and no rows", async () => {
    const path = join(out, "empty.parquet");
    const summary = await readParquet(`${out}/duck.parquet`)
      .filter(col("rid").lt(0))
      .select("rid", "city", "ts")
      .writeParquet(path, { compression: "uncompressed" });
    expect(summary.rows).toBe(0);
    expect(await duck.rows(`SELECT count(*) FROM read_parquet('${path}')`)).toEqual([[0n]]);
    const back = readParquet(path);
    expect(back.schema).toEqual([
      { name: "rid", type: "int64" },
      { name: "city", type: "string" },
      { name: "ts", type: "timestamp" },
    ]);
    expect((await back.compute({ cluster: clusters.one })).numRows).toBe(0);
  });
});
