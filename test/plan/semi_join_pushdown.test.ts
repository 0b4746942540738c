// A semi or anti join whose keys come from one side of an inner join below it (or
// the kept side of a left join) filters that side instead, when that side is
// estimated no larger than the join; answers are the unpushed plan's and DuckDB's,
// with null keys, empty and one-row partitions.
import { afterAll, beforeAll, expect, it } from "vitest";
import { col, fromColumns, type DataFrame } from "../../engine/api/index.js";
import { LocalCluster } from "../../engine/cluster/local.js";
import { seededRandom } from "../../engine/common/random.js";
import { Duck, expectSameRows, tableRows } from "../helpers/oracle.js";

let cluster: LocalCluster;
let duck: Duck;

const r = seededRandom(21);
const ints = (n: number, m: number, nulls = 0.05) =>
  Array.from({ length: n }, () => (r() < nulls ? null : Math.floor(r() * m)));
const FACTS = 20_000;
const facts = { fk: ints(FACTS, 500), dk: ints(FACTS, 50), x: ints(FACTS, 1000, 0) };
const dims = { d: [...Array.from({ length: 60 }, (_, i) => i % 55)], seg: ints(60, 5) };
const few = { d: [3, 7, 11, 19, 42], seg: [0, 1, 2, 3, 4] };
const wanted = { s: [1, 3, null] };
const keys = { k: ints(200, 500) };

const frame = (cols: Record<string, (number | null)[]>, partitions?: number[]) => fromColumns(cols, { partitions });
const F = frame(facts, [5000, 0, 1, 9000, 5999]);
const D = frame(dims, [30, 0, 30]);
const FEW = frame(few);
const W = frame(wanted);
const K = frame(keys, [100, 100]);

beforeAll(async () => {
  cluster = new LocalCluster({ workers: 2 });
  duck = await Duck.open();
  const tables: Record<string, Record<string, (number | null)[]>> = { f: facts, dims, few, wanted, keys };
  for (const [name, cols] of Object.entries(tables)) {
    const names = Object.keys(cols);
    const rows = cols[names[0]].map((_, i) => `(${names.map((c) => cols[c][i] ?? "NULL").join(", ")})`);
    await duck.run(`CREATE TABLE ${name} (${names.map((c) => `${c} BIGINT`).join(", ")})`);
    await duck.run(`INSERT INTO ${name} VALUES ${rows.join(", ")}`);
  }
});
afterAll(() => {
  cluster.close();
  duck.close();
});

const off = { semiJoinPushdown: false };

/** The frame's answer with the pass and without it, and DuckDB's; the plans differ exactly when `moved`. */
async function same(df: DataFrame, sql: string, moved: boolean): Promise<void> {
  expect(df.explain() !== df.explain({ optimize: off }), "pushed").toBe(moved);
  const got = tableRows(await df.compute({ cluster }));
  expect(got.length).toBeGreaterThan(0);
  expectSameRows(got, tableRows(await df.compute({ cluster, optimize: off })), "unpushed");
  expectSameRows(got, await duck.rows(sql), "DuckDB");
}

it("filters the small side of an inner join instead of the join's output (TPC-H Q11's nation)", async () => {
  for (const how of ["semi", "anti"] as const) {
    const df = F.join(D, { leftOn: "dk", rightOn: "d" }).join(W, { leftOn: "seg", rightOn: "s", how });
    expect(df.explain()).toMatch(new RegExp(`Join inner on \\[dk = d\\][\\s\\S]*Join ${how} on \\[seg = s\\]`));
    const cond =
      how === "semi"
        ? "seg IN (SELECT s FROM wanted WHERE s IS NOT NULL)"
        : "NOT EXISTS (SELECT 1 FROM wanted WHERE s = seg)";
    await same(df, `SELECT fk, dk, x, d, seg FROM f JOIN dims ON dk = d WHERE ${cond}`, true);
  }
});

it("passes projections and filters, into the left side when it is no larger than the join (Q18's orders)", async () => {
  const df = F.join(D, { leftOn: "dk", rightOn: "d" })
    .filter(col("x").lt(700))
    .select("fk", "x", "seg")
    .join(K, { leftOn: "fk", rightOn: "k", how: "semi" });
  expect(df.explain()).toMatch(/Join inner on \[dk = d\][\s\S]*Join semi on \[fk = k\]/);
  await same(df, "SELECT fk, x, seg FROM f JOIN dims ON dk = d WHERE x < 700 AND fk IN (SELECT k FROM keys)", true);
});

it("stays above a join that cuts the side its keys come from (Q21's lineitem)", async () => {
  const df = F.join(FEW, { leftOn: "dk", rightOn: "d" }).join(K, { leftOn: "fk", rightOn: "k", how: "semi" });
  await same(df, "SELECT fk, dk, x, d, seg FROM f JOIN few ON dk = d WHERE fk IN (SELECT k FROM keys)", false);
});

it("goes into a left join's kept side only: the other side's columns are null on unmatched rows", async () => {
  const left = F.join(FEW, { leftOn: "dk", rightOn: "d", how: "left" });
  await same(
    left.join(K, { leftOn: "fk", rightOn: "k", how: "semi" }),
    "SELECT fk, dk, x, d, seg FROM f LEFT JOIN few ON dk = d WHERE fk IN (SELECT k FROM keys)",
    true,
  );
  await same(
    left.join(W, { leftOn: "seg", rightOn: "s", how: "anti" }),
    "SELECT fk, dk, x, d, seg FROM f LEFT JOIN few ON dk = d WHERE NOT EXISTS (SELECT 1 FROM wanted WHERE s = seg)",
    false,
  );
});
