// Joins and sorts against DuckDB: every join type, int, string and two-column keys,
// null keys, duplicate keys, broadcast and hash strategies alike; multi-key sorts
// with directions, nulls first/last and stability across many partitions; top-n.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  col,
  count,
  fromColumns,
  LocalCluster,
  readCsv,
  type DataFrame,
  type JoinHow,
} from "../../engine/api/index.js";
import { makeTrips, TRIPS_SQL_COLUMNS, writeTripsCsv } from "../helpers/data.js";
import { Duck, expectSameRows, tableRows } from "../helpers/oracle.js";

let dirL: string;
let dirR: string;
let duck: Duck;
let cluster: LocalCluster;

beforeAll(async () => {
  dirL = writeTripsCsv(makeTrips(2500, 21), 3);
  dirR = writeTripsCsv(makeTrips(300, 22), 2);
  duck = await Duck.open();
  await duck.run(
    `CREATE TABLE l AS SELECT * FROM read_csv('${dirL}/*.csv', header=true, columns=${TRIPS_SQL_COLUMNS})`,
  );
  await duck.run(
    `CREATE TABLE r0 AS SELECT * FROM read_csv('${dirR}/*.csv', header=true, columns=${TRIPS_SQL_COLUMNS})`,
  );
  // A right side with one row per (k, city): many-to-one joins; r0 itself gives many-to-many.
  await duck.run("CREATE TABLE r AS SELECT k, city, sum(v) AS rv, count(*) AS rn FROM r0 GROUP BY k, city");
  cluster = new LocalCluster({ workers: 3 });
});

afterAll(async () => {
  await cluster.close();
  duck.close();
});

const left = () =>
  readCsv(`${dirL}/*.csv`, { blocksize: 4096, dtypes: { k: "int64", v: "int64" } }).select(
    "rid",
    "k",
    "city",
    "v",
    "f",
  );
const right0 = () => readCsv(`${dirR}/*.csv`, { blocksize: 2048, dtypes: { k: "int64", v: "int64" } });
const right = () => right0().groupBy("k", "city").agg(col("v").sum().alias("rv"), count().alias("rn"));

const HOWS: JoinHow[] = ["inner", "left", "right", "outer", "semi", "anti"];

function joinSql(how: JoinHow, on: string[], rightCols: string[], rightTable = "r"): string {
  const using = on.join(", ");
  const leftCols = ["rid", "k", "city", "v", "f"].map((c) =>
    on.includes(c) && (how === "right" || how === "outer") ? c : `l.${c}`,
  );
  if (how === "semi" || how === "anti")
    return `SELECT ${leftCols.join(", ")} FROM l ${how.toUpperCase()} JOIN ${rightTable} USING (${using})`;
  const kind = { inner: "INNER", left: "LEFT", right: "RIGHT", outer: "FULL OUTER" }[how];
  return `SELECT ${[...leftCols, ...rightCols].join(", ")} FROM l ${kind} JOIN ${rightTable} USING (${using})`;
}

async function check(frame: DataFrame, sql: string, label: string, ordered = false): Promise<void> {
  const expected = await duck.rows(sql);
  const planned = await frame.compute({ cluster });
  const hashed = await frame.compute({ cluster, optimize: { joinStrategy: false } });
  expectSameRows(tableRows(planned), expected, label, ordered);
  expectSameRows(tableRows(hashed), expected, `${label} (hash strategy)`, ordered);
}

describe("join", () => {
  it.each(HOWS)("%s on an int key with nulls matches DuckDB, broadcast and hash alike", async (how) => {
    const rk = right().filter(col("city").eq("plain"));
    await check(
      left().join(rk.select("k", "rv"), { on: "k", how }),
      joinSql(how, ["k"], ["r.rv"], "(SELECT k, rv FROM r WHERE city = 'plain') r"),
      how,
    );
  });

  it.each(HOWS)("%s on a unicode string key and on two keys matches DuckDB", async (how) => {
    const byCity = right().groupBy("city").agg(col("rv").sum().alias("cv"));
    await check(
      left().join(byCity, { on: "city", how }),
      joinSql(how, ["city"], ["r.cv"], "(SELECT city, sum(rv) AS cv FROM r GROUP BY city) r"),
      `${how} city`,
    );
    await check(
      left().join(right(), { on: ["k", "city"], how }),
      joinSql(how, ["k", "city"], ["r.rv", "r.rn"]),
      `${how} k,city`,
    );
  });

  it("many-to-many with duplicate keys on both sides, leftOn/rightOn and a suffix for clashing names", async () => {
    const r = right0().select(col("k").alias("key"), "v", "rid");
    const frame = left()
      .filter(col("rid").lt(300))
      .join(r, { leftOn: "k", rightOn: "key", how: "inner", suffix: "_r" });
    expect(frame.columns).toEqual(["rid", "k", "city", "v", "f", "key", "v_r", "rid_r"]);
    await check(
      frame,
      "SELECT l.rid, l.k, l.city, l.v, l.f, r0.k, r0.v, r0.rid FROM l JOIN r0 ON l.k = r0.k WHERE l.rid < 300",
      "m:n",
    );
  });

  it.each(HOWS)(
    "%s: a filter above the join goes to the sides that keep their rows and still matches DuckDB",
    async (how) => {
      // Conjuncts on a left column, on the key, on a right column, and one across both sides.
      const r = right().select(col("k"), col("city").alias("rcity"), col("rv"));
      const joined = left().join(r, { on: "k", how });
      const rightCols = how === "semi" || how === "anti" ? [] : ["r.rcity", "r.rv"];
      const onRight =
        how === "semi" || how === "anti" ? "" : " AND (rcity <> 'plain' OR rcity IS NULL) AND (rv > -500 OR v > 0)";
      const frame = joined.filter(
        how === "semi" || how === "anti"
          ? col("v").gt(-800).and(col("k").lt(15))
          : col("v")
              .gt(-800)
              .and(col("k").lt(15))
              .and(col("rcity").ne("plain").or(col("rcity").isNull()))
              .and(col("rv").gt(-500).or(col("v").gt(0))),
      );
      const sql = `SELECT * FROM (${joinSql(how, ["k"], rightCols, "(SELECT k, city AS rcity, rv FROM r) r")}) WHERE v > -800 AND k < 15${onRight}`;
      await check(frame, sql, `${how} pushdown`);
      // Plan shape: the left-only conjunct leaves the top filter unless the left side is null-extended.
      const top = frame.explain().split("\n")[0];
      if (how === "right" || how === "outer") expect(top).toContain('(col("v") > -800)');
      else expect(top).not.toContain('(col("v") > -800)');
    },
  );

  it("copies a filter on the left join key to the right side of an inner join", () => {
    const plan = left().join(right(), { on: "k" }).filter(col("k").eq(3)).explain();
    const lines = plan.split("\n");
    expect(lines[0]).toMatch(/^Join inner/);
    // Both scans end up filtered on k (the right one under its aggregation).
    expect(lines.filter((l) => l.includes('(col("k") == 3)')).length).toBe(2);
  });

  it("shows the planner's strategy in explain(): broadcast for a small right side, hash for an outer join", () => {
    expect(left().join(right(), { on: "k" }).explain()).toContain("Join inner on [k] strategy=broadcast");
    expect(left().join(right(), { on: "k", how: "outer" }).explain()).toContain("strategy=hash");
    expect(
      left()
        .join(right(), { on: "k" })
        .explain({ optimize: { joinStrategy: false } }),
    ).toContain("strategy=hash");
  });

  it("joins empty and one-row sides", async () => {
    const one = fromColumns({ k: [1], tag: ["ü"] });
    const none = fromColumns({ k: [] as number[], tag: [] as string[] }, { types: { k: "int64", tag: "string" } });
    const l = left().filter(col("rid").lt(50));
    const ones = (await l.join(one, { on: "k" }).compute({ cluster })).column("tag");
    expect(ones.every((t) => t === "ü")).toBe(true);
    expect((await l.join(none, { on: "k", how: "left" }).compute({ cluster })).numRows).toBe(50);
    expect((await l.join(none, { on: "k", how: "inner" }).compute({ cluster })).numRows).toBe(0);
    expect((await none.join(l, { on: "k", how: "outer" }).compute({ cluster })).numRows).toBe(50);
  });

  it("rejects keys of different types, unknown keys and bad options before running", () => {
    const s = fromColumns({ k: ["1"] });
    expect(() => left().join(s, { on: "k" })).toThrow(/left "k" is int64 and right "k" is string/);
    expect(() => left().join(right(), { on: "nope" })).toThrow(/column "nope" does not exist/);
    expect(() => left().join(right(), { on: "k", how: "cross" as JoinHow })).toThrow(/join how must be one of/);
    expect(() => left().join(right(), {})).toThrow(/join\(\) needs keys/);
  });
});

describe("sort", () => {
  const frame = () => readCsv(`${dirL}/*.csv`, { blocksize: 2048, dtypes: { k: "int64", v: "int64" } });

  it.each([
    [["k", "city"], [false, true], [false, false], "k ASC NULLS LAST, city DESC NULLS LAST"],
    [["city", "f"], [false, false], [true, false], "city ASC NULLS FIRST, f ASC NULLS LAST"],
    [
      ["day", "flag", "v"],
      [true, false, true],
      [true, true, false],
      "day DESC NULLS FIRST, flag ASC NULLS FIRST, v DESC NULLS LAST",
    ],
  ] as const)("by %j is stable across partitions and matches DuckDB", async (by, desc, nullsFirst, order) => {
    const t = await frame()
      .sort([...by], { descending: [...desc], nullsFirst: [...nullsFirst] })
      .compute({ cluster });
    const expected = await duck.rows(`SELECT * FROM l ORDER BY ${order}, rid`);
    expectSameRows(tableRows(t), expected, order, true);
  });

  it("top-n: head after sort keeps the first rows and shows as a top-n sort", async () => {
    const df = frame().sort("f", { descending: true }).head(15);
    expect(df.explain().split("\n")[0]).toBe("Sort [f desc] top 15");
    const expected = await duck.rows("SELECT * FROM l ORDER BY f DESC NULLS LAST, rid LIMIT 15");
    expectSameRows(tableRows(await df.compute({ cluster })), expected, "top-n", true);
    expectSameRows(tableRows(await df.compute({ cluster, optimize: { topN: false } })), expected, "top-n off", true);
  });

  it("sorts an aggregated result, and a frame with one distinct key", async () => {
    const agg = frame().groupBy("city").agg(count().alias("n")).sort("n", { descending: true });
    const counted = await agg.compute({ cluster });
    expectSameRows(tableRows(counted), await duck.rows("SELECT city, count(*) AS n FROM l GROUP BY city"), "agg sort");
    const n = counted.column("n") as number[];
    expect(n).toEqual([...n].sort((a, b) => b - a));
    const same = await frame().withColumns({ one: 1 }).sort("one").compute({ cluster });
    expect(same.column("rid")).toEqual([...Array(2500).keys()]);
  });

  it("names a missing sort column before running", () => {
    expect(() => frame().sort("nope")).toThrow(/column "nope" does not exist/);
    expect(() => frame().sort(["k"], { descending: [true, false] })).toThrow(/descending has 2 values for 1 columns/);
  });
});
