// Group-bys with many groups: a single fixed-width key without nulls is matched by its
// hash alone (Mix64 is a bijection, native/src/ops/groupby.cc IdTable), so the keys
// that hash alike by design must still fall in the right groups: the extremes of
// int64, -0.0 and 0.0, NaN, dates before 1970. DuckDB counts the same groups.
import { afterAll, beforeAll, expect, it } from "vitest";
import { col, count, readParquet } from "../../engine/api/index.js";
import { makeTempDir, removeDir } from "../helpers/cli.js";
import { Duck, tableRows } from "../helpers/oracle.js";

const ROWS = 300_000;
let duck: Duck;
let dir: string;
const ints: bigint[] = [];
const floats: number[] = [];
const days: string[] = [];
beforeAll(async () => {
  const edge = [-(2n ** 63n), 2n ** 63n - 1n, 0n, -1n, 1n];
  const fl = [0, -0, NaN, Infinity, -Infinity, 1e-300, -1e300];
  for (let i = 0; i < ROWS; i++) {
    ints.push(i % 10 === 0 ? edge[i % 5] : BigInt(((i * 7919) % 100_003) - 50_000) * 1_000_003n);
    floats.push(i % 10 === 0 ? fl[(i / 10) % fl.length] : ((i * 104_729) % 50_021) / 7);
    days.push(new Date(Date.UTC(1900, 0, 1 + ((i * 31) % 60_000))).toISOString().slice(0, 10));
  }
  duck = await Duck.open();
  await duck.run("CREATE TABLE t (i BIGINT, f DOUBLE, d DATE)");
  const values = (lo: number, hi: number) =>
    Array.from(
      { length: hi - lo },
      (_, j) =>
        `(${ints[lo + j]}, ${Number.isNaN(floats[lo + j]) ? "'NaN'" : Object.is(floats[lo + j], -0) ? "-0.0" : floats[lo + j] === Infinity ? "'Infinity'" : floats[lo + j] === -Infinity ? "'-Infinity'" : floats[lo + j]}, DATE '${days[lo + j]}')`,
    ).join(",");
  for (let lo = 0; lo < ROWS; lo += 20_000) await duck.run(`INSERT INTO t VALUES ${values(lo, lo + 20_000)}`);
  dir = makeTempDir();
  await duck.run(`COPY t TO '${dir}/t.parquet' (FORMAT parquet, ROW_GROUP_SIZE 50000)`);
});
afterAll(() => {
  duck.close();
  removeDir(dir);
});

it("groups ~100k int64, float64 and date keys, extremes, -0.0 and NaN included, as DuckDB does", async () => {
  const frame = readParquet(`${dir}/t.parquet`);
  for (const [key, sql] of [
    ["i", "SELECT i, count(*) FROM t GROUP BY i"],
    ["f", "SELECT f, count(*) FROM t GROUP BY f"],
    ["d", "SELECT d, count(*) FROM t GROUP BY d"],
  ] as const) {
    const got = await frame.groupBy(key).agg(count().alias("n")).compute();
    const want = await duck.rows(sql);
    expect(got.numRows, key).toBeGreaterThan(40_000);
    // Counts by the key's text (NaN and ±Infinity tie in expectSameRows' sort).
    const counts = (rows: unknown[][]) =>
      new Map(rows.map(([k, n]) => [k instanceof Date ? k.toISOString() : String(k), Number(n)]));
    expect(counts(tableRows(got)), `groupBy ${key}`).toEqual(counts(want));
    const distinct = await frame.agg(col(key).nUnique().alias("u")).compute();
    expect(distinct.toRows()[0].u, `nUnique ${key}`).toBe(want.length);
  }
});
