// Row operations against DuckDB: unique/dropDuplicates (SELECT DISTINCT, QUALIFY
// row_number()), valueCounts, dropNulls, fillNull, rename, drop, tail, concat, per-group
// and frame top-k; and sample's guarantees. Data with nulls, unicode, a key holding
// half the rows, empty and one-row partitions; 1 and 4 workers must agree exactly.
import { describe, expect, it } from "vitest";
import { col, concat, count, fromColumns, type Table } from "../../engine/api/index.js";
import { expectSameRows, tableRows } from "../helpers/oracle.js";
import { describeTripsCases, tripsFixture, type TripsCase } from "../helpers/trips_fixture.js";

const ROWS = 3000;
const COLS = "rid, k, city, v, f, flag, day";
const fx = tripsFixture({ rows: ROWS, seed: 11 });

const cases: TripsCase[] = [
  {
    name: "unique() over every column",
    basin: (t) => t.select("k", "city", "flag").unique(),
    sql: "SELECT DISTINCT k, city, flag FROM t",
  },
  {
    name: "unique(subset) keeps each key's first row in frame order",
    basin: (t) => t.unique(["k", "city"]),
    sql: `SELECT ${COLS} FROM t QUALIFY row_number() OVER (PARTITION BY k, city ORDER BY rid) = 1`,
  },
  {
    name: "dropDuplicates on a unicode string key, first",
    basin: (t) => t.dropDuplicates("city", { keep: "first" }),
    sql: `SELECT ${COLS} FROM t QUALIFY row_number() OVER (PARTITION BY city ORDER BY rid) = 1`,
  },
  {
    name: "unique keep any: one row per key",
    basin: (t) => t.unique(["flag", "k"], { keep: "any" }).select("flag", "k"),
    sql: "SELECT DISTINCT flag, k FROM t",
  },
  {
    name: "unique on a float and a date",
    basin: (t) => t.filter(col("rid").lt(700)).unique(["f", "day"]).select("rid"),
    sql: "SELECT rid FROM t WHERE rid < 700 QUALIFY row_number() OVER (PARTITION BY f, day ORDER BY rid) = 1",
  },
  {
    name: "valueCounts of a skewed int key",
    basin: (t) => t.valueCounts("k"),
    sql: "SELECT k, count(*) AS count FROM t GROUP BY k ORDER BY count DESC, k",
    ordered: true,
  },
  {
    name: "valueCounts of two columns, ties by key",
    basin: (t) => t.valueCounts(["city", "flag"]),
    sql: "SELECT city, flag, count(*) AS count FROM t GROUP BY city, flag ORDER BY count DESC, city, flag",
    ordered: true,
  },
  {
    name: "valueCounts unsorted",
    basin: (t) => t.valueCounts("day", { sort: false }),
    sql: "SELECT day, count(*) FROM t GROUP BY day",
  },
  {
    name: "dropNulls() over every column",
    basin: (t) => t.dropNulls(),
    sql: `SELECT ${COLS} FROM t WHERE k IS NOT NULL AND city IS NOT NULL AND v IS NOT NULL AND f IS NOT NULL AND flag IS NOT NULL AND day IS NOT NULL ORDER BY rid`,
    ordered: true,
  },
  {
    name: "dropNulls(subset)",
    basin: (t) => t.dropNulls(["v", "city"]),
    sql: `SELECT ${COLS} FROM t WHERE v IS NOT NULL AND city IS NOT NULL ORDER BY rid`,
    ordered: true,
  },
  {
    name: "fillNull(number) fills the numeric columns",
    basin: (t) => t.fillNull(0),
    sql: "SELECT rid, coalesce(k, 0), city, coalesce(v, 0), coalesce(f, 0), flag, day FROM t ORDER BY rid",
    ordered: true,
  },
  {
    name: "fillNull(string) fills the string columns",
    basin: (t) => t.fillNull("—"),
    sql: "SELECT rid, k, coalesce(city, '—'), v, f, flag, day FROM t ORDER BY rid",
    ordered: true,
  },
  {
    name: "fillNull({ column: value }) with a date, a bool and an expression",
    basin: (t) => t.fillNull({ day: "2024-01-01", flag: false, v: col("k").mul(10) }),
    sql: "SELECT rid, k, city, coalesce(v, k * 10), f, coalesce(flag, false), coalesce(day, DATE '2024-01-01') FROM t ORDER BY rid",
    ordered: true,
  },
  {
    name: "rename and drop",
    basin: (t) => t.rename({ v: "value", city: "town" }).drop("flag", "day"),
    sql: "SELECT rid, k, city AS town, v AS value, f FROM t ORDER BY rid",
    ordered: true,
  },
  {
    name: "rename can swap two names",
    basin: (t) => t.rename({ v: "k", k: "v" }).select("rid", "k", "v"),
    sql: "SELECT rid, v AS k, k AS v FROM t ORDER BY rid",
    ordered: true,
  },
  {
    name: "tail keeps partition order",
    basin: (t) => t.tail(9),
    sql: `SELECT * FROM (SELECT ${COLS} FROM t ORDER BY rid DESC LIMIT 9) ORDER BY rid`,
    ordered: true,
  },
  {
    name: "tail after a filter, longer than some partitions",
    basin: (t) => t.filter(col("k").eq(3)).tail(40),
    sql: `SELECT * FROM (SELECT ${COLS} FROM t WHERE k = 3 ORDER BY rid DESC LIMIT 40) ORDER BY rid`,
    ordered: true,
  },
  {
    name: "tail(0) and tail beyond the rows",
    basin: (t) => t.filter(col("rid").lt(5)).tail(50),
    sql: `SELECT ${COLS} FROM t WHERE rid < 5 ORDER BY rid`,
    ordered: true,
  },
  {
    name: "groupBy(k).topK(2, v): db-benchmark q8, ties by frame order",
    basin: (t) => t.groupBy("k").topK(2, "v"),
    sql: `SELECT k, rid, city, v, f, flag, day FROM t WHERE v IS NOT NULL QUALIFY row_number() OVER (PARTITION BY k ORDER BY v DESC, rid) <= 2`,
  },
  {
    name: "topK smallest per unicode string key",
    basin: (t) => t.groupBy("city").topK(3, "f", { descending: false }),
    sql: `SELECT city, rid, k, v, f, flag, day FROM t WHERE f IS NOT NULL QUALIFY row_number() OVER (PARTITION BY city ORDER BY f ASC, rid) <= 3`,
  },
  {
    name: "topK per two keys by a date, an expression key",
    basin: (t) => t.groupBy(col("v").mod(4).alias("m"), "flag").topK(5, "day"),
    sql: `SELECT v % 4 AS m, flag, rid, k, city, v, f, day FROM t WHERE day IS NOT NULL QUALIFY row_number() OVER (PARTITION BY v % 4, flag ORDER BY day DESC, rid) <= 5`,
  },
  {
    name: "topK per group by a string, k above the group sizes",
    basin: (t) => t.groupBy("k").topK(400, "city").select("k", "rid"),
    sql: `SELECT k, rid FROM t WHERE city IS NOT NULL QUALIFY row_number() OVER (PARTITION BY k ORDER BY city DESC, rid) <= 400`,
  },
  {
    name: "topK with k above the small-k path, on ints per string key",
    basin: (t) => t.groupBy("city").topK(30, "v"),
    sql: `SELECT city, rid, k, v, f, flag, day FROM t WHERE v IS NOT NULL QUALIFY row_number() OVER (PARTITION BY city ORDER BY v DESC, rid) <= 30`,
  },
  {
    name: "frame topK of many rows, smallest first",
    basin: (t) => t.topK(250, "v", { descending: false }),
    sql: `SELECT ${COLS} FROM t WHERE v IS NOT NULL ORDER BY v, rid LIMIT 250`,
    ordered: true,
  },
  {
    name: "frame topK is best first",
    basin: (t) => t.topK(12, "v"),
    sql: `SELECT ${COLS} FROM t WHERE v IS NOT NULL ORDER BY v DESC, rid LIMIT 12`,
    ordered: true,
  },
  {
    name: "frame topK smallest floats",
    basin: (t) => t.topK(7, "f", { descending: false }),
    sql: `SELECT ${COLS} FROM t WHERE f IS NOT NULL ORDER BY f, rid LIMIT 7`,
    ordered: true,
  },
  {
    name: "concat keeps frame order, aligns columns by name",
    basin: (t) =>
      concat([
        t.filter(col("k").eq(3)),
        t.filter(col("k").eq(4)).select("day", "flag", "f", "v", "city", "k", "rid"),
        t.head(0),
      ]),
    sql: `SELECT ${COLS} FROM (SELECT *, 0 AS src FROM t WHERE k = 3 UNION ALL SELECT *, 1 FROM t WHERE k = 4) ORDER BY src, rid`,
    ordered: true,
  },
  {
    name: "concat widens int64 with float64",
    basin: (t) => concat([t.select("rid", "v"), t.select("rid", col("f").alias("v"))]),
    sql: "SELECT rid, v::DOUBLE FROM t UNION ALL SELECT rid, f FROM t",
  },
  {
    name: "aggregations over a concat read only what they need",
    basin: (t) =>
      concat([t, t.filter(col("k").eq(1))])
        .groupBy("city")
        .agg(count().alias("n"), col("v").sum().alias("s")),
    sql: "SELECT city, count(*), sum(v) FROM (SELECT * FROM t UNION ALL SELECT * FROM t WHERE k = 1) GROUP BY city",
  },
  {
    name: "count(*) over a concat",
    basin: (t) => concat([t, t.tail(3)]).select(count().alias("n")),
    sql: "SELECT count(*) + 3 FROM t",
  },
];

describeTripsCases(fx, cases);

describe.each(Object.keys(fx.sources))("%s", (name) => {
  const source = () => fx.sources[name]();

  describe("sample", () => {
    const rids = (t: Table) => t.column("rid") as number[];
    const increasing = (xs: number[]) => xs.every((x, i) => i === 0 || xs[i - 1] < x);

    it("{ n } takes exactly n distinct rows, in frame order, the same for a seed on any number of workers", async () => {
      const df = source().sample({ n: 100 }, { seed: 42 });
      const a = await df.compute({ cluster: fx.clusters.one });
      const b = await df.compute({ cluster: fx.clusters.four });
      expect(a.numRows).toBe(100);
      expect(tableRows(b)).toEqual(tableRows(a));
      expect(increasing(rids(a))).toBe(true);
      // Every sampled row is a whole row of the input.
      expectSameRows(
        tableRows(a),
        await fx.duck.rows(`SELECT ${COLS} FROM t WHERE rid IN (${rids(a).join(", ")}) ORDER BY rid`),
        "sample rows",
        true,
      );
      const other = await source().sample({ n: 100 }, { seed: 43 }).compute({ cluster: fx.clusters.four });
      expect(rids(other)).not.toEqual(rids(a));
      expect(
        (
          await source()
            .sample({ n: ROWS + 10 })
            .compute({ cluster: fx.clusters.four })
        ).numRows,
      ).toBe(ROWS);
      expect((await source().sample({ n: 0 }).compute({ cluster: fx.clusters.one })).numRows).toBe(0);
    });

    it("{ fraction } keeps each row with that probability, deterministically", async () => {
      const df = source().sample({ fraction: 0.3 }, { seed: 7 });
      const a = await df.compute({ cluster: fx.clusters.one });
      const b = await df.compute({ cluster: fx.clusters.four });
      expect(tableRows(b)).toEqual(tableRows(a));
      expect(a.numRows).toBeGreaterThan(ROWS * 0.3 - 120);
      expect(a.numRows).toBeLessThan(ROWS * 0.3 + 120);
      expect(increasing(rids(a))).toBe(true);
      expect((await source().sample({ fraction: 0 }).compute({ cluster: fx.clusters.one })).numRows).toBe(0);
      expect((await source().sample({ fraction: 1 }).compute({ cluster: fx.clusters.one })).numRows).toBe(ROWS);
      // A column subset samples the same rows: keys depend on row positions only.
      const narrow = await source()
        .sample({ fraction: 0.3 }, { seed: 7 })
        .select("rid")
        .compute({ cluster: fx.clusters.four });
      expect(rids(narrow)).toEqual(rids(a));
    });
  });
});

describe("plans", () => {
  it("explain() shows the new nodes", () => {
    const df = fromColumns({ k: [1, 2], v: [3, 4] });
    expect(df.unique("k").explain()).toContain("Distinct on [k] keep=first");
    expect(df.groupBy("k").topK(2, "v").explain()).toContain('TopK 2 by v desc per [col("k")]');
    expect(df.tail(3).explain()).toContain("Tail 3");
    expect(df.sample({ n: 1 }, { seed: 5 }).explain()).toContain("Sample n=1 seed=5");
    expect(concat([df, df]).explain()).toContain("Union 2 inputs");
  });

  it("rename, drop, fillNull and dropNulls keep the schema as documented", () => {
    const df = fromColumns({ a: [1, null], s: ["x", null], b: [true, null] });
    expect(df.rename({ a: "z" }).columns).toEqual(["z", "s", "b"]);
    expect(df.drop("s").columns).toEqual(["a", "b"]);
    expect(df.fillNull(1.5).schema).toEqual([
      { name: "a", type: "float64" },
      { name: "s", type: "string" },
      { name: "b", type: "bool" },
    ]);
    expect(df.fillNull(true).schema).toEqual(df.schema);
    expect(df.groupBy("s").topK(1, "a").columns).toEqual(["s", "a", "b"]);
  });
});
