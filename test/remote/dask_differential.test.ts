// The engine's differential cases on a real Dask cluster (a scheduler and two worker
// processes started here): the Dask backend must give the local engine's answers,
// with the same types, nulls and, where Basin defines one, the same order.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BasinError, col, corr, count, fromColumns, readCsv, type DataFrame } from "../../engine/api/index.js";
import { makeTrips, writeTripsCsv, type Trips } from "../helpers/data.js";
import { Duck, expectSameRows, tableRows } from "../helpers/oracle.js";
import { daskFixture } from "./dask_procs.js";

const ROWS = 2000;
let data: Trips;
let dir: string;
const fx = daskFixture(2);

beforeAll(() => {
  data = makeTrips(ROWS);
  dir = writeTripsCsv(data, 3);
});

const sources: Record<string, () => DataFrame> = {
  "readCsv, 3 files": () => readCsv(`${dir}/*.csv`, { dtypes: { k: "int64", v: "int64" }, parseDates: ["day"] }),
  "fromColumns with empty and one-row partitions": () =>
    fromColumns(
      { ...data, day: data.day.map((d) => (d === null ? null : new Date(`${d}T00:00:00Z`))) },
      { partitions: [0, 1, ROWS - 4, 0, 1, 2, 0], types: { k: "int64", v: "int64", f: "float64", day: "date" } },
    ),
};

interface Case {
  name: string;
  basin: (t: DataFrame) => DataFrame;
  ordered?: boolean;
}

const cases: Case[] = [
  { name: "filter with and/comparison", basin: (t) => t.filter(col("v").gt(0).and(col("city").ne("plain"))) },
  { name: "filter with three-valued or", basin: (t) => t.filter(col("flag").or(col("v").lt(-500))) },
  {
    name: "filter on dates and strings",
    basin: (t) => t.filter(col("day").ge("2024-02-01").and(col("city").le("Zürich"))),
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
        col("f").mod(3).alias("j"),
      ),
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
        col("f").cast("string").alias("h"),
      ),
  },
  {
    name: "functions",
    basin: (t) =>
      t.select(
        "rid",
        col("city").str.len().alias("a"),
        col("city").str.upper().alias("b"),
        col("city").str.contains("a").alias("c"),
        col("day").dt.month().alias("d"),
        col("day").dt.weekday().alias("e"),
        col("f").abs().alias("g"),
        col("f").round(1).alias("h"),
        col("k").isIn([1, 3]).alias("i"),
      ),
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
  },
  {
    name: "groupBy two keys (int, unicode string)",
    basin: (t) =>
      t
        .groupBy("k", "city")
        .agg(col("v").sum().alias("s"), count().alias("n"), col("f").max().alias("mx"), col("f").std().alias("sd")),
  },
  {
    name: "groupBy an expression key, with the agg object form",
    basin: (t) => t.groupBy(col("v").mod(3).alias("m"), "flag").agg({ f: ["sum", "min"], v: "mean" }),
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
  },
  {
    name: "aggregation over no rows",
    basin: (t) =>
      t.filter(col("v").gt(10_000)).select(col("v").sum().alias("s"), count().alias("n"), col("f").mean().alias("m")),
  },
  { name: "groupBy over no rows", basin: (t) => t.filter(col("v").gt(10_000)).groupBy("k").agg(count().alias("n")) },
  { name: "head keeps partition order", basin: (t) => t.head(7), ordered: true },
  {
    name: "head after filter and withColumns",
    basin: (t) =>
      t
        .filter(col("k").eq(1))
        .withColumns({ v: col("v").mul(2), w: col("f").add(1) })
        .head(25),
    ordered: true,
  },
  {
    name: "sort by two keys, nulls first and last",
    basin: (t) => t.sort(["city", "v"], { descending: [false, true], nullsFirst: [true, false] }),
    ordered: true,
  },
  { name: "top-n (sort + head)", basin: (t) => t.sort("f", { descending: true }).head(10), ordered: true },
];

describe.each(Object.entries(sources))("Dask: %s", (_, source) => {
  it.each(cases)("$name matches the local engine", async (c) => {
    const frame = c.basin(source());
    const expected = await frame.compute({ cluster: fx.local });
    const actual = await frame.compute({ cluster: fx.dask });
    expect(actual.schema).toEqual(expected.schema);
    expectSameRows(tableRows(actual), tableRows(expected), c.name, c.ordered);
  });
});

describe("persist() on Dask", () => {
  it("keeps the asked partitions, every row in order, and the local engine's answers over them", async () => {
    const frame = sources["readCsv, 3 files"]!().filter(col("v").gt(0));
    const expected = await frame.sort("rid").compute({ cluster: fx.local });
    const p = await frame.persist({ cluster: fx.dask, partitions: 3 });
    try {
      expect(p.node.kind === "stored" && p.node.handles).toHaveLength(3);
      const actual = await p.sort("rid").compute({ cluster: fx.local });
      expectSameRows(tableRows(actual), tableRows(expected), "persisted on Dask", true);
    } finally {
      p.unpersist();
    }
    // Sized by bytes: Dask's result is regrouped in this process, at least 4 partitions.
    const sized = await frame.persist({ cluster: fx.dask, partitionBytes: "1GB" });
    try {
      expect(sized.node.kind === "stored" && sized.node.handles).toHaveLength(4);
      const actual = await sized.sort("rid").compute({ cluster: fx.local });
      expectSameRows(tableRows(actual), tableRows(expected), "persisted on Dask by bytes", true);
    } finally {
      sized.unpersist();
    }
  });
});

// Scalar semantics the Dask bridge re-implements in Python (resources/dask_bridge/basin_text.py,
// basin_exprs.py): regexes (ECMAScript on UTF-8 bytes), case mapping, strict parsing,
// non-finite math and exact timestamps must give the local engine's answers.
const STRS = [
  "ABC",
  "a\n",
  "٣",
  "x.y\r",
  "Straße",
  "Արամ",
  " 3",
  "3.5",
  "1e3",
  "-0",
  "inf",
  "nan",
  "TRUE",
  "tRuE",
  "2024-02-29",
  "2024-02-30",
  "03/04/2024",
  "2024-03-01T12:00:00.1234567Z",
  "2024-03-01 23:59:59",
  "é",
  "",
  null,
  "abxd",
  "ÿßµ",
  "ĲĳŉſΣςйЁ",
  "a b",
  "9223372036854775808",
  "+5",
  "ABCABC",
  ".5",
];
const NUMS = [
  0,
  -1,
  2.5,
  -2.5,
  0.5,
  -0.5,
  0.49999999999999994,
  1e308,
  -8,
  1000,
  null,
  1e-320,
  1.005,
  2.675,
  -0.25,
  1e16,
  3,
  7,
  -3,
  0.1,
  2,
  4,
  9,
  16,
  25,
  100,
  1e-5,
  -1e-5,
  8,
  12,
];
const TS = STRS.map((_, i) =>
  i % 7 === 3 ? null : new Date(Date.UTC(2024, 2, 1, 12, 34, 56, 789) + i * 86_400_123 - (i % 2) * 1e12),
);
const scalars = (): DataFrame =>
  fromColumns(
    { i: STRS.map((_, i) => i), s: STRS, f: NUMS, ts: TS },
    { partitions: [0, 3, 0, STRS.length - 4, 1], types: { i: "int64", s: "string", f: "float64", ts: "timestamp" } },
  );

const scalarCases: Case[] = [
  {
    name: "regex replacements use ECMAScript's $1, $&, $$, $` and $' (not Python's)",
    basin: (t) =>
      t.select(
        "i",
        col("s").str.replace("(B)(C)?", "<$1|$2|$&|$$|$0|$10|$9|${1}|$`|$'|$x|$>", { all: true }).alias("a"),
        col("s").str.replace("(B)", "[$1]").alias("b"),
        col("s").str.replace("x*", "-", { all: true }).alias("c"),
        col("s").str.replace("a*?", "-", { all: true }).alias("d"),
        col("s").str.replace("(a)|(b)", "[$1$2]", { all: true }).alias("e"),
        col("s").str.replace("a", "\\$1\\").alias("g"),
        col("s").str.replace("a", "$1", { literal: true, all: true }).alias("h"),
        col("s").str.replace("", "+", { literal: true }).alias("j"),
      ),
  },
  {
    name: "regexes match as ECMAScript on UTF-8 bytes ($ only at the end, ASCII \\d \\w \\s, . is one byte)",
    basin: (t) =>
      t.select(
        "i",
        col("s").str.contains("^a$").alias("a"),
        col("s").str.contains("\\d").alias("b"),
        col("s").str.contains("^.$").alias("c"),
        col("s").str.contains("^\\w+$").alias("d"),
        col("s").str.contains("\\s").alias("e"),
        col("s").str.contains("y.$").alias("g"),
        col("s").str.contains("[é]").alias("h"),
        col("s").str.contains("^\\D\\W?\\S*$").alias("j"),
        col("s").str.replace(".", "_", { all: true }).alias("k"),
        col("s").str.contains(".", { literal: true }).alias("l"),
      ),
  },
  {
    name: "upper/lower map only the local engine's letters, one character to one",
    basin: (t) =>
      t.select(
        "i",
        col("s").str.upper().alias("a"),
        col("s").str.lower().alias("b"),
        col("s").str.upper().str.len().alias("c"),
      ),
  },
  {
    name: "str.slice clips its window to the string, a negative start counting from the end",
    basin: (t) =>
      t.select(
        "i",
        col("s").str.slice(-5, 3).alias("a"),
        col("s").str.slice(-2).alias("b"),
        col("s").str.slice(1, 2).alias("c"),
        col("s").str.slice(40, 2).alias("d"),
        col("s").str.slice(-100).alias("e"),
      ),
  },
  {
    name: "strings cast to numbers, booleans, dates and timestamps parse strictly",
    basin: (t) =>
      t.select(
        "i",
        col("s").cast("int64", { strict: false }).alias("a"),
        col("s").cast("float64", { strict: false }).alias("b"),
        col("s").cast("float64", { strict: false }).cast("string").alias("c"),
        col("s").cast("bool", { strict: false }).alias("d"),
        col("s").cast("date", { strict: false }).alias("e"),
        col("s").cast("timestamp", { strict: false }).cast("string").alias("g"),
      ),
  },
  {
    name: "math results that are not finite are null, with the C library's values",
    basin: (t) =>
      t.select(
        "i",
        col("f").sqrt().alias("a"),
        col("f").log().alias("b"),
        col("f").log(10).alias("c"),
        col("f").log(2).alias("d"),
        col("f").log(3).alias("e"),
        col("f").pow(-1).alias("g"),
        col("f").pow(col("f")).alias("h"),
        col("f").exp().alias("j"),
        col("f").round().alias("k"),
        col("f").round(2).alias("l"),
        col("f").round(-1).alias("m"),
        col("f").cast("string").alias("n"),
      ),
  },
  {
    name: "timestamp columns and literals keep every microsecond",
    basin: (t) =>
      t
        .filter(col("ts").ne("2024-03-02 12:34:56.912"))
        .select(
          "i",
          col("ts").cast("string").alias("a"),
          col("ts").eq("2024-03-01 12:34:56.789").alias("b"),
          col("ts").cast("int64").alias("c"),
          col("ts").fillNull("2023-11-14 22:13:20.123").cast("string").alias("d"),
        ),
  },
];

describe("Dask: the local engine's scalar semantics", () => {
  it.each(scalarCases)("$name", async (c) => {
    const frame = c.basin(scalars());
    const expected = await frame.compute({ cluster: fx.local });
    const actual = await frame.compute({ cluster: fx.dask });
    expect(actual.schema).toEqual(expected.schema);
    expectSameRows(tableRows(actual), tableRows(expected), c.name, c.ordered);
  });
});

describe("Dask: CSV values parse as the local reader parses them", () => {
  let csvDir: string;
  beforeAll(() => {
    csvDir = mkdtempSync(join(tmpdir(), "basin-dask-csv-"));
    writeFileSync(join(csvDir, "padded.csv"), "id,n\n1,3\n2, 4\n3,\n4,5\n");
    writeFileSync(join(csvDir, "one_column.csv"), "a\n1\n\n3\n\n");
    writeFileSync(join(csvDir, "located.csv"), 'id,s,n\n1,"a\nb",2\n\n3,"é",x\n4,"q""z,",5\n');
    writeFileSync(join(csvDir, "dates.csv"), "id,t\n1,2024-03-01T12:00:00\n2,03/04/2024\n3,2024-03-01 00:00:01\n");
    writeFileSync(join(csvDir, "range.csv"), "id,d\n1,2024-02-29\n2,2300-01-01\n3,1600-06-15\n");
  });
  afterAll(() => rmSync(csvDir, { recursive: true, force: true }));

  it("NaN in a float column is a value, as locally: aggregations, comparisons and order", async () => {
    const nanDir = join(csvDir, "nan");
    mkdirSync(nanDir);
    writeFileSync(join(nanDir, "p1.csv"), "x,g\nNaN,a\n1,a\n,a\n2,b\n");
    writeFileSync(join(nanDir, "p2.csv"), "x,g\n");
    writeFileSync(join(nanDir, "p3.csv"), "x,g\nnan,b\n5,b\n3,c\ninf,c\n-inf,c\n7,d\nNaN,e\n,e\n4,\n-0.5,a\n");
    const t = readCsv(join(nanDir, "*.csv"), { dtypes: { x: "float64" } });
    const aggs = [
      col("x").max().alias("mx"),
      col("x").min().alias("mn"),
      col("x").sum().alias("s"),
      col("x").mean().alias("m"),
      col("x").count().alias("c"),
    ];
    const frames: [string, DataFrame, boolean][] = [
      ["partial aggregations", t.groupBy("g").agg(...aggs), false],
      [
        "aggregations",
        t
          .groupBy("g")
          .agg(
            ...aggs,
            col("x").median().alias("md"),
            col("x").quantile(0.25).alias("q"),
            col("x").nUnique().alias("nu"),
            col("x").first().alias("f"),
            col("x").last().alias("l"),
            col("x").std().alias("sd"),
          ),
        false,
      ],
      ["reductions", t.select(...aggs, col("x").median().alias("md"), col("x").nUnique().alias("nu")), false],
      [
        "comparisons",
        t.select(
          "g",
          "x",
          col("x").eq(col("x")).alias("a"),
          col("x").gt(100).alias("b"),
          col("x").le(1).alias("c"),
          col("x").div(2).alias("d"),
        ),
        false,
      ],
      ["sort", t.sort(["x", "g"], { descending: [true, false], nullsFirst: [true, false] }), true],
    ];
    for (const [label, frame, ordered] of frames) {
      const expected = await frame.compute({ cluster: fx.local });
      const actual = await frame.compute({ cluster: fx.dask });
      expectSameRows(tableRows(actual), tableRows(expected), label, ordered);
    }
  });

  const failure = (p: Promise<unknown>) =>
    p.then(
      () => null,
      (e: unknown) => e as BasinError,
    );

  it("a padded int value fails both (and onBadLines: skip drops its row on both)", async () => {
    const strict = readCsv(join(csvDir, "padded.csv"), { dtypes: { n: "int64" } });
    const local = await failure(strict.compute({ cluster: fx.local }));
    const dask = await failure(strict.compute({ cluster: fx.dask }));
    expect(local?.code).toBe("BASIN_PARSE");
    expect(dask?.code).toBe("BASIN_PARSE");
    expect(dask?.message).toMatch(/cannot parse " 4" as int64 in column "n"/);
    const skip = readCsv(join(csvDir, "padded.csv"), { dtypes: { n: "int64" }, onBadLines: "skip" });
    expectSameRows(
      tableRows(await skip.compute({ cluster: fx.dask })),
      tableRows(await skip.compute({ cluster: fx.local })),
      "skip",
    );
  });

  it("a blank line in a file of one column is a null row on both", async () => {
    const frame = readCsv(join(csvDir, "one_column.csv"));
    const local = tableRows(await frame.compute({ cluster: fx.local }));
    expect(local).toEqual([[1], [null], [3], [null]]);
    expectSameRows(tableRows(await frame.compute({ cluster: fx.dask })), local, "one column", true);
  });

  it("a value that does not parse is named at the same file:line:column on both (blank lines, quoted newlines, multi-byte text before it)", async () => {
    const where = (e: BasinError | null) => e?.message.match(/\w+\.csv:\d+:\d+/)?.[0];
    for (const file of ["located.csv", "padded.csv"]) {
      const frame = readCsv(join(csvDir, file), { dtypes: { n: "int64" } });
      const local = await failure(frame.compute({ cluster: fx.local }));
      const dask = await failure(frame.compute({ cluster: fx.dask }));
      expect(where(local)).toBe(file === "located.csv" ? "located.csv:5:8" : "padded.csv:3:3");
      expect(where(dask), dask?.message).toBe(where(local));
    }
  });

  it('a timestamp spelt "03/04/2024" fails both, never read month-first', async () => {
    const frame = readCsv(join(csvDir, "dates.csv"), { parseDates: ["t"] });
    const local = await failure(frame.compute({ cluster: fx.local }));
    const dask = await failure(frame.compute({ cluster: fx.dask }));
    expect(local?.code).toBe("BASIN_PARSE");
    expect(dask?.code).toBe("BASIN_PARSE");
    expect(dask?.message).toMatch(/cannot parse "03\/04\/2024" as timestamp in column "t"/);
  });

  it("dates pandas cannot hold fail on Dask naming that range, not as a cast error", async () => {
    const frame = readCsv(join(csvDir, "range.csv"), { dtypes: { d: "date" } });
    expect((await frame.compute({ cluster: fx.local })).numRows).toBe(3);
    const dask = await failure(frame.compute({ cluster: fx.dask }));
    expect(dask?.code).toBe("BASIN_IO");
    expect(dask?.message).toMatch(/column "d" holds a date outside 1677-09-22 … 2262-04-11.*"2300-01-01"/);
    expect(dask?.message).not.toMatch(/cannot cast/);
  });
});

// Values at the edges of each type, where pandas' own answers differ from the local engine's.
describe("Dask: edge values give the local engine's answers", () => {
  let duck: Duck;
  beforeAll(async () => {
    duck = await Duck.open();
  });
  afterAll(() => duck?.close());

  /** The frame's rows on Dask, checked against the local engine's (in order when `ordered`). */
  const same = async (frame: DataFrame, label: string, ordered = false): Promise<unknown[][]> => {
    const expected = await frame.compute({ cluster: fx.local });
    const actual = await frame.compute({ cluster: fx.dask });
    expect(actual.schema).toEqual(expected.schema);
    expectSameRows(tableRows(actual), tableRows(expected), label, ordered);
    return tableRows(actual);
  };

  it("grouped sums and means over ±Infinity are ±Infinity, or NaN with both (not pandas' Kahan NaN)", async () => {
    const k = [1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 6, 6, 7, 7];
    const f = [Infinity, 0, 3, Infinity, -Infinity, -Infinity, 1, Infinity, NaN, Infinity, null, -Infinity, 2, null];
    const t = fromColumns({ k, f }, { partitions: [5, 9], types: { k: "int64", f: "float64" } });
    const want = [
      [1, Infinity, Infinity],
      [2, NaN, NaN],
      [3, -Infinity, -Infinity],
      [4, NaN, NaN],
      [5, Infinity, Infinity],
      [6, -Infinity, -Infinity],
      [7, 2, 2],
    ];
    // Partial states (sum and mean only), and whole groups (with a median beside them).
    const partial = t.groupBy("k").agg(col("f").sum().alias("s"), col("f").mean().alias("m")).sort("k");
    expectSameRows(await same(partial, "partial sums", true), want, "partial sums", true);
    const whole = t
      .groupBy("k")
      .agg(col("f").sum().alias("s"), col("f").mean().alias("m"), col("f").median().alias("md"))
      .sort("k");
    expectSameRows(
      (await same(whole, "whole groups", true)).map((r) => r.slice(0, 3)),
      want,
      "whole groups",
      true,
    );
    // One group, no keys, across partitions.
    await same(t.filter(col("k").eq(1)).select(col("f").sum().alias("s"), col("f").mean().alias("m")), "reduction");
    const sql = (v: number | null) =>
      v === null ? "NULL" : Number.isNaN(v) ? "'NaN'::DOUBLE" : Number.isFinite(v) ? `${v}::DOUBLE` : `'${v}'::DOUBLE`;
    const duckRows = await duck.rows(
      `SELECT k, sum(f), avg(f) FROM (VALUES ${k.map((x, i) => `(${x}, ${sql(f[i]!)})`).join(",")}) t(k, f) GROUP BY k ORDER BY k`,
    );
    expectSameRows(
      duckRows.map((r) => r.map(Number)),
      want,
      "DuckDB",
      true,
    );
  });

  it("NaN and ±Infinity in groups of two keys, one of them null, aggregate as locally (no KeyError)", async () => {
    const t = fromColumns(
      {
        a: [1, null, 1, null, 2, 2, null, 1],
        b: ["x", null, "x", null, null, null, null, "y"],
        f: [NaN, 1, 2, Infinity, 3, -Infinity, NaN, 4],
      },
      { partitions: [3, 5], types: { a: "int64", b: "string", f: "float64" } },
    );
    await same(
      t
        .groupBy("a", "b")
        .agg(
          col("f").median().alias("md"),
          col("f").quantile(0.25).alias("q"),
          col("f").sum().alias("s"),
          col("f").mean().alias("m"),
          col("f").first().alias("fi"),
          col("f").last().alias("la"),
          col("f").nUnique().alias("u"),
          col("f").max().alias("mx"),
        ),
      "two keys",
    );
  });

  it("sorts order values exactly: close floats beside a null, NaN, -0, and int64 past 2^53", async () => {
    const close = fromColumns({ r: [0, 1, 2, 3], f: [3e-20, 1e-20, 2e-20, null] }, { types: { r: "int64" } });
    const rows = await same(close.sort("f"), "close floats", true);
    expect(rows.map((r) => r[0])).toEqual([1, 2, 0, 3]);
    const f = [3e-20, 1e-20, 2e-20, null, NaN, -0, 0, -Infinity, Infinity, NaN, 1 + 2 ** -52, 1, null, -1e-300];
    const floats = fromColumns(
      { r: f.map((_, i) => i), f },
      { partitions: [4, 10], types: { r: "int64", f: "float64" } },
    );
    await same(floats.sort("f"), "floats", true);
    await same(floats.sort(["f", "r"], { descending: [true, false], nullsFirst: [true, false] }), "floats desc", true);
    await same(floats.sort("f", { descending: true }).head(6), "floats top-n", true);
    const big = [9007199254740993n, 9007199254740992n, -9223372036854775808n, 9223372036854775807n, 9007199254740994n];
    const ints = fromColumns({ r: big.map((_, i) => i), i: big }, { types: { r: "int64", i: "int64" } });
    const asc = await same(ints.sort("i"), "int64", true);
    expect(asc.map((r) => r[0])).toEqual([2, 1, 0, 4, 3]);
    await same(ints.sort("i", { descending: true }), "int64 desc", true);
  });

  it("int64 values past 2^53 beside a null stay exact", async () => {
    const t = fromColumns(
      { i: [1n, null, 9007199254740993n, -9223372036854775807n], k: [1, 1, 2, 2] },
      { partitions: [3, 1], types: { i: "int64", k: "int64" } },
    );
    const rows = await same(t, "values", true);
    expect(rows.map((r) => r[0])).toEqual([1, null, 9007199254740993n, -9223372036854775807n]);
    await same(t.filter(col("i").gt(col("k"))), "filter");
    await same(t.select(col("i").fillNull(col("k")).alias("f")), "fillNull", true);
    await same(t.groupBy("k").agg(col("i").max().alias("mx"), col("i").first().alias("f")), "grouped");
  });

  it("str.strip strips ASCII whitespace only, as locally (not U+00A0, U+2003, U+0085, U+001C..U+001F)", async () => {
    const strs = [
      "\u00a0a\u2003",
      " \t\nb\v\f\r ",
      "\u0085c\u1680",
      "\u001fd\u001c",
      "\u3000 e \u3000",
      "",
      null,
      "  ",
    ];
    const t = fromColumns({ i: strs.map((_, i) => i), s: strs }, { types: { i: "int64", s: "string" } });
    const rows = await same(t.select("i", col("s").str.strip().alias("t")), "strip", true);
    expect(rows.map((r) => r[1])).toEqual([
      "\u00a0a\u2003",
      "b",
      "\u0085c\u1680",
      "\u001fd\u001c",
      "\u3000 e \u3000",
      "",
      null,
      "",
    ]);
  });

  it("grouped corr where no group has two rows is NaN per group (not a failed run)", async () => {
    const t = fromColumns({ k: [1, 2, 3], x: [1, 2, 3], y: [2, 4, 7] });
    const rows = await same(t.groupBy("k").agg(corr("x", "y").alias("c")).sort("k"), "one row each", true);
    expect(rows).toEqual([
      [1, NaN],
      [2, NaN],
      [3, NaN],
    ]);
  });

  it("corr is NaN for one pair or no spread, null with no pairs, as locally and in DuckDB", async () => {
    const k = [1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 5, 6, 6, 7, 7, null, null, 8, 8, 8];
    const x = [1, 1, 2, 3, 1, null, null, null, 1, 2, 4, 1, NaN, 1, Infinity, 2, 5, 0.1, 0.2, 0.3];
    const y = [2, 4, 7, 7, 3, 4, 1, 2, 1, 3, 2, 2, 3, 1, 2, 1, 3, 10, 30, 20];
    const t = fromColumns({ k, x, y }, { partitions: [7, 0, 13], types: { k: "int64", x: "float64", y: "float64" } });
    const grouped = t.groupBy("k").agg(corr("x", "y").alias("c"), count().alias("n")).sort("k");
    const rows = await same(grouped, "grouped", true);
    expect(rows.slice(0, 4).map((r) => r[1])).toEqual([NaN, NaN, NaN, null]);
    await same(t.groupBy("k", "y").agg(corr("x", "y").alias("c")), "two keys");
    await same(t.filter(col("k").eq(3)).select(corr("x", "y").alias("c")), "reduction over one pair");
    await same(t.filter(col("k").eq(4)).select(corr("x", "y").alias("c")), "reduction over no pairs");
    await same(t.select(corr("x", "y").alias("c")), "reduction");
    const sql = (v: number | null) => (v === null ? "NULL" : Number.isFinite(v) ? `${v}::DOUBLE` : `'${v}'::DOUBLE`);
    const values = k.map((g, i) => `(${g ?? "NULL"}, ${sql(x[i]!)}, ${sql(y[i]!)})`).join(",");
    const duckRows = await duck.rows(
      `SELECT k, corr(x, y), count(*) FROM (VALUES ${values}) t(k, x, y) WHERE k IS NULL OR k NOT IN (6, 7) GROUP BY k ORDER BY k NULLS LAST`,
    );
    // DuckDB fails a corr over NaN or an infinity (groups 6 and 7) as out of range.
    expectSameRows(
      rows.filter((r) => r[0] !== 6 && r[0] !== 7),
      duckRows.map((r) => [r[0] === null ? null : Number(r[0]), r[1], Number(r[2])]),
      "DuckDB",
      true,
    );
  });
});
