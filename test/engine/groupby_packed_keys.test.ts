// Several group keys, or one key of short strings, are packed into one integer per row
// (native/src/ops/packed_keys.cc) and grouped by an array when they span few values
// or by one hashed integer; keys that do not fit 64 bits (wide int64 ranges, strings of
// 8+ bytes, floats) group as before. Few groups are summed in four interleaved copies
// of their accumulators. Every grouping here, nulls, empty and multi-byte strings,
// dates before 1970 and filtered rows included, counts and sums as DuckDB's.
import { afterAll, beforeAll, it } from "vitest";
import { col, count, readParquet } from "../../engine/api/index.js";
import { makeTempDir, removeDir } from "../helpers/cli.js";
import { Duck, expectSameRows, tableRows } from "../helpers/oracle.js";

let duck: Duck;
let dir: string;

beforeAll(async () => {
  duck = await Duck.open();
  dir = makeTempDir();
  await duck.run(`CREATE TABLE t AS SELECT
      CASE WHEN i % 17 = 0 THEN NULL ELSE i % 13 END AS a,
      CASE WHEN i % 11 = 0 THEN NULL ELSE ['', 'A', 'N', 'R', 'é', 'ABCDEFG', 'zz'][1 + i % 7] END AS b,
      DATE '1969-12-25' + CAST(i % 40 AS INTEGER) AS c,
      CASE WHEN i % 5 = 0 THEN NULL ELSE i % 2 = 0 END AS d,
      CASE WHEN i % 3 = 0 THEN -4611686018427387904 ELSE 4611686018427387903 - i % 5 END AS e,
      ['SHORT', 'LONGER STRING', 'MAIL'][1 + i % 3] AS f,
      ['A', 'N', 'R'][1 + (i // 7) % 3] AS g,
      ['F', 'O'][1 + (i // 5) % 2] AS h,
      CASE WHEN i % 19 = 0 THEN NULL ELSE (i * 7919) % 1000 - 500 END AS x,
      CAST(i * 0.25 AS DOUBLE) AS y
    FROM range(60000) r(i)`);
  await duck.run(`COPY t TO '${dir}/t.parquet' (FORMAT parquet, ROW_GROUP_SIZE 10000)`);
});
afterAll(() => {
  duck.close();
  removeDir(dir);
});

const GROUPINGS: string[][] = [
  ["g", "h"], // Q1's flags: a 16-bit span, grouped by an array
  ["a", "d"], // small integers and bools with nulls: an array
  ["b"], // one short-string key with nulls, "" and "é"
  ["a", "b", "c", "d"], // ~31 bits: one hashed integer
  ["c", "g"],
  ["a", "e"], // e spans 2^63: does not pack
  ["b", "f"], // f has 13-byte strings: does not pack
  ["f"],
  ["y", "g"], // a float key: does not pack
];

it("groups packed keys as DuckDB does, every grouping and aggregation", async () => {
  const frame = readParquet(`${dir}/t.parquet`, { blocksize: 1 });
  for (const keys of GROUPINGS) {
    const got = await frame
      .groupBy(...keys)
      .agg(count().alias("n"), col("x").sum().alias("s"), col("y").sum().alias("sy"), col("x").mean().alias("m"))
      .compute();
    const k = keys.join(", ");
    expectSameRows(
      tableRows(got),
      await duck.rows(`SELECT ${k}, count(*), sum(x), sum(y), avg(x) FROM t GROUP BY ${k}`),
      `groupBy ${k}`,
    );
  }
});

it("groups the rows a filter keeps (the one-step filter and aggregation) as DuckDB does", async () => {
  const frame = readParquet(`${dir}/t.parquet`, { blocksize: 1 }).filter(col("x").gt(-400));
  for (const keys of [["g", "h"], ["a", "b", "c", "d"], ["b"]]) {
    const got = await frame
      .groupBy(...keys)
      .agg(count().alias("n"), col("x").sum().alias("s"), col("d").count().alias("nd"))
      .compute();
    const k = keys.join(", ");
    expectSameRows(
      tableRows(got),
      await duck.rows(`SELECT ${k}, count(*), sum(x), count(d) FROM t WHERE x > -400 GROUP BY ${k}`),
      `filtered groupBy ${k}`,
    );
  }
});
