import { parentCounts } from "../plan/shared_plan.js";
import { exprToString } from "../common/expr.js";
import { childrenOf, type NamedExpr, type PlanNode } from "../common/plan.js";
import { basename } from "node:path";
import type { Cluster } from "../cluster/cluster.js";
import { defaultBudget } from "../cluster/default.js";
import { outOfCoreNote, type MemoryBudget } from "../lower/out_of_core.js";
import { optimize } from "../plan/optimizer.js";
import type { OptimizeOptions } from "../plan/passes/pass.js";

function list(exprs: NamedExpr[]): string {
  return exprs
    .map((e) =>
      e.expr.kind === "col" && e.expr.name === e.name ? exprToString(e.expr) : `${exprToString(e.expr)} as ${e.name}`,
    )
    .join(", ");
}

const FORMAT_NAMES = { parquet: "Parquet", json: "Json", arrow: "Arrow" } as const;

function line(node: PlanNode): string {
  switch (node.kind) {
    case "scanCsv": {
      const files = node.files.length === 1 ? basename(node.files[0]) : `${node.files.length} files`;
      const cols = node.columns ? ` columns=[${node.columns.join(", ")}]` : "";
      const pred = node.predicate ? ` predicate=${exprToString(node.predicate)}` : "";
      return `ScanCsv ${files}${cols}${pred}`;
    }
    case "scanFile": {
      const files = node.files.length === 1 ? basename(node.files[0]) : `${node.files.length} files`;
      const cols = node.columns ? ` columns=[${node.columns.join(", ")}]` : "";
      const pred = node.predicate ? ` predicate=${exprToString(node.predicate)}` : "";
      const groups = node.rowGroups
        ? ` row groups: ${node.rowGroups.kept.reduce((n, k) => n + k.length, 0)} of ${node.rowGroups.total}`
        : "";
      const clustered = node.rowGroups?.clustered ? ` clustered by [${node.rowGroups.clustered.join(", ")}]` : "";
      return `Scan${FORMAT_NAMES[node.format]} ${files}${cols}${pred}${groups}${clustered}`;
    }
    case "values":
      return `Values partitions=${node.partitions.length} columns=[${node.schema.map((f) => f.name).join(", ")}]`;
    case "fromBag":
      return `FromBag ${node.bag.kind} columns=[${node.schema.map((f) => f.name).join(", ")}]`;
    case "stored":
      return `Stored partitions=${node.handles.length} columns=[${node.schema.map((f) => f.name).join(", ")}]${node.clustered ? ` clustered by [${node.clustered.join(", ")}]` : ""}`;
    case "project":
      return `Project ${list(node.exprs)}`;
    case "filter":
      return `Filter ${exprToString(node.predicate)}`;
    case "aggregate":
      return `Aggregate keys=[${list(node.keys)}] aggs=[${node.aggs.map((a) => `${exprToString(a.expr)}`).join(", ")}]`;
    case "head":
      return `Head ${node.n}`;
    case "window":
      return `Window ${list(node.windows)}`;
    case "sort": {
      const keys = node.keys
        .map((k) => `${k.name} ${k.descending ? "desc" : "asc"}${k.nullsFirst ? " nulls first" : ""}`)
        .join(", ");
      return `Sort [${keys}]${node.limit !== undefined ? ` top ${node.limit}` : ""}`;
    }
    case "join": {
      const on = node.leftOn.map((l, i) => (l === node.rightOn[i] ? l : `${l} = ${node.rightOn[i]}`)).join(", ");
      return `Join ${node.how} on [${on}]${node.strategy ? ` strategy=${node.strategy}` : ""}`;
    }
    case "tail":
      return `Tail ${node.n}`;
    case "distinct":
      return `Distinct on [${node.keys.join(", ")}] keep=${node.keep}`;
    case "topK":
      return `TopK ${node.k} by ${node.by} ${node.descending ? "desc" : "asc"}${node.keys.length ? ` per [${list(node.keys)}]` : ""}`;
    case "sample":
      return `Sample ${node.n !== undefined ? `n=${node.n}` : `fraction=${node.fraction}`} seed=${node.seed}`;
    case "union":
      return `Union ${node.inputs.length} inputs`;
    case "stack":
      return `Stack ${node.blocks.length} blocks of [${node.schema.map((f) => f.name).join(", ")}]`;
  }
}

/**
 * Renders a plan as an indented tree, root first; with a memory budget, shuffles
 * that run out of core say how they are partitioned.
 *
 * @example
 * explain(df.node) // "Filter (col(\"x\") > 1)\n  ScanCsv data.csv"
 */
export function explain(node: PlanNode, depth = 0, budget?: MemoryBudget): string {
  return explainShared(node, depth, budget, parentCounts(node), new Map());
}

// A subplan read by several parents is computed once: printed once, numbered, then referred to.
function explainShared(
  node: PlanNode,
  depth: number,
  budget: MemoryBudget | undefined,
  parents: Map<PlanNode, number>,
  shown: Map<PlanNode, number>,
): string {
  const indent = "  ".repeat(depth);
  const seen = shown.get(node);
  if (seen !== undefined) return `${indent}(shared subplan [${seen}] above, computed once)`;
  if ((parents.get(node) ?? 0) > 1) shown.set(node, shown.size + 1);
  const tag = shown.has(node) ? `[${shown.get(node)}] ` : "";
  const own = indent + tag + line(node) + outOfCoreNote(node, budget);
  return [own, ...childrenOf(node).map((c) => explainShared(c, depth + 1, budget, parents, shown))].join("\n");
}

/**
 * A frame plan optimized and explained as it would run on `cluster` (default: the
 * default cluster, whose memory budget is known before it starts).
 *
 * @example
 * process.stderr.write(explainPlan(df.toPlan().root, { cluster }));
 */
export function explainPlan(root: PlanNode, options: { optimize?: OptimizeOptions; cluster?: Cluster } = {}): string {
  const budget = options.cluster ? options.cluster.budget : defaultBudget();
  return explain(optimize(root, options.optimize), 0, budget);
}
