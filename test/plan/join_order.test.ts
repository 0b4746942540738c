// Multi-way inner joins run in an order chosen from estimated sizes: the largest
// relation probes, filtered dimensions are joined first, and the answer (names,
// types, column order, rows) is exactly the written order's.
import { rmSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { col, fromColumns, readParquet, type DataFrame } from "../../engine/api/index.js";
import type { PlanNode } from "../../engine/common/plan.js";
import { LocalCluster } from "../../engine/cluster/local.js";
import { optimize } from "../../engine/plan/optimizer.js";
import { seededRandom } from "../../engine/common/random.js";
import { expectSameRows, tableRows } from "../helpers/oracle.js";
import { tpchTestData } from "../tpch/tpch_data.js";

let dir: string;
let cluster: LocalCluster;
const t = (name: string) => readParquet(`${dir}/${name}.parquet`);

beforeAll(async () => {
  ({ dir } = await tpchTestData());
  cluster = new LocalCluster({ workers: 2 });
});
afterAll(async () => {
  await cluster.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The right (build) side of every join in the plan. */
function buildSides(n: PlanNode, out: PlanNode[] = []): PlanNode[] {
  if (n.kind === "join") out.push(n.right);
  for (const c of n.kind === "join" ? [n.left, n.right] : "input" in n ? [n.input] : []) buildSides(c, out);
  return out;
}
const scans = (n: PlanNode): string[] =>
  n.kind === "scanFile"
    ? n.files.map((f) => f.split("/").pop()!)
    : n.kind === "join"
      ? [...scans(n.left), ...scans(n.right)]
      : "input" in n
        ? scans(n.input)
        : [];

async function sameAnswer(df: DataFrame): Promise<void> {
  const chosen = await df.compute({ cluster });
  const written = await df.compute({ cluster, optimize: { joinOrder: false } });
  expect(chosen.schema).toEqual(written.schema);
  expectSameRows(tableRows(chosen), tableRows(written), "join order");
}

it("joins TPC-H Q5's tables around lineitem: the fact table probes and is never built", async () => {
  const orders = t("orders").filter(col("o_orderdate").ge("1994-01-01").and(col("o_orderdate").lt("1995-01-01")));
  const df = t("customer")
    .join(orders, { leftOn: "c_custkey", rightOn: "o_custkey" })
    .join(t("lineitem"), { leftOn: "o_orderkey", rightOn: "l_orderkey" })
    .join(t("supplier"), { leftOn: ["l_suppkey", "c_nationkey"], rightOn: ["s_suppkey", "s_nationkey"] })
    .join(t("nation"), { leftOn: "s_nationkey", rightOn: "n_nationkey" })
    .join(t("region").filter(col("r_name").eq("ASIA")), { leftOn: "n_regionkey", rightOn: "r_regionkey" });
  const written = optimize(df.node, { joinOrder: false });
  expect(buildSides(written).some((b) => scans(b).includes("lineitem.parquet"))).toBe(true);
  const chosen = optimize(df.node);
  expect(buildSides(chosen).some((b) => scans(b).includes("lineitem.parquet"))).toBe(false);
  // The region filter reaches nation before nation meets supplier or customer.
  const regionBuild = buildSides(chosen).find((b) => scans(b).join() === "region.parquet");
  expect(regionBuild).toBeDefined();
  expect(df.explain()).toMatch(/Join inner on \[n_regionkey = r_regionkey\][^\n]*\n\s+ScanParquet nation/);
  await sameAnswer(df);
});

it("keeps the written names, suffixes, dropped keys and column order, with null keys and empty partitions", async () => {
  const r = seededRandom(3);
  const n = 600;
  const key = (m: number) => Array.from({ length: n }, () => (r() < 0.05 ? null : Math.floor(r() * m)));
  const parts = [0, 1, n - 201, 0, 200];
  const a = fromColumns({ k: key(50), x: key(7), v: key(1000) }, { partitions: parts });
  const b = fromColumns(
    { k: key(50), x: key(7), name: key(9).map((v) => (v === null ? null : `ü${v}`)) },
    { partitions: parts },
  );
  const c = fromColumns(
    { id: Array.from({ length: 50 }, (_, i) => i), x: key(7).slice(0, 50) },
    { partitions: [25, 0, 25] },
  );
  const d = fromColumns({ x: [0, 1, 2, 3, 4, 5, 6], label: ["a", "b", "c", "d", "e", "f", "g"] }, { partitions: 1 });
  const df = a
    .join(b, { on: "k" }) // b.k dropped, b.x → x_right
    .join(c, { leftOn: "k", rightOn: "id", suffix: "_c" }) // c.x → x_c
    .join(d, { leftOn: "x_c", rightOn: "x", suffix: "_d" }); // d.x → x_d
  expect(df.columns).toEqual(["k", "x", "v", "x_right", "name", "id", "x_c", "x_d", "label"]);
  const plan = optimize(df.node);
  expect(plan.schema).toEqual(df.schema);
  expect(df.explain()).not.toEqual(df.explain({ optimize: { joinOrder: false } }));
  await sameAnswer(df);
  const rows = tableRows(await df.compute({ cluster }));
  expect(rows.length).toBeGreaterThan(1000);
});

it("turns a two-way join round when the written build side is the larger: the big table probes", async () => {
  const parts = t("part").filter(col("p_size").eq(15));
  const df = parts.join(t("lineitem"), { leftOn: "p_partkey", rightOn: "l_partkey" });
  const chosen = optimize(df.node);
  expect(buildSides(chosen).map(scans)).toEqual([["part.parquet"]]);
  expect(chosen.schema).toEqual(df.schema);
  // The other way round it stays as written.
  const kept = optimize(t("lineitem").join(parts, { leftOn: "l_partkey", rightOn: "p_partkey" }).node);
  expect(kept.kind).toBe("join");
  expect(buildSides(kept).map(scans)).toEqual([["part.parquet"]]);
  await sameAnswer(df);
});

it("keeps the written order where a key has no statistics on either side (a low-cardinality key could multiply rows)", () => {
  const names = (n: number, m: number) => Array.from({ length: n }, (_, i) => `k${i % m}`);
  const a = fromColumns({ s: names(3000, 3000), g: names(3000, 5) });
  const b = fromColumns({ s2: names(10, 10), g2: names(10, 5) });
  const c = fromColumns({ g3: names(5, 5), label: ["a", "b", "c", "d", "e"] });
  const df = a.join(b, { leftOn: "s", rightOn: "s2" }).join(c, { leftOn: "g2", rightOn: "g3" });
  expect(df.explain()).toEqual(df.explain({ optimize: { joinOrder: false } }));
});

it("orders joins of persisted tables from their ranges: the fact table probes, a low-cardinality key is known as one", async () => {
  const names = ["customer", "orders", "lineitem", "supplier", "nation"];
  const stored = Object.fromEntries(
    await Promise.all(names.map(async (n) => [n, await t(n).persist({ cluster, partitions: 3 })] as const)),
  );
  try {
    const customer = stored.customer.node;
    expect(customer.kind === "stored" && customer.ranges?.c_nationkey).toEqual({ min: 0, max: 24 });
    const df = stored.customer
      .join(stored.orders, { leftOn: "c_custkey", rightOn: "o_custkey" })
      .join(stored.lineitem, { leftOn: "o_orderkey", rightOn: "l_orderkey" })
      .join(stored.supplier, { leftOn: ["l_suppkey", "c_nationkey"], rightOn: ["s_suppkey", "s_nationkey"] })
      .join(stored.nation, { leftOn: "s_nationkey", rightOn: "n_nationkey" });
    const chosen = optimize(df.node);
    expect(chosen.schema).toEqual(df.schema);
    expect(buildSides(optimize(df.node, { joinOrder: false })).some((b) => stored.lineitem.node === b)).toBe(true);
    expect(buildSides(chosen).some((b) => JSON.stringify(b).includes('"l_orderkey"'))).toBe(false);
    await sameAnswer(df);
  } finally {
    for (const s of Object.values(stored)) s.unpersist();
  }
});

it("keeps a join used twice whole (TPC-H Q17's part ⋈ lineitem): lineitem is read and joined once", async () => {
  const lines = t("part")
    .filter(col("p_brand").eq("Brand#23"))
    .join(t("lineitem"), { leftOn: "p_partkey", rightOn: "l_partkey" });
  const average = lines.groupBy("p_partkey").agg(col("l_quantity").mean().alias("avg_quantity"));
  const df = lines
    .join(average, { on: "p_partkey" })
    .filter(col("l_quantity").lt(col("avg_quantity").mul(0.5)))
    .agg(col("l_extendedprice").sum().alias("total"));
  // Joins that meet lineitem's rows (it under them with no other join between), counted
  // once per object: the optimized plan is a DAG whose shared subplans are one object.
  const joinsMeetingLineitem = (root: PlanNode): number => {
    const found = new Set<PlanNode>();
    const reads = (n: PlanNode): boolean =>
      n.kind === "scanFile"
        ? scans(n).includes("lineitem.parquet")
        : n.kind !== "join" && "input" in n && reads(n.input);
    const walk = (n: PlanNode): void => {
      if (n.kind === "join" && (reads(n.left) || reads(n.right))) found.add(n);
      for (const c of n.kind === "join" ? [n.left, n.right] : "input" in n ? [n.input] : []) walk(c);
    };
    walk(root);
    return found.size;
  };
  expect(joinsMeetingLineitem(optimize(df.node, { joinOrder: false })), "as written").toBe(1);
  expect(joinsMeetingLineitem(optimize(df.node)), "not reordered into lineitem ⋈ (part ⋈ average)").toBe(1);
  await sameAnswer(df);
});
