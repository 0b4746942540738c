// The bench's answer check, fed wrong answers it must reject: real DuckDB, Polars and
// Basin contenders over a real CSV, with questions whose Polars query is subtly wrong.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pl from "nodejs-polars";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Dataset } from "../../bench/data_file.js";
import { compareDigests, type Digest } from "../../bench/digest.js";
import type { Question } from "../../bench/questions.js";
import { runQuestion } from "../../bench/run.js";
import { col as bcol, lit as blit, when as bwhen, type DataFrame } from "../../engine/api/index.js";
import { basinContender, duckdbContender, polarsContender, type Contender } from "../../bench/systems.js";

// 60,000 rows, more than the check here compares row by row (50,000; the bench's own
// limit is 500,000), so its rows are sampled every 3rd and only the whole-answer
// statistics see the rows in between.
const ROWS = 60_000;
const LIMITS = { fullRows: 50_000, sampleRows: 20_000 };
let dir = "";
let data: Dataset;
let contenders: Contender[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "basin-bench-check-"));
  const path = join(dir, "t.csv");
  const lines = ["id,g,v,d"];
  for (let i = 0; i < ROWS; i++)
    lines.push(
      `${i},g${i % 7},${((i * 37) % 1000) / 8},${new Date(Date.UTC(1995, 0, 1 + (i % 900))).toISOString().slice(0, 10)}`,
    );
  writeFileSync(path, lines.join("\n") + "\n");
  data = {
    name: "check",
    tables: [{ name: "t", path, schema: { id: "int64", g: "string", v: "float64", d: "date" } }],
    reused: false,
    seconds: 0,
  };
  contenders = [await duckdbContender(data, true), polarsContender(data, true), basinContender(data)];
  for (const c of contenders) await c.load?.();
}, 120_000);

afterAll(() => {
  for (const c of contenders) c.close?.();
  rmSync(dir, { recursive: true, force: true });
});

const c = pl.col;

/** The whole table, in every system; Polars' version altered by `alter` (identity when absent). */
function question(alter?: (t: pl.LazyDataFrame) => pl.LazyDataFrame): Question {
  return {
    id: "t",
    description: "every row",
    keys: ["id"],
    duckdb: "SELECT id, g, v, d FROM t",
    polars: ({ t }) => (alter ? alter(t!) : t!),
    basin: ({ t }) => t!,
  };
}

/** The whole table, Basin's version altered by `alter`. */
function basinQuestion(alter: (t: DataFrame) => DataFrame): Question {
  return { ...question(), basin: ({ t }) => alter(t!) };
}

/** The check column of one question run `runs` times on each named contender. */
async function check(q: Question, runs = 1, systems = ["duckdb", "polars"]): Promise<string> {
  const chosen = contenders.filter((x) => systems.includes(x.name));
  return (await runQuestion(q, chosen, runs, true, 1e-9, LIMITS)).check;
}

describe("the bench's answer check", () => {
  it("accepts the same answer from DuckDB, Polars and Basin, compared whole", async () => {
    expect(await check(question(), 1, ["duckdb", "polars", "basin"])).toBe(
      "ok; every row of basin compared with duckdb's; " +
        "column statistics of all rows checked, the rows themselves every 3th (polars)",
    );
  });

  it("compares every row of Basin's answer in DuckDB: two strings swapped between rows the sample skips", async () => {
    // Rows id 1 and 4 (indices 1 and 4 in the check's order: the every-3rd sample reads
    // neither) trade their g: every column's statistics stay the same.
    const swapped = basinQuestion((t) =>
      t.withColumns({
        g: bwhen(bcol("id").eq(1)).then(blit("g4")).when(bcol("id").eq(4)).then(blit("g1")).otherwise(bcol("g")),
      }),
    );
    expect(await check(swapped, 1, ["duckdb", "basin"])).toMatch(
      /^basin: MISMATCH vs duckdb: row 1 \(in the check's order\) column g: got g4, expected g1/,
    );
    // A float a rounding away from DuckDB's passes; half a unit away does not.
    const rounded = basinQuestion((t) =>
      t.withColumns({
        v: bwhen(bcol("id").eq(5))
          .then(bcol("v").mul(1 + 1e-12))
          .otherwise(bcol("v")),
      }),
    );
    expect(await check(rounded, 1, ["duckdb", "basin"])).toMatch(/^ok; every row of basin compared/);
    const shifted = basinQuestion((t) =>
      t.withColumns({ v: bwhen(bcol("id").eq(5)).then(bcol("v").add(0.5)).otherwise(bcol("v")) }),
    );
    expect(await check(shifted, 1, ["duckdb", "basin"])).toMatch(/^basin: MISMATCH vs duckdb: /);
  });

  it("rejects a wrong value in a row the row sample skips, by the column's sum", async () => {
    // Row id = 1 is the second row in the check's order: the every-3rd sample skips it.
    const verdict = await check(
      question((t) => t.withColumns(pl.when(c("id").eq(1)).then(c("v").plus(1)).otherwise(c("v")).alias("v"))),
    );
    expect(verdict).toMatch(/^polars: MISMATCH vs duckdb: column v: sum /);
  });

  it("compares integer sums past 2^53 exactly on every row (DuckDB's HUGEINT sums written as decimals)", async () => {
    const big = 9_007_199_254_740_993n; // 2^53 + 1: a double cannot hold it
    const sums = (alter: boolean): Question => ({
      id: "t",
      description: "big sums",
      keys: ["id"],
      duckdb: `SELECT id, sum(id + ${big}) AS s FROM t GROUP BY id`,
      polars: ({ t }) => t!, // not run
      basin: ({ t }) =>
        t!
          .groupBy("id")
          .agg(
            bcol("id")
              .add(blit(2 ** 52))
              .add(blit(2 ** 52))
              .add(blit(1))
              .sum()
              .alias("s"),
          )
          .withColumns({ s: alter ? bwhen(bcol("id").eq(1)).then(bcol("s").add(1)).otherwise(bcol("s")) : bcol("s") }),
    });
    expect(await check(sums(false), 1, ["duckdb", "basin"])).toMatch(/^ok; every row of basin compared/);
    expect(await check(sums(true), 1, ["duckdb", "basin"])).toMatch(
      /^basin: MISMATCH vs duckdb: row 1 \(in the check's order\) column s: got 9007199254740995, expected 9007199254740994/,
    );
  });

  it("rejects a value made null, a changed string and a changed date", async () => {
    expect(
      await check(
        question((t) => t.withColumns(pl.when(c("id").eq(4)).then(pl.lit(null)).otherwise(c("v")).alias("v"))),
      ),
    ).toMatch(/polars: MISMATCH vs duckdb: column v: 1 nulls, expected 0/);
    expect(
      await check(
        question((t) => t.withColumns(pl.when(c("id").eq(4)).then(pl.lit("g10")).otherwise(c("g")).alias("g"))),
      ),
    ).toMatch(/polars: MISMATCH vs duckdb: column g: sum 120001, expected 120000/);
    expect(
      await check(
        question((t) =>
          t.withColumns(
            pl
              .when(c("id").eq(4))
              .then(pl.lit(new Date(Date.UTC(1990, 0, 1))).cast(pl.Date))
              .otherwise(c("d"))
              .alias("d"),
          ),
        ),
      ),
    ).toMatch(/polars: MISMATCH vs duckdb: column d: min "1990-01-01", expected "1995-01-01"/);
  });

  it("rejects a renamed column and an integer column answered as floats", async () => {
    expect(await check(question((t) => t.rename({ g: "group" })))).toMatch(
      /polars: MISMATCH vs duckdb: columns \[id,group,v,d\], expected \[id,g,v,d\]/,
    );
    expect(await check(question((t) => t.withColumns(c("id").cast(pl.Float64))))).toMatch(
      /polars: MISMATCH vs duckdb: column id is float, expected int/,
    );
  });

  it("checks the answer of the timed first run, not a later one", async () => {
    // The first run answers wrong, the second right: the old check read the last run's answer.
    let calls = 0;
    const flaky = question((t) =>
      calls++ === 0 ? t.withColumns(pl.when(c("id").eq(7)).then(c("v").plus(1)).otherwise(c("v")).alias("v")) : t,
    );
    expect(await check(flaky, 2)).toMatch(/^polars: MISMATCH vs duckdb: column v: sum /);
    expect(calls).toBe(2);
  });
});

describe("compareDigests", () => {
  const digest = (sum: number, rows = [{ k: "a", x: 1 }]): Digest => ({
    numRows: 1_000_000,
    columns: [
      { name: "k", type: "string", nulls: 0, min: "a", max: "z", sum: 1_000_000 },
      { name: "x", type: "float", nulls: 0, min: 0.5, max: 1000, sum },
    ],
    rows,
    stride: 5,
  });

  it("takes a sum that differs by float rounding, and nothing more", () => {
    const sum = 123_456_789.123;
    expect(compareDigests(digest(sum), digest(sum * (1 + 1e-12)), ["k"], 1e-9)).toBeNull();
    expect(compareDigests(digest(sum), digest(sum + 1), ["k"], 1e-9)).toMatch(/^column x: sum /);
  });

  it("compares the sampled rows too: keys exactly, other numbers within the tolerance", () => {
    expect(compareDigests(digest(1), digest(1, [{ k: "a", x: 1 + 1e-12 }]), ["k"], 1e-9)).toBeNull();
    expect(compareDigests(digest(1), digest(1, [{ k: "a", x: 1.001 }]), ["k"], 1e-9)).toMatch(/^row 0 col x/);
    expect(compareDigests(digest(1), digest(1, [{ k: "b", x: 1 }]), ["k"], 1e-9)).toMatch(/^row 0 col k/);
  });
});
