// Comparisons of doubles with NaN, ±inf and -0 against DuckDB: NaN equals NaN and is
// above every other value (the order Basin's sort uses too), so `x > 1` and `x != 0`
// hold for a NaN, and `x = 0` does not; -0 equals 0. Filters, between and when/then
// read the same comparisons, and NaN / ±Infinity literals are values too. Doubles become
// text as DuckDB writes them.
import { col, lit, when } from "../../engine/api/index.js";
import { describeExprCases } from "../helpers/expr_cases.js";

const SPECIAL = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 0, 1, -1, 2.5, null];
const a: (number | null)[] = [];
const b: (number | null)[] = [];
const id: number[] = [];
for (const x of SPECIAL)
  for (const y of SPECIAL) {
    id.push(id.length);
    a.push(x);
    b.push(y);
  }
// Doubles whose text DuckDB writes positionally or in scientific notation.
const TEXTS = [1e15, 1e16, 9999999999999998, 1.5e-5, 1e-4, 1e-5, 123456.789, 1.2345678901234568e20, 5e-324];
const MORE = [1.7976931348623157e308, 0.1, 12345678901234567, -0, Number.NaN, Number.POSITIVE_INFINITY, -2.5e-7];
const w = id.map((k) => [...TEXTS, ...MORE][k % (TEXTS.length + MORE.length)]!);
const cols = { id, a, b, i: id.map((k) => (k % 5) - 2), w };
const types = { id: "int64", a: "float64", b: "float64", i: "int64", w: "float64" } as const;

describeExprCases("comparisons with NaN, infinities and -0", cols, types, [
  {
    name: "every comparison of two float columns",
    basin: (t) =>
      t.select(
        "id",
        col("a").eq(col("b")).alias("eq"),
        col("a").ne(col("b")).alias("ne"),
        col("a").lt(col("b")).alias("lt"),
        col("a").le(col("b")).alias("le"),
        col("a").gt(col("b")).alias("gt"),
        col("a").ge(col("b")).alias("ge"),
      ),
    sql: "SELECT id, a = b, a <> b, a < b, a <= b, a > b, a >= b FROM t",
  },
  {
    name: "comparisons with literals and an integer column",
    basin: (t) =>
      t.select(
        "id",
        col("a").gt(2000).alias("gt"),
        col("a").ne(0).alias("ne"),
        col("a").eq(lit(0)).alias("eq"),
        col("a").lt(-1e308).alias("lt"),
        col("a").ge(col("i")).alias("ge"),
        col("i").lt(col("a")).alias("ilt"),
      ),
    sql: "SELECT id, a > 2000, a <> 0, a = 0, a < -1e308, a >= i, i < a FROM t",
  },
  {
    name: "doubles cast to text as DuckDB writes them (nan, inf, 1e-05, 1e+16, 1000000000000000.0)",
    basin: (t) => t.select("id", col("w").cast("string").alias("w"), col("a").cast("string").alias("a")),
    sql: "SELECT id, CAST(w AS VARCHAR), CAST(a AS VARCHAR) FROM t",
  },
  {
    name: "a filter, between and when/then over NaN",
    basin: (t) =>
      t
        .filter(
          col("a")
            .gt(0)
            .or(col("b").eq(col("a"))),
        )
        .select(
          "id",
          col("a").between(-1, 1).alias("btw"),
          when(col("a").gt(col("b")))
            .then(1)
            .otherwise(0)
            .alias("w"),
        ),
    sql: "SELECT id, a BETWEEN -1 AND 1, CASE WHEN a > b THEN 1 ELSE 0 END FROM t WHERE a > 0 OR b = a",
  },
  {
    name: "NaN and ±Infinity literals are values: compared, filtered on and written",
    basin: (t) =>
      t
        .filter(
          col("a")
            .eq(Number.NaN)
            .or(col("a").eq(lit(Number.NEGATIVE_INFINITY)))
            .or(col("a").isNull()),
        )
        .select(
          "id",
          col("a").eq(Number.NaN).alias("isnan"),
          col("b").lt(Number.POSITIVE_INFINITY).alias("below"),
          lit(Number.NaN).alias("n"),
          lit(Number.POSITIVE_INFINITY).alias("p"),
        ),
    sql: `SELECT id, a = 'NaN'::DOUBLE, b < 'Infinity'::DOUBLE, 'NaN'::DOUBLE, 'Infinity'::DOUBLE FROM t
          WHERE a = 'NaN'::DOUBLE OR a = '-Infinity'::DOUBLE OR a IS NULL`,
  },
  {
    name: "isIn finds NaN and -0 as equality does, in short and hashed lists",
    basin: (t) =>
      t.select(
        "id",
        col("a").isIn([Number.NaN, 0]).alias("short"),
        col("a")
          .isIn([Number.NaN, -0, ...Array.from({ length: 20 }, (_, i) => i + 10)])
          .alias("hashed"),
        col("b").isIn([1, 2.5]).alias("none"),
      ),
    sql: `SELECT id, a IN ('NaN'::DOUBLE, 0), a IN ('NaN'::DOUBLE, -0.0, ${Array.from({ length: 20 }, (_, i) => i + 10).join(", ")}),
          b IN (1, 2.5) FROM t`,
  },
]);
