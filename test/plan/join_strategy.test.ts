// The join strategy follows estimated sizes: a right side is broadcast when its
// expected bytes (estimated rows of the columns it keeps) are small and it is not the
// larger side of the join; otherwise both sides are hash-partitioned. Only plan
// metadata is read here: tables of the stated sizes, as persist() describes them.
import { expect, it } from "vitest";
import { col, DataFrame, LocalCluster } from "../../engine/api/index.js";
import type { PlanNode } from "../../engine/common/plan.js";

function stored(rows: number, names: string[], ranges: Record<string, { min: number; max: number }> = {}): DataFrame {
  const node: PlanNode = {
    kind: "stored",
    handles: [],
    bytes: rows * names.length * 8,
    ranges,
    schema: names.map((name) => ({ name, type: "int64" as const })),
  };
  return new DataFrame(node);
}

const wide = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
// lineitem-like facts (6M rows, 16 columns, 768 MB) and orders-like rows (1.5M, 9 columns, 108 MB).
const facts = stored(6_000_000, ["fk", ...wide("f", 15)], { fk: { min: 1, max: 1_500_000 } });
const orders = stored(1_500_000, ["ok", "od", ...wide("o", 7)], {
  ok: { min: 1, max: 1_500_000 },
  od: { min: 0, max: 2400 },
});
const customers = stored(150_000, ["ck", ...wide("c", 7)], { ck: { min: 1, max: 150_000 } });

it("broadcasts a filtered projection of a large persisted table (its columns kept, its rows estimated)", () => {
  const recent = orders.filter(col("od").ge(2300)).select("ok", "od");
  const plan = facts.join(recent, { leftOn: "fk", rightOn: "ok" }).select("f1", "od").explain();
  expect(plan).toMatch(/Join inner on \[fk = ok\] strategy=broadcast/);
});

it("hash-partitions a right side larger than the left, so its hash table is built in parallel parts", () => {
  const plan = customers.join(orders.select("ok", "od"), { leftOn: "ck", rightOn: "ok", how: "left" }).explain();
  expect(plan).toMatch(/Join left on \[ck = ok\] strategy=hash/);
});

it("still broadcasts a small right side larger than a tiny left", () => {
  const few = stored(10, ["ck"]);
  const some = stored(50_000, ["ck", "c1"]);
  const plan = few.join(some, { on: "ck", how: "left" }).explain();
  expect(plan).toMatch(/Join left on \[ck\] strategy=broadcast/);
});

it("keeps a broadcast join in memory under a limit when its right side is a small aggregate of a large table", async () => {
  // A per-key aggregate of lineitem-sized facts, filtered to a few keys: its upper bound
  // is the facts' size, its estimate a few thousand rows.
  const cluster = new LocalCluster({ workers: 2, memoryLimit: "2GB" });
  try {
    const keys = customers.filter(col("ck").lt(2000)).select("ck");
    const perKey = facts
      .join(keys, { leftOn: "fk", rightOn: "ck", how: "semi" })
      .groupBy("fk")
      .agg(col("f1").mean().alias("m"));
    const plan = facts.join(perKey, { on: "fk" }).explain({ cluster });
    const join = plan.split("\n").find((l) => l.startsWith("Join inner on [fk]"));
    expect(join).toMatch(/strategy=broadcast$/);
  } finally {
    await cluster.close();
  }
});
