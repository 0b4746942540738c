// The plan as the Dask bridge reads it: the Basin plan itself (PLAN_VERSION 2),
// resolved once by plan/resolve_plan.ts as lowering reads it, so each node's
// expressions travel in its `native` field and the Python side computes but never
// re-derives types or coercions.
import { PLAN_VERSION, type Plan, type PlanNode } from "../../common/plan.js";
import { resolvePlan } from "../../plan/resolve_plan.js";

/**
 * The optimized plan with resolved expressions, ready for resources/dask_bridge.
 *
 * @example
 * const wire = bridgePlan(optimize(df.toPlan().root));
 */
export function bridgePlan(root: PlanNode): Plan {
  return { version: PLAN_VERSION, root: resolvePlan(root) };
}
