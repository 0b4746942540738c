// The plan is resolved once, after optimizing: lowering's task steps and the Dask
// bridge's wire plan carry the very same resolved expressions, and a node that was
// never resolved cannot be lowered by mistake.
import { describe, expect, it } from "vitest";
import { col, count, fromColumns } from "../../engine/api/index.js";
import { bridgePlan } from "../../engine/cluster/dask/bridge_plan.js";
import type { PlanNode } from "../../engine/common/plan.js";
import type { Step } from "../../engine/graph/tasks.js";
import { lowerPlan } from "../../engine/lower/lower.js";
import { optimize } from "../../engine/plan/optimizer.js";
import { nativeOf, resolvePlan, type ResolvedNode } from "../../engine/plan/resolve_plan.js";

const frame = fromColumns(
  { d: ["2024-01-02", null, "2024-03-04"], k: ["a", "b", null], v: [1, null, 3] },
  { partitions: [1, 2] },
)
  .withColumns({ day: col("d").str.toDate("%Y-%m-%d") })
  .filter(col("day").ge("2024-01-01").or(col("day").isNull()))
  .withColumns({ w: col("v").mul(2).fillNull(0) });

function find(node: ResolvedNode, kind: PlanNode["kind"]): ResolvedNode {
  if (node.kind === kind) return node;
  const input = (node as { input?: ResolvedNode }).input;
  if (!input) throw new Error(`no ${kind} node`);
  return find(input, kind);
}

const steps = (root: PlanNode): Step[] => lowerPlan(root).tasks.flatMap((t) => t.steps);

describe("resolve once", () => {
  it("gives lowering and the Dask bridge the same resolved filter and projection", () => {
    const root = optimize(frame.node);
    const wire = bridgePlan(root).root as ResolvedNode;
    const lowered = steps(root);
    const filter = find(wire, "filter") as Extract<PlanNode, { kind: "filter" }>;
    // The string literal compared with a date column arrives coerced to a date (days since the epoch).
    expect(JSON.stringify(nativeOf(filter).predicate)).toContain(
      `"type":"date","value":${Date.UTC(2024, 0, 1) / 86_400_000}`,
    );
    expect(lowered.filter((s) => s.kind === "filter").map((s) => s.kind === "filter" && s.predicate)).toContainEqual(
      nativeOf(filter).predicate,
    );
    const projects = lowered.filter((s): s is Extract<Step, { kind: "project" }> => s.kind === "project");
    const project = find(wire, "project") as Extract<PlanNode, { kind: "project" }>;
    expect(projects.map((s) => s.exprs)).toContainEqual(nativeOf(project).exprs.map((e) => e.expr));
  });

  it("resolves an aggregation's keys and inputs as the bridge sends them", () => {
    const agg = optimize(
      frame.groupBy("k").agg(col("w").sum().alias("s"), count().alias("n"), col("v").quantile(0.5).alias("q")).node,
    );
    const wire = find(bridgePlan(agg).root as ResolvedNode, "aggregate") as Extract<PlanNode, { kind: "aggregate" }>;
    const { keys, aggs } = nativeOf(wire);
    expect(keys.map((k) => [k.name, k.expr.kind, k.expr.type])).toEqual([["k", "col", "string"]]);
    expect(aggs.map((a) => [a.name, a.op, a.arg?.type ?? null, a.q])).toEqual([
      ["s", "sum", "int64", undefined],
      ["n", "count", null, undefined],
      ["q", "quantile", "int64", 0.5],
    ]);
    // Lowering pre-projects exactly those inputs, then aggregates the projected columns.
    const pre = steps(agg).find(
      (s): s is Extract<Step, { kind: "project" }> => s.kind === "project" && s.names.includes("__agg0"),
    )!;
    expect(pre.exprs).toEqual([keys[0].expr, aggs[0].arg, aggs[2].arg]);
  });

  it("leaves the plan it was given unchanged and refuses an unresolved node", () => {
    const root = optimize(frame.node);
    const before = JSON.stringify(root);
    const resolved = resolvePlan(root);
    expect(JSON.stringify(root)).toBe(before);
    expect(resolved).not.toBe(root);
    expect(() => nativeOf(find(root, "filter") as Extract<PlanNode, { kind: "filter" }>)).toThrow(
      expect.objectContaining({ code: "BASIN_INTERNAL" }),
    );
  });
});
