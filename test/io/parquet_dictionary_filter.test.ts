// A filter right after a Parquet scan runs while decoding: conditions on one string
// column are tested once per dictionary entry, and only the kept rows' strings are
// gathered. The rows are DuckDB's for the same SQL: nulls, unicode, a column whose
// later row groups fall back from dictionary to PLAIN pages, conditions across
// columns, and conditions no row meets.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { col, lit, readParquet, type Expr } from "../../engine/api/index.js";
import { LocalCluster } from "../../engine/cluster/local.js";
import { Duck, expectSameRows, tableRows } from "../helpers/oracle.js";

const dir = mkdtempSync(join(tmpdir(), "basin-dict-filter-"));
const file = join(dir, "d.parquet");
let duck: Duck;
let cluster: LocalCluster;

beforeAll(async () => {
  cluster = new LocalCluster({ workers: 2 });
  duck = await Duck.open();
  // s: 7 values and nulls (dictionary pages throughout); t: 9 values for the first
  // 12,000 rows, then every row its own (DuckDB falls back to PLAIN pages there).
  await duck.run(`CREATE TABLE d AS SELECT i,
      CASE WHEN i % 17 = 0 THEN NULL ELSE ['a', 'b', 'Zürich', '東京', 'Zoo', '', 'b 7'][i % 7 + 1] END AS s,
      CASE WHEN i < 12000 THEN 'tag' || (i % 9)::VARCHAR ELSE 'u' || i::VARCHAR || 'ß' END AS t,
      CASE WHEN i % 13 = 0 THEN NULL ELSE (i * 7919) % 1000 END AS n
    FROM range(30000) r(i)`);
  await duck.run(`COPY d TO '${file}' (FORMAT parquet, ROW_GROUP_SIZE 4096)`);
});

afterAll(async () => {
  duck.close();
  await cluster.close();
  rmSync(dir, { recursive: true, force: true });
});

const cases: [string, Expr, string][] = [
  ["an equality", col("s").eq("Zürich"), "s = 'Zürich'"],
  ["a list and a number", col("s").isIn(["a", "東京", ""]).and(col("n").gt(500)), "s IN ('a', '東京', '') AND n > 500"],
  ["an OR on one column, nulls kept", col("s").str.startsWith("Z").or(col("s").isNull()), "s LIKE 'Z%' OR s IS NULL"],
  ["a negation (null rows drop out)", col("s").eq("b").not(), "NOT (s = 'b')"],
  ["a null filled first", col("s").fillNull("none").eq("none"), "coalesce(s, 'none') = 'none'"],
  ["dictionary then PLAIN pages", col("t").str.contains("7").and(col("s").ne("a")), "contains(t, '7') AND s <> 'a'"],
  ["two string columns compared", col("s").eq(col("t")).or(col("t").eq("tag3")), "s = t OR t = 'tag3'"],
  ["no row", col("s").eq("nowhere").and(col("n").ge(0)), "s = 'nowhere' AND n >= 0"],
  [
    "numbers alone (strings gathered for the rows kept)",
    col("n").ge(100).and(col("i").lt(29_000)),
    "n >= 100 AND i < 29000",
  ],
  ["most rows kept, then numbers", col("s").ne("a").and(col("n").lt(990)), "s <> 'a' AND n < 990"],
  ["few rows kept, then numbers", col("s").eq("Zoo").and(col("n").lt(500)), "s = 'Zoo' AND n < 500"],
  ["strings and numbers in one condition", col("s").eq("b").or(col("n").gt(900)), "s = 'b' OR n > 900"],
  ["every row", col("s").eq("x").or(lit(true)), "true"],
  // A strict cast's column is decoded too (the process crashed reading it undecoded).
  ["a strict cast of a number", col("n").cast("float64").gt(500), "n::DOUBLE > 500"],
  [
    "a strict cast and a string",
    col("n").cast("float64").gt(500).and(col("s").ne("b")),
    "n::DOUBLE > 500 AND s <> 'b'",
  ],
  [
    "a strict cast to string",
    col("i").cast("string").eq("77").or(col("s").eq("Zoo")),
    "i::VARCHAR = '77' OR s = 'Zoo'",
  ],
];

it.each(cases)("keeps DuckDB's rows for %s", async (_label, predicate, sql) => {
  const df = readParquet(file).filter(predicate);
  expect(df.explain()).toMatch(/ScanParquet[^\n]*predicate=/);
  const got = tableRows(await df.compute({ cluster }));
  const want = await duck.rows(`SELECT i, s, t, n FROM d WHERE ${sql}`);
  expectSameRows(got, want, sql);
});

it("keeps the strings of the rows kept, in their order, with the columns read", async () => {
  const df = readParquet(file, { columns: ["t", "s"] }).filter(col("s").isIn(["Zoo", "b 7"]));
  const got = tableRows(await df.compute({ cluster }));
  const want = await duck.rows(`SELECT t, s FROM d WHERE s IN ('Zoo', 'b 7') ORDER BY i`);
  expectSameRows(got, want, "ordered", true);
});

it("hands on only the columns used after the filter; those it alone read are dropped", async () => {
  const df = readParquet(file)
    .filter(col("s").eq("b").and(col("n").gt(100)))
    .select("i", col("t").alias("tag"));
  expect(df.explain()).toMatch(/Project col\("i"\), col\("t"\)\n\s+ScanParquet[^\n]*columns=\[i, s, t, n\]/);
  const got = tableRows(await df.compute({ cluster }));
  expectSameRows(got, await duck.rows(`SELECT i, t FROM d WHERE s = 'b' AND n > 100 ORDER BY i`), "ordered", true);
  // With a condition left for after the cut (two string columns), the same rows.
  const both = readParquet(file)
    .filter(col("s").eq(col("t")).or(col("n").lt(3)))
    .select("i");
  expectSameRows(
    tableRows(await both.compute({ cluster })),
    await duck.rows(`SELECT i FROM d WHERE s = t OR n < 3`),
    "after the cut",
  );
});

it("cuts the columns a filter does not read while decoding them, for every fixed-width type, nulls and encodings", async () => {
  // x is tested; the others are read only for the kept rows: doubles (PLAIN), a
  // dictionary double, dates, booleans, timestamps, 32-bit floats and ints widened,
  // each with nulls, across row groups of several pages.
  const typed = join(dir, "typed.parquet");
  await duck.run(`COPY (SELECT i AS x,
      CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 1.5)::DOUBLE END AS f,
      CASE WHEN i % 5 = 0 THEN NULL ELSE ((i % 7) * 0.25)::DOUBLE END AS g,
      CASE WHEN i % 9 = 0 THEN NULL ELSE DATE '1960-01-01' + (i % 20000)::INTEGER END AS d,
      CASE WHEN i % 4 = 0 THEN NULL ELSE i % 3 = 0 END AS b,
      CASE WHEN i % 6 = 0 THEN NULL ELSE TIMESTAMP '1999-12-31 23:00:00' + to_seconds(i) END AS ts,
      CASE WHEN i % 8 = 0 THEN NULL ELSE (i / 4.0)::FLOAT END AS r,
      CASE WHEN i % 10 = 0 THEN NULL ELSE (i - 40000)::INTEGER END AS k
    FROM range(60000) t(i)) TO '${typed}' (FORMAT parquet, ROW_GROUP_SIZE 20000)`);
  for (const [predicate, sql] of [
    [col("x").lt(500).or(col("x").gt(59_000)), "x < 500 OR x > 59000"],
    [col("x").ge(100).and(col("x").lt(40_000)), "x >= 100 AND x < 40000"],
    [col("x").lt(0), "x < 0"],
    [col("x").ge(0), "x >= 0"],
  ] as const) {
    const got = tableRows(await readParquet(typed).filter(predicate).compute({ cluster }));
    const want = await duck.rows(
      `SELECT x, f, g, d, b, ts, r::DOUBLE AS r, k::BIGINT AS k FROM '${typed}' WHERE ${sql}`,
    );
    expect(got.length, sql).toBe(want.length);
    expectSameRows(got, want, sql);
  }
});
