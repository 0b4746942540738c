// The plan as the Dask bridge reads it: the Basin plan itself (PLAN_VERSION 2), with
// each node's expressions resolved by the engine's one type checker (resolve.ts) in a
// `native` field, so the Python side computes but never re-derives types or coercions.
import { PLAN_VERSION, childrenOf, withChildren, type Plan, type PlanNode } from "../../common/plan.js";
import type { Schema } from "../../common/types.js";
import type { NativeExpr } from "../../graph/kernel_args.js";
import { aggParts, resolveExpr } from "../../plan/resolve.js";
import type { AggOp } from "../../common/expr.js";

export interface BridgeAgg {
  name: string;
  op: AggOp;
  arg: NativeExpr | null;
  arg2?: NativeExpr;
  q?: number;
}

/** Resolved expressions of one node (which fields are set depends on its kind). */
export interface BridgeNative {
  exprs?: { name: string; expr: NativeExpr }[];
  keys?: { name: string; expr: NativeExpr }[];
  aggs?: BridgeAgg[];
  predicate?: NativeExpr;
}

export type BridgeNode = PlanNode & { native?: BridgeNative };

function nativeOf(node: PlanNode): BridgeNative | undefined {
  switch (node.kind) {
    case "scanCsv": {
      if (!node.predicate) return undefined;
      const scanned: Schema = (node.columns ?? node.fileSchema.map((f) => f.name)).map((n) => node.fileSchema.find((f) => f.name === n)!);
      return { predicate: resolveExpr(node.predicate, scanned, node.loc) };
    }
    case "project": return { exprs: node.exprs.map((e) => ({ name: e.name, expr: resolveExpr(e.expr, node.input.schema, node.loc) })) };
    case "filter": return { predicate: resolveExpr(node.predicate, node.input.schema, node.loc) };
    case "aggregate": {
      const input = node.input.schema;
      const keys = node.keys.map((k) => ({ name: k.name, expr: resolveExpr(k.expr, input, node.loc) }));
      const aggs = node.aggs.map((a): BridgeAgg => {
        const p = aggParts(a.expr, a.name, input, node.loc);
        return {
          name: p.name, op: p.op, arg: p.arg ? resolveExpr(p.arg, input, node.loc) : null,
          ...(p.arg2 ? { arg2: resolveExpr(p.arg2, input, node.loc) } : {}),
          ...(p.q !== undefined ? { q: p.q } : {}),
        };
      });
      return { keys, aggs };
    }
    default: return undefined;
  }
}

function annotate(node: PlanNode): BridgeNode {
  const withKids = withChildren(node, childrenOf(node).map(annotate));
  const native = nativeOf(node);
  return native ? { ...withKids, native } : withKids;
}

/**
 * The optimized plan with resolved expressions, ready for resources/dask_bridge.
 *
 * @example
 * const wire = bridgePlan(optimize(df.toPlan().root));
 */
export function bridgePlan(root: PlanNode): Plan {
  return { version: PLAN_VERSION, root: annotate(root) };
}
