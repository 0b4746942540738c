import { childrenOf, withChildren, type PlanNode } from "../common/plan.js";
import { predicatePushdown } from "./passes/predicate_pushdown.js";
import { projectionPushdown } from "./passes/projection_pushdown.js";
import { topN } from "./passes/top_n.js";
import { joinOrder } from "./passes/join_order.js";
import { joinStrategy } from "./passes/join_strategy.js";
import { semiJoinReduction } from "./passes/semi_join_reduction.js";
import { semiJoinPushdown } from "./passes/semi_join_pushdown.js";
import { rowGroupPruning } from "./passes/row_group_pruning.js";
import type { OptimizeOptions, OptimizerPass } from "./passes/pass.js";
import { shareSubplans } from "./shared_plan.js";

// Order matters: head-after-sort folds into a top-n first (a filter must not
// then slip below it); predicates move down next, so that the join order is chosen
// on filtered sizes and projection pushdown
// sees which columns the pushed-down predicates read at the scan; join strategies
// are chosen last, on the pruned plan whose sizes they estimate. Row groups are
// pruned with the predicate each Parquet scan finally got. Passes rebuild the plan
// as a tree; equal subtrees are made one object again at the end, so that a frame
// used twice is computed once.
const PASSES: readonly OptimizerPass[] = [
  topN,
  predicatePushdown,
  joinOrder,
  semiJoinPushdown,
  semiJoinReduction,
  projectionPushdown,
  joinStrategy,
  rowGroupPruning,
];

/**
 * Runs every enabled pass over the plan.
 *
 * @example
 * optimize(df.node, { predicatePushdown: false })
 */
export function optimize(node: PlanNode, options: OptimizeOptions = {}): PlanNode {
  const out = PASSES.reduce((n, pass) => (options[pass.name] === false ? n : pass.run(n)), node);
  return shareSubplans(options.joinStrategy === false ? hashJoins(out) : out);
}

/** Every join hash-partitioned: the strategy when the planner's choice is switched off. */
function hashJoins(node: PlanNode): PlanNode {
  const n = withChildren(node, childrenOf(node).map(hashJoins));
  return n.kind === "join" ? { ...n, strategy: "hash" } : n;
}
