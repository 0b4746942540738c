// Out-of-core lowering (engine/lower/out_of_core.ts): under a memory budget, a
// group-by (or distinct), hash join or sort whose estimated input exceeds what one task may hold
// gets enough partitions for one to fit (grace hash / range runs), a broadcast join
// whose right side does not fit becomes a hash join, the result can stay in parts,
// and explain() says so. Without a budget the lowering is unchanged.
import { describe, expect, it } from "vitest";
import { col, count, fromColumns, type DataFrame } from "../../engine/api/index.js";
import { lowerPlan } from "../../engine/lower/lower.js";
import { partBytes, shufflePlan, type MemoryBudget } from "../../engine/lower/out_of_core.js";
import type { TaskGraph } from "../../engine/graph/tasks.js";
import { explain } from "../../engine/run/explain.js";
import { optimize } from "../../engine/plan/optimizer.js";

const N = 1000;
/** 1000 rows × 2 int64 columns: 16 000 bytes estimated, in 4 partitions. */
const frame = (name = "k") =>
  fromColumns(
    { [name]: Array.from({ length: N }, (_, i) => i % 97), v: Array.from({ length: N }, (_, i) => i) },
    { partitions: 4 },
  );
/** 16 000 bytes of input against partBytes(small) = 8 000 × 0.5 / 1 / 3 ≈ 1 333 bytes a partition: 12 partitions. */
const small: MemoryBudget = { limit: 8000, workers: 1 };
const roomy: MemoryBudget = { limit: 1e9, workers: 8 };

const lower = (df: DataFrame, budget?: MemoryBudget, parts = false) =>
  lowerPlan(optimize(df.toPlan().root), { budget, parts });
const tasksWith = (g: TaskGraph, kind: string, pred: (s: Record<string, unknown>) => boolean = () => true) =>
  g.tasks.filter((t) => t.steps.some((s) => s.kind === kind && pred(s as Record<string, unknown>))).length;

describe("out-of-core lowering", () => {
  it("sizes partitions so that one fits a share of the limit per worker", () => {
    expect(partBytes(small)).toBeCloseTo((8000 * 0.5) / 3);
    expect(shufflePlan(16_000, 4, small)).toMatchObject({ parts: 12, outOfCore: true });
    expect(shufflePlan(16_000, 4, roomy)).toMatchObject({ parts: 4, outOfCore: false });
    expect(shufflePlan(16_000, 4, undefined)).toMatchObject({ parts: 4, outOfCore: false });
    expect(shufflePlan(1e15, 4, small).parts).toBe(1024); // capped
  });

  it("splits a group-by into grace-hash buckets under the budget, and not without one", () => {
    const q = frame().groupBy("k").agg(col("v").sum().alias("v"), count().alias("n"));
    // The buckets' merges of partial states: full aggregations of them (merge_partials.ts).
    const final = (g: TaskGraph) => tasksWith(g, "aggregate", (s) => s.mode === "full");
    expect(final(lower(q))).toBe(4);
    expect(final(lower(q, roomy))).toBe(4);
    expect(final(lower(q, small))).toBe(12);
    expect(tasksWith(lower(q, small), "hashPartition", (s) => s.parts === 12)).toBe(4);
  });

  it("hash-partitions a join into more buckets, instead of broadcasting a right side too large for one task", () => {
    const q = frame().join(frame("k").select(col("k"), col("v").alias("w")), { on: "k", how: "inner" });
    const joins = (g: TaskGraph) => tasksWith(g, "join");
    expect(tasksWith(lower(q), "hashPartition")).toBe(0); // broadcast: the right side is small
    expect(joins(lower(q))).toBe(4);
    expect(tasksWith(lower(q, small), "hashPartition")).toBe(8);
    expect(joins(lower(q, small))).toBeGreaterThanOrEqual(24); // 32 000 bytes ≈ 24 buckets
  });

  it("splits distinct rows into grace-hash buckets as well", () => {
    const q = frame().unique("k");
    const buckets = (g: TaskGraph) => tasksWith(g, "hashPartition", (s) => s.parts === 12);
    expect(buckets(lower(q))).toBe(0);
    expect(buckets(lower(q, small))).toBe(4);
    expect(explain(optimize(q.toPlan().root), 0, small)).toContain("out-of-core: grace hash, ≥ 12 partitions");
  });

  it("range-partitions a sort into runs that fit", () => {
    const q = frame().sort("v");
    const runs = (g: TaskGraph) => tasksWith(g, "rangePartition", (s) => s.parts === 12);
    expect(runs(lower(q))).toBe(0);
    expect(runs(lower(q, small))).toBe(4);
  });

  it("keeps the result in parts when asked (no final concatenation)", () => {
    const q = frame().groupBy("k").agg(col("v").sum().alias("v"));
    const g = lower(q, small, true);
    expect(g.partitioned).toBe(true);
    expect(g.tasks.find((t) => t.key === g.output)!.steps).toEqual([{ kind: "parts" }]);
    const whole = lower(q, small);
    expect(whole.partitioned).toBeUndefined();
    expect(whole.tasks.find((t) => t.key === whole.output)!.steps[0].kind).toBe("concat");
  });

  it("explain() names the out-of-core strategy and the sizes it came from", () => {
    const q = frame().groupBy("k").agg(col("v").sum().alias("v")).sort("k");
    const text = explain(optimize(q.toPlan().root), 0, small);
    expect(text).toMatch(/Sort \[k asc\] out-of-core: range-partitioned runs, ≥ \d+ partitions/);
    expect(text).toMatch(
      /Aggregate keys=\[col\("k"\)\] .* out-of-core: grace hash, ≥ 12 partitions spilled to disk and processed one at a time \(input ≈ 16 kB, ≤ 1.33 kB a partition under memoryLimit 8 kB \/ 1 workers\)/,
    );
    expect(explain(optimize(q.toPlan().root), 0, roomy)).not.toContain("out-of-core");
  });
});
