// when/then/otherwise, between, isIn, math functions and non-strict casts against
// DuckDB, on data with nulls, negatives, zeros and halves (rounding).
import { describe, expect, it } from "vitest";
import { col, fromColumns, lit, when } from "../../engine/api/index.js";
import { seededRandom } from "../../engine/common/random.js";
import { WORDS } from "../helpers/data.js";
import { describeExprCases } from "../helpers/expr_cases.js";

const ROWS = 1500;
const DAY = 86_400_000;
const r = seededRandom(31);
const cols = {
  id: [] as number[],
  v: [] as (number | null)[],
  f: [] as (number | null)[],
  s: [] as (string | null)[],
  d: [] as (Date | null)[],
  flag: [] as (boolean | null)[],
  raw: [] as (string | null)[],
};
const RAW = ["12", "-7", "3.5", "1e3", "abc", "", "true", "2024-02-29", "2024-02-30", " 4", "0"];
for (let i = 0; i < ROWS; i++) {
  cols.id.push(i);
  cols.v.push(r() < 0.1 ? null : Math.floor(r() * 400) - 200);
  // Halves and values near them exercise round(); zeros and negatives the math domains.
  cols.f.push(
    r() < 0.1
      ? null
      : r() < 0.3
        ? (Math.floor(r() * 40) - 20) / 2
        : r() < 0.1
          ? 0
          : Math.round((r() * 200 - 100) * 1e4) / 1e4,
  );
  cols.s.push(r() < 0.08 ? null : WORDS[Math.floor(r() * WORDS.length)]);
  cols.d.push(r() < 0.1 ? null : new Date((19_700 + Math.floor(r() * 40)) * DAY));
  cols.flag.push(r() < 0.1 ? null : r() < 0.5);
  cols.raw.push(r() < 0.1 ? null : RAW[Math.floor(r() * RAW.length)]);
}
const types = { id: "int64", v: "int64", f: "float64", s: "string", d: "date", flag: "bool", raw: "string" } as const;

describeExprCases("conditionals, membership, math and casts", cols, types, [
  {
    name: "when/then/otherwise with mixed int and float values",
    basin: (t) =>
      t.select(
        "id",
        when(col("v").gt(100)).then(col("f")).when(col("v").lt(0)).then(-1).otherwise(col("v")).alias("a"),
      ),
    sql: "SELECT id, CASE WHEN v > 100 THEN f WHEN v < 0 THEN -1 ELSE v END FROM t",
  },
  {
    name: "when without otherwise is null; a null condition counts as false",
    basin: (t) =>
      t.select(
        "id",
        when(col("flag")).then("yes").alias("a"),
        when(col("flag").not()).then(col("s")).otherwise("—").alias("b"),
      ),
    sql: "SELECT id, CASE WHEN flag THEN 'yes' END, CASE WHEN NOT flag THEN s ELSE '—' END FROM t",
  },
  {
    name: "when with date values from string literals",
    basin: (t) => t.select("id", when(col("d").isNull()).then("2000-01-01").otherwise(col("d")).alias("a")),
    sql: "SELECT id, CASE WHEN d IS NULL THEN DATE '2000-01-01' ELSE d END FROM t",
  },
  {
    name: "every comparison with the scalar on either side, column against column, nulls kept",
    basin: (t) =>
      t.select(
        "id",
        ...(["eq", "ne", "lt", "le", "gt", "ge"] as const).flatMap((op) => [
          col("f")[op](2.5).alias(`${op}_fs`),
          lit(3)[op](col("v")).alias(`${op}_sv`),
          col("v")[op](col("f")).alias(`${op}_vf`),
          lit("1970-01-05")[op](col("d")).alias(`${op}_sd`),
          col("s")[op]("m").alias(`${op}_ss`),
          lit("Zürich")[op](col("s")).alias(`${op}_zs`),
          col("s")[op](col("raw")).alias(`${op}_sr`),
        ]),
      ),
    sql: `SELECT id, ${["=", "<>", "<", "<=", ">", ">="]
      .map((o) => `f ${o} 2.5, 3 ${o} v, v ${o} f, DATE '1970-01-05' ${o} d, s ${o} 'm', 'Zürich' ${o} s, s ${o} raw`)
      .join(", ")} FROM t`,
  },
  {
    name: "typed literals: date and timestamp text parsed (µs kept), text and numbers cast, nulls typed",
    basin: (t) =>
      t.select(
        "id",
        lit("2024-03-01 12:34:56.789123", "timestamp").alias("a"),
        lit("2024-02-29", "date").alias("b"),
        col("d").lt(lit("1970-02-01", "date")).alias("c"),
        lit("12", "int64").add(col("v")).alias("e"),
        lit(3, "float64").div(2).alias("g"),
        lit(5, "string").alias("h"),
        lit(null, "date").alias("i"),
        lit(19_000, "date").alias("j"),
      ),
    sql: `SELECT id, TIMESTAMP '2024-03-01 12:34:56.789123', DATE '2024-02-29', d < DATE '1970-02-01', 12 + v, 1.5,
      '5', NULL::DATE, DATE '1970-01-01' + 19000 FROM t`,
  },
  {
    name: "between is inclusive, with SQL nulls",
    basin: (t) =>
      t.select(
        "id",
        col("v").between(-10, 10).alias("a"),
        col("f").between(col("v"), 50).alias("b"),
        col("d").between("1970-01-10", "1970-01-20").alias("c"),
        col("s").between("a", "Z").alias("e"),
      ),
    sql: "SELECT id, v BETWEEN -10 AND 10, f BETWEEN v AND 50, d BETWEEN DATE '1970-01-10' AND DATE '1970-01-20', s BETWEEN 'a' AND 'Z' FROM t",
  },
  {
    name: "filter with between",
    basin: (t) => t.filter(col("v").between(0, 50)).select("id", "v"),
    sql: "SELECT id, v FROM t WHERE v BETWEEN 0 AND 50",
  },
  {
    name: "isIn over ints, floats, strings, dates and bools",
    basin: (t) =>
      t.select(
        "id",
        col("v").isIn([1, 2, 3, -5, 2.5]).alias("a"),
        col("f").isIn([0, 1.5, -2, 7]).alias("b"),
        col("s").isIn(["Zürich", "東京", "🙂 smile"]).alias("c"),
        col("d").isIn(["1970-01-05", "1970-01-06"]).alias("e"),
        col("flag").isIn([true]).alias("g"),
      ),
    sql: "SELECT id, v IN (1, 2, 3, -5), f IN (0, 1.5, -2, 7), s IN ('Zürich', '東京', '🙂 smile'), d IN (DATE '1970-01-05', DATE '1970-01-06'), flag IN (true) FROM t",
  },
  {
    name: "isIn with long lists (hashed) and a null among them",
    basin: (t) =>
      t.select(
        "id",
        col("v")
          .isIn([...Array.from({ length: 40 }, (_, i) => i * 5 - 100), null])
          .alias("a"),
        col("f")
          .isIn(Array.from({ length: 30 }, (_, i) => (i - 15) / 2))
          .alias("b"),
        col("s").isIn(WORDS.slice(0, 12)).alias("c"),
      ),
    sql: `SELECT id, v IN (${Array.from({ length: 40 }, (_, i) => i * 5 - 100).join(", ")}, NULL), f IN (${Array.from(
      { length: 30 },
      (_, i) => (i - 15) / 2,
    ).join(", ")}), s IN (${WORDS.slice(0, 12)
      .map((w) => `'${w.replace(/'/g, "''")}'`)
      .join(", ")}) FROM t`,
  },
  {
    name: "isIn with a null in the list: not found is null",
    basin: (t) =>
      t.select(
        "id",
        col("v").isIn([1, 2, null]).alias("a"),
        col("s").isIn([null, "naïve"]).alias("b"),
        col("v").isIn([]).alias("c"),
      ),
    sql: "SELECT id, v IN (1, 2, NULL), s IN (NULL, 'naïve'), CASE WHEN v IS NULL THEN NULL ELSE false END FROM t",
  },
  {
    name: "abs and round half away from zero",
    basin: (t) =>
      t.select(
        "id",
        col("v").abs().alias("a"),
        col("f").abs().alias("b"),
        col("f").round().alias("c"),
        col("f").round(1).alias("e"),
        col("f").round(-1).alias("g"),
        col("v").round(-1).alias("h"),
        col("v").round(2).alias("i"),
      ),
    sql: "SELECT id, abs(v), abs(f), round(f), round(f, 1), round(f, -1), round(v, -1), round(v, 2) FROM t",
  },
  {
    name: "sqrt, log, exp, pow; null outside the domain",
    basin: (t) =>
      t.select(
        "id",
        col("f").sqrt().alias("a"),
        col("f").log().alias("b"),
        col("f").log(10).alias("c"),
        col("v").log(2).alias("c2"),
        col("f").div(10).exp().alias("e"),
        col("f").pow(2).alias("g"),
        col("v").pow(col("f").div(50)).alias("h"),
        col("v").exp().alias("i"),
      ),
    sql: `SELECT id, CASE WHEN f >= 0 THEN sqrt(f) END, CASE WHEN f > 0 THEN ln(f) END, CASE WHEN f > 0 THEN log10(f) END, CASE WHEN v > 0 THEN log2(v) END,
            exp(f / 10), pow(f, 2), CASE WHEN isfinite(pow(v, f / 50)) THEN pow(v, f / 50) END, CASE WHEN isfinite(exp(v)) THEN exp(v) END FROM t`,
  },
  {
    // Numbers parse strictly: no surrounding spaces, and integers without "3.5" or "1e3" (DuckDB's TRY_CAST accepts those).
    name: "casts from strings with strict false give null",
    basin: (t) =>
      t.select(
        "id",
        col("raw").cast("int64", { strict: false }).alias("a"),
        col("raw").cast("float64", { strict: false }).alias("b"),
        col("raw").cast("date", { strict: false }).alias("c"),
        col("raw").cast("bool", { strict: false }).alias("e"),
      ),
    sql: "SELECT id, CASE WHEN regexp_matches(raw, '^-?[0-9]+$') THEN raw::BIGINT END, CASE WHEN raw = trim(raw) THEN TRY_CAST(raw AS DOUBLE) END, TRY_CAST(raw AS DATE), CASE WHEN raw IN ('true', '0') THEN raw = 'true' END FROM t",
  },
  {
    name: "math on literals broadcasts",
    basin: (t) =>
      t.select("id", lit(2).pow(10).alias("a"), lit(-3.5).round().alias("b"), col("v").add(lit(16).sqrt()).alias("c")),
    sql: "SELECT id, 1024.0 AS a, -4.0 AS b, v + 4.0 AS c FROM t",
  },
]);

describe("typed literals that cannot have their type", () => {
  it("a date or timestamp that is no date, or a fraction as an int64, is BASIN_PLAN at the literal's line", async () => {
    const cases: [() => unknown, RegExp][] = [
      [() => lit("2024-13-01", "date"), /"2024-13-01" is not a valid date \(write it as YYYY-MM-DD/],
      [() => lit("noon", "timestamp"), /"noon" is not a valid timestamp/],
      [() => lit(1.5, "int64"), /lit\(1\.5, "int64"\): 1\.5 is not a whole number an int64 can hold/],
      [() => lit(2 ** 64, "int64"), /lit\(\d+, "int64"\): \d+ is not a whole number/],
    ];
    for (const [make, message] of cases) {
      // withColumns() resolves its expressions at once: an async function makes its throw a rejection.
      const run = async () =>
        fromColumns({ a: [1] })
          .withColumns({ z: make() as ReturnType<typeof lit> })
          .compute();
      await expect(run()).rejects.toMatchObject({
        code: "BASIN_PLAN",
        message: expect.stringMatching(new RegExp(`expressions_misc\\.test\\.ts:\\d+:\\d+: ${message.source}`)),
      });
    }
  });

  it("text that is no number, as an int64, is BASIN_CAST naming the literal", async () => {
    await expect(
      fromColumns({ a: [1] })
        .withColumns({ z: lit("abc", "int64") })
        .compute(),
    ).rejects.toMatchObject({
      code: "BASIN_CAST",
      message: expect.stringContaining('cannot cast "abc" to int64 in lit("abc", "int64")'),
    });
  });
});
