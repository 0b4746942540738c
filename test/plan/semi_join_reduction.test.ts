// A semi or anti join whose right side is much larger than its left first reduces the
// right side to the rows with a left key (building on the small side); the answers
// are the unreduced join's, null keys and two-column keys included.
import { afterAll, beforeAll, expect, it } from "vitest";
import { col, fromColumns, type DataFrame } from "../../engine/api/index.js";
import { LocalCluster } from "../../engine/cluster/local.js";
import { seededRandom } from "../../engine/common/random.js";
import { expectSameRows, tableRows } from "../helpers/oracle.js";

let cluster: LocalCluster;
beforeAll(() => (cluster = new LocalCluster({ workers: 2 })));
afterAll(() => cluster.close());

const r = seededRandom(9);
const key = (n: number, m: number) => Array.from({ length: n }, () => (r() < 0.04 ? null : Math.floor(r() * m)));
const small = fromColumns({ k: key(300, 2000), j: key(300, 3), v: key(300, 100) }, { partitions: [100, 0, 200] });
const big = fromColumns(
  { bk: key(20_000, 2000), bj: key(20_000, 3), w: key(20_000, 9) },
  { partitions: [5000, 1, 0, 9000, 5999] },
);

async function sameAsUnreduced(df: DataFrame): Promise<void> {
  expect(df.explain()).not.toEqual(df.explain({ optimize: { semiJoinReduction: false } }));
  const got = tableRows(await df.compute({ cluster }));
  const want = tableRows(await df.compute({ cluster, optimize: { semiJoinReduction: false } }));
  expectSameRows(got, want, df.explain().split("\n")[0]);
  expect(got.length).toBeGreaterThan(0);
}

it("reduces a big right side to the left's keys before a semi join, with the same answer", async () => {
  const df = small.join(big.filter(col("w").lt(7)), { leftOn: "k", rightOn: "bk", how: "semi" });
  expect(df.explain()).toMatch(/Join semi on \[k = bk\][\s\S]*Join semi on \[bk\][\s\S]*Project col\("k"\) as bk/);
  await sameAsUnreduced(df);
});

it("gives the same anti join, null keys kept on the left, and the same two-key semi join", async () => {
  await sameAsUnreduced(small.join(big, { leftOn: "k", rightOn: "bk", how: "anti" }));
  await sameAsUnreduced(small.join(big, { leftOn: ["k", "j"], rightOn: ["bk", "bj"], how: "semi" }));
});

it("leaves a semi join alone when its right side is the small one", () => {
  const df = big.join(small, { leftOn: "bk", rightOn: "k", how: "semi" });
  expect(df.explain()).toEqual(df.explain({ optimize: { semiJoinReduction: false } }));
});

it("reduces below a filter, projection and aggregation grouped by the key, with the same answers", async () => {
  // "keys with more than one distinct w": the reduction lands on the aggregation's input.
  const having = big
    .groupBy("bk")
    .agg(col("w").nUnique().alias("ws"), col("bj").sum().alias("js"))
    .filter(col("ws").gt(1))
    .select("bk", "js");
  for (const how of ["semi", "anti"] as const) {
    const df = small.join(having, { leftOn: "k", rightOn: "bk", how });
    expect(df.explain()).toMatch(/Aggregate keys=\[col\("bk"\)\][^\n]*\n\s+Join semi on \[bk\]/);
    await sameAsUnreduced(df);
  }
  // Grouped by more than the key: still exact, a group's rows share every key.
  const wider = big.groupBy("bk", "bj").agg(col("w").max().alias("m"));
  await sameAsUnreduced(small.join(wider, { leftOn: ["k", "j"], rightOn: ["bk", "bj"], how: "semi" }));
});

it("keeps the reduction above an aggregation not grouped by its key", async () => {
  const byPair = big.groupBy("bk", "bj").agg(col("w").max().alias("m"));
  const df = small.join(byPair, { leftOn: "v", rightOn: "m", how: "semi" });
  expect(df.explain()).toMatch(/Join semi on \[m\][^\n]*\n\s+Aggregate keys=\[col\("bk"\), col\("bj"\)\]/);
  await sameAsUnreduced(df);
});

it("reduces an inner join's big side below its aggregation by the join keys (TPC-H Q20), with the same answers", async () => {
  const shipped = big.groupBy("bk", "bj").agg(col("w").sum().alias("ws"), col("w").count().alias("n"));
  const wanted = small.filter(col("v").lt(50));
  // The aggregated side on the left, then on the right: the semi join lands on its input.
  const left = shipped.join(wanted, { leftOn: ["bk", "bj"], rightOn: ["k", "j"] });
  expect(left.explain()).toMatch(/Aggregate keys=\[col\("bk"\), col\("bj"\)\][^\n]*\n\s+Join semi on \[bk, bj\]/);
  await sameAsUnreduced(left);
  const right = wanted.join(shipped, { leftOn: ["k", "j"], rightOn: ["bk", "bj"] });
  expect(right.explain()).toMatch(/Aggregate keys=\[col\("bk"\), col\("bj"\)\][^\n]*\n\s+Join semi on \[bk, bj\]/);
  await sameAsUnreduced(right);
  // Grouped by more than the join key: still exact.
  await sameAsUnreduced(shipped.join(wanted, { leftOn: "bk", rightOn: "k" }));
});

it("leaves an inner join alone when its big side does not aggregate by the join keys", () => {
  for (const df of [
    small.join(big, { leftOn: "k", rightOn: "bk" }),
    big.groupBy("bj").agg(col("w").sum().alias("ws")).join(small, { leftOn: "bj", rightOn: "j" }),
  ])
    expect(df.explain()).toEqual(df.explain({ optimize: { semiJoinReduction: false } }));
});
