import { BasinError } from "../common/errors.js";
import { PLAN_VERSION, type Plan } from "../common/plan.js";
import { lowerPlan } from "../lower/lower.js";
import { native, type Handle, type JsTable } from "../native/addon.js";
import { splitRows } from "../native/split_rows.js";
import { takeTable } from "../native/take_table.js";
import { withResident } from "../memory/resident.js";
import { optimize, type OptimizeOptions } from "../plan/optimizer.js";
import type { ProgressEvent } from "../scheduler/shell.js";
import { Table } from "../api/table.js";
import { defaultCluster } from "./default.js";
import type { LocalCluster } from "./local.js";
import { DaskCluster } from "./dask/dask_cluster.js";

export interface ComputeOptions {
  /** Where to run (default: the process's local cluster); a DaskCluster runs it on Dask. */
  cluster?: LocalCluster | DaskCluster;
  optimize?: OptimizeOptions;
  onProgress?: (e: ProgressEvent) => void;
  /** Aborting cancels every queued task of the run. */
  signal?: AbortSignal;
}

/**
 * The local cluster a task graph runs on. Arrays, bags and delayed calls run on
 * Basin's own workers only: a DaskCluster is refused with a clear error.
 *
 * @example
 * const cluster = localCluster(options, "arrays");
 */
export function localCluster(options: Pick<ComputeOptions, "cluster">, what: string): LocalCluster {
  if (options.cluster instanceof DaskCluster)
    throw new BasinError("BASIN_PLAN", `${what} run on Basin's local cluster only; compute them without the Dask cluster option`);
  return options.cluster ?? defaultCluster();
}

/** A result left in the store: the caller owns `ref` and must release it. */
export interface StoredResult {
  ref: Handle;
  skippedLines: number;
  tasks: number;
}

/** A result left in the store as its partitions, in order: the caller owns and must release every one. */
export interface StoredParts {
  refs: Handle[];
  skippedLines: number;
  tasks: number;
}

/**
 * Optimizes, lowers and runs a plan, leaving the result in the native store.
 *
 * @example
 * const { ref } = await computeStored(df.toPlan());
 * native().release(ref);
 */
export async function computeStored(plan: Plan, options: ComputeOptions = {}): Promise<StoredResult> {
  const { refs, skippedLines, tasks } = await run(plan, options, false);
  return { ref: refs[0], skippedLines, tasks };
}

/**
 * Optimizes, lowers and runs a plan, leaving the result in the store as its
 * partitions: never concatenated into one table, so a result larger than the
 * memory limit stays spillable part by part while the caller reads it (on Dask,
 * one part).
 *
 * @example
 * const { refs } = await computeParts(df.toPlan());
 * for (const h of refs) native().release(h);
 */
export function computeParts(plan: Plan, options: ComputeOptions = {}): Promise<StoredParts> {
  return run(plan, options, true);
}

/**
 * Like {@link computeParts}, but with `groups` partitions: adjacent ones are
 * concatenated in parallel tasks, and with fewer each is split into row ranges by
 * the task that makes it, so persist() keeps a frame as one table per worker without
 * concatenating the whole of it first. Dask's single result is sliced here.
 *
 * @example
 * const { refs } = await computeGroups(df.toPlan(), {}, 2); // refs.length === 2
 */
export function computeGroups(plan: Plan, options: ComputeOptions, groups: number): Promise<StoredParts> {
  return run(plan, options, true, groups);
}

async function run(plan: Plan, options: ComputeOptions, parts: boolean, groups?: number): Promise<StoredParts> {
  if (plan.version !== PLAN_VERSION)
    throw new BasinError("BASIN_PLAN", `this plan has version ${plan.version}, but this Basin reads version ${PLAN_VERSION}; rebuild it with this Basin`);
  if (options.cluster instanceof DaskCluster) {
    const ref = await options.cluster.runPlan(plan, { optimize: options.optimize, signal: options.signal });
    return { refs: groups && groups > 1 ? splitReleasing(ref, groups) : [ref], skippedLines: 0, tasks: 0 };
  }
  const cluster = localCluster(options, "dataframes");
  const graph = lowerPlan(optimize(plan.root, options.optimize), { budget: cluster.budget, parts, groups });
  const { refs, skippedLines } = await cluster.run(graph, { onProgress: options.onProgress, signal: options.signal });
  return { refs, skippedLines, tasks: graph.tasks.length };
}

/** Dask's single result as `groups` row ranges; the whole result is released. */
function splitReleasing(ref: Handle, groups: number): Handle[] {
  try {
    return splitRows(ref, groups);
  } finally {
    native().release(ref);
  }
}

/**
 * Runs a plan and moves the result into JS memory part by part (the store never
 * holds the whole result as one table; its buffers are handed over without copies:
 * moved, or shared with the tables that hold them).
 *
 * @example
 * const table = await computePlan(df.toPlan(), { onProgress: console.log });
 */
export async function computePlan(plan: Plan, options: ComputeOptions = {}): Promise<Table> {
  const { refs, skippedLines, tasks } = await computeParts(plan, options);
  const parts: JsTable[] = [];
  try {
    for (let i = 0; i < refs.length; i++) {
      // Taking releases the handle, even when the copy out fails.
      parts.push(
        await withResident(refs[i], (h) => {
          refs[i] = -1;
          return takeTable(h);
        }),
      );
    }
  } finally {
    for (const h of refs) if (h !== -1) native().release(h);
  }
  return new Table(parts, { skippedLines, tasks });
}
