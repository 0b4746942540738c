// String functions (str.*, concatStr) against DuckDB on unicode data with nulls,
// whitespace, empty strings, and letters of every script the case mapping covers.
import { expect, it } from "vitest";
import { col, concatStr, fromColumns, lit } from "../../engine/api/index.js";
import { seededRandom } from "../../engine/common/random.js";
import { WORDS } from "../helpers/data.js";
import { describeExprCases } from "../helpers/expr_cases.js";

const EXTRA = [
  "  padded\t",
  "\n",
  "",
  "ÄÖÜ Straße ÿ",
  "ĀĂĄĆ ŁŃŒŠŸŽ ĳ",
  "АБВЁЖЯ абвёжя",
  "ΑΒΓΣ αβγς",
  "a-b--c-",
  "x,y,z",
  "aaa",
  "İı ſ µ",
];
const ROWS = 1500;
const r = seededRandom(11);
const id: number[] = [];
const s: (string | null)[] = [];
const n: (number | null)[] = [];
for (let i = 0; i < ROWS; i++) {
  id.push(i);
  const pool = r() < 0.5 ? WORDS : EXTRA;
  s.push(r() < 0.08 ? null : pool[Math.floor(r() * pool.length)]);
  n.push(r() < 0.1 ? null : Math.floor(r() * 200) - 100);
}

const WS = "' ' || chr(9) || chr(10) || chr(13) || chr(11) || chr(12)";

describeExprCases("string functions", { id, s, n }, { id: "int64", s: "string", n: "int64" }, [
  {
    name: "len counts characters",
    basin: (t) => t.select("id", col("s").str.len().alias("l")),
    sql: "SELECT id, length(s) FROM t",
  },
  {
    name: "lower and upper",
    basin: (t) => t.select("id", col("s").str.lower().alias("a"), col("s").str.upper().alias("b")),
    sql: "SELECT id, lower(s), upper(s) FROM t",
  },
  {
    name: "strip whitespace",
    basin: (t) => t.select("id", col("s").str.strip().alias("a")),
    sql: `SELECT id, trim(s, ${WS}) FROM t`,
  },
  {
    name: "contains: regex and literal",
    basin: (t) =>
      t.select(
        "id",
        col("s").str.contains("ich$|^a").alias("a"),
        col("s").str.contains("[0-9]|smile").alias("b"),
        col("s").str.contains(".", { literal: true }).alias("c"),
        col("s").str.contains("東").alias("d"),
      ),
    sql: "SELECT id, regexp_matches(s, 'ich$|^a'), regexp_matches(s, '[0-9]|smile'), contains(s, '.'), contains(s, '東') FROM t",
  },
  {
    name: "filter on a computed string column (pushed below the projection)",
    basin: (t) =>
      t
        .withColumns({ u: col("s").str.upper() })
        .filter(col("u").str.startsWith("Z"))
        .select("id", "u"),
    sql: "SELECT id, upper(s) FROM t WHERE starts_with(upper(s), 'Z')",
  },
  {
    name: "filter by contains",
    basin: (t) => t.filter(col("s").str.contains("ü")).select("id", "s"),
    sql: "SELECT id, s FROM t WHERE contains(s, 'ü')",
  },
  {
    name: "startsWith and endsWith",
    basin: (t) =>
      t.select(
        "id",
        col("s").str.startsWith("Zü").alias("a"),
        col("s").str.endsWith("京").alias("b"),
        col("s").str.startsWith("").alias("c"),
      ),
    sql: "SELECT id, starts_with(s, 'Zü'), ends_with(s, '京'), starts_with(s, '') FROM t",
  },
  {
    name: "replace: regex first and all, literal all and first",
    basin: (t) =>
      t.select(
        "id",
        col("s").str.replace("[aeiou]", "_").alias("a"),
        col("s").str.replace("[aeiou]", "_", { all: true }).alias("b"),
        col("s").str.replace("a", "ä", { literal: true, all: true }).alias("c"),
        col("s").str.replace(".", "!", { literal: true }).alias("d"),
      ),
    sql: `SELECT id, regexp_replace(s, '[aeiou]', '_'), regexp_replace(s, '[aeiou]', '_', 'g'), replace(s, 'a', 'ä'),
            CASE WHEN instr(s, '.') > 0 THEN substr(s, 1, instr(s, '.') - 1) || '!' || substr(s, instr(s, '.') + 1) ELSE s END FROM t`,
  },
  {
    name: "replace of an empty-matching regex: around whole characters, never between a character's bytes",
    basin: (t) =>
      t.select(
        "id",
        col("s").str.replace("x*", "-", { all: true }).alias("a"),
        col("s").str.replace("b*", "-").alias("b"),
      ),
    sql: `SELECT id, regexp_replace(s, 'x*', '-', 'g'), regexp_replace(s, 'b*', '-') FROM t`,
  },
  {
    name: "slice: 0-based, negative start, to the end, clipped",
    basin: (t) =>
      t.select(
        "id",
        col("s").str.slice(1, 3).alias("a"),
        col("s").str.slice(-3, 2).alias("b"),
        col("s").str.slice(2).alias("c"),
        col("s").str.slice(-8, 3).alias("d"),
        col("s").str.slice(0, 0).alias("e"),
      ),
    sql: "SELECT id, substring(s, 2, 3), substring(s, -3, 2), substring(s, 3), substring(s, -8, 3), substring(s, 1, 0) FROM t",
  },
  {
    name: "split: 0-based part, null when absent, negative from the end",
    basin: (t) =>
      t.select(
        "id",
        col("s").str.split(",", 0).alias("a"),
        col("s").str.split("-", 2).alias("b"),
        col("s").str.split("-", -1).alias("c"),
        col("s").str.split(" ", 1).alias("d"),
      ),
    sql: `SELECT id, split_part(s, ',', 1),
            CASE WHEN len(string_split(s, '-')) > 2 THEN split_part(s, '-', 3) END,
            split_part(s, '-', -1),
            CASE WHEN len(string_split(s, ' ')) > 1 THEN split_part(s, ' ', 2) END FROM t`,
  },
  {
    name: "concatStr: null if any part is null, numbers cast to text",
    basin: (t) =>
      t.select(
        "id",
        concatStr(col("s"), " #", col("n")).alias("a"),
        concatStr("<", col("s").str.upper(), ">").alias("b"),
      ),
    sql: "SELECT id, s || ' #' || n::VARCHAR, '<' || upper(s) || '>' FROM t",
  },
  {
    name: "string functions of a literal broadcast",
    basin: (t) =>
      t.select("id", lit("Zürich").str.len().alias("a"), col("s").fillNull(lit("東京").str.lower()).alias("b")),
    sql: "SELECT id, 6 AS a, coalesce(s, '東京') FROM t",
  },
  {
    name: "composed in withColumns and groupBy",
    basin: (t) =>
      t
        .withColumns({ k: col("s").str.lower().str.slice(0, 1) })
        .groupBy("k")
        .agg(col("n").sum().alias("sn")),
    sql: "SELECT substring(lower(s), 1, 1) AS k, sum(n) FROM t GROUP BY k",
  },
]);

it("explain shows functions with their options, and pushes filters through them", () => {
  const df = fromColumns({ s: ["a", null] })
    .withColumns({ u: col("s").str.upper() })
    .filter(col("u").str.contains("^A", { literal: false }));
  const plan = df.explain();
  expect(plan).toContain('str.contains(str.upper(col("s")), pattern="^A", literal=false)');
  expect(plan.split("\n")[0]).toMatch(/^Project/);
});
