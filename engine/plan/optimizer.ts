import type { PlanNode } from "../common/plan.js";
import { predicatePushdown } from "./passes/predicate_pushdown.js";
import { projectionPushdown } from "./passes/projection_pushdown.js";

/** Switches for each optimizer pass; all are on by default. */
export interface OptimizeOptions {
  predicatePushdown?: boolean;
  projectionPushdown?: boolean;
}

/** One optimizer pass: a pure function from plan to plan. */
export interface OptimizerPass {
  name: keyof OptimizeOptions;
  run(node: PlanNode): PlanNode;
}

// Order matters: predicates move down first, so that projection pushdown then
// sees which columns the pushed-down predicates read at the scan.
const PASSES: readonly OptimizerPass[] = [predicatePushdown, projectionPushdown];

/**
 * Runs every enabled pass over the plan.
 *
 * @example
 * optimize(df.node, { predicatePushdown: false })
 */
export function optimize(node: PlanNode, options: OptimizeOptions = {}): PlanNode {
  return PASSES.reduce((n, pass) => (options[pass.name] === false ? n : pass.run(n)), node);
}
