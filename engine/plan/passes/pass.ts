// What an optimizer pass is, and the switches that turn each one off: one pass per
// file in this folder, run in order by ../optimizer.ts.
import type { PlanNode } from "../../common/plan.js";

/** Switches for each optimizer pass; all are on by default. */
export interface OptimizeOptions {
  predicatePushdown?: boolean;
  projectionPushdown?: boolean;
  topN?: boolean;
  /** Off: multi-way inner joins run in the order written. */
  joinOrder?: boolean;
  /** Off: a semi/anti join stays above the inner joins its keys come through. */
  semiJoinPushdown?: boolean;
  /** Off: a semi/anti join's big right side is not first reduced to the left's keys. */
  semiJoinReduction?: boolean;
  /** Off: every join hash-partitions both sides. */
  joinStrategy?: boolean;
  /** Off: Parquet scans read every row group. */
  rowGroupPruning?: boolean;
}

/** One optimizer pass: a pure function from plan to plan. */
export interface OptimizerPass {
  name: keyof OptimizeOptions;
  run(node: PlanNode): PlanNode;
}
