import { BasinError } from "../common/errors.js";
import { PLAN_VERSION, type Plan } from "../common/plan.js";
import { lowerPlan } from "../lower/lower.js";
import { native, type Handle } from "../native/addon.js";
import { optimize, type OptimizeOptions } from "../plan/optimizer.js";
import type { ProgressEvent } from "../scheduler/shell.js";
import { Table } from "../api/table.js";
import { defaultCluster } from "./default.js";
import type { LocalCluster } from "./local.js";

export interface ComputeOptions {
  /** Where to run (default: the process's local cluster). */
  cluster?: LocalCluster;
  optimize?: OptimizeOptions;
  onProgress?: (e: ProgressEvent) => void;
  /** Aborting cancels every queued task of the run. */
  signal?: AbortSignal;
}

/**
 * Optimizes, lowers and runs a plan; copies the result into JS memory and frees it
 * from the store.
 *
 * @example
 * const table = await computePlan(df.toPlan(), { onProgress: console.log });
 */
export async function computePlan(plan: Plan, options: ComputeOptions = {}): Promise<Table> {
  const { ref, skippedLines, tasks } = await computeToStore(plan, options);
  try {
    return new Table(native().tableToJs(ref), { skippedLines, tasks });
  } finally {
    native().release(ref);
  }
}

/**
 * Optimizes, lowers and runs a plan, leaving the result in the native store: the
 * caller owns `ref` and must release it (writers stream it out from there).
 *
 * @example
 * const { ref } = await computeToStore(df.toPlan()); try { ... } finally { native().release(ref); }
 */
export async function computeToStore(plan: Plan, options: ComputeOptions = {}): Promise<{ ref: Handle; skippedLines: number; tasks: number }> {
  if (plan.version !== PLAN_VERSION)
    throw new BasinError("BASIN_PLAN", `this plan has version ${plan.version}, but this Basin reads version ${PLAN_VERSION}; rebuild it with this Basin`);
  const graph = lowerPlan(optimize(plan.root, options.optimize));
  const cluster = options.cluster ?? defaultCluster();
  const { ref, skippedLines } = await cluster.run(graph, { onProgress: options.onProgress, signal: options.signal });
  return { ref, skippedLines, tasks: graph.tasks.length };
}
