// A frame plan run on a cluster, its result left in the native store: one table,
// its partitions, or a given number of groups (persist). What the workbench keeps,
// what writers stream and what runPlan takes into JS all start here.
import { BasinError } from "../common/errors.js";
import { PLAN_VERSION, type Plan } from "../common/plan.js";
import type { Cluster, FrameRunOptions, StoredParts } from "../cluster/cluster.js";
import { defaultCluster } from "../cluster/default.js";
import type { Handle } from "../native/addon.js";
import type { OptimizeOptions } from "../plan/passes/pass.js";
import type { ProgressEvent } from "../scheduler/shell.js";

export type { StoredParts } from "../cluster/cluster.js";
export type { ProgressEvent } from "../scheduler/shell.js";

export interface ComputeOptions {
  /** Where to run (default: the process's local cluster), e.g. a LocalCluster or a DaskCluster. */
  cluster?: Cluster;
  optimize?: OptimizeOptions;
  onProgress?: (e: ProgressEvent) => void;
  /** Aborting cancels every queued task of the run. */
  signal?: AbortSignal;
}

/** A result left in the store: the caller owns `ref` and must release it. */
export interface StoredResult {
  ref: Handle;
  skippedLines: number;
  tasks: number;
}

/**
 * The cluster a run goes to: the one given, else the process's local cluster.
 *
 * @example
 * const cluster = clusterOf(options);
 */
export function clusterOf(options: Pick<ComputeOptions, "cluster">): Cluster {
  return options.cluster ?? defaultCluster();
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
 * one part). With `writeStep`, a writer's step runs after each partition as soon as
 * it is made (engine/run/write_frame.ts), and the parts are what those steps output.
 *
 * @example
 * const { refs } = await computeParts(df.toPlan());
 * for (const h of refs) native().release(h);
 */
export function computeParts(
  plan: Plan,
  options: ComputeOptions = {},
  writeStep?: FrameRunOptions["writeStep"],
): Promise<StoredParts> {
  return run(plan, options, true, undefined, writeStep);
}

/**
 * Like {@link computeParts}, but with `groups` partitions: adjacent ones are
 * concatenated in parallel tasks, and with fewer each is split into row ranges by
 * the task that makes it, so persist() keeps a frame as one table per worker without
 * concatenating the whole of it first. Dask's single result is sliced.
 *
 * @example
 * const { refs } = await computeGroups(df.toPlan(), {}, 2); // refs.length === 2
 */
export function computeGroups(plan: Plan, options: ComputeOptions, groups: number): Promise<StoredParts> {
  return run(plan, options, true, groups, undefined, true);
}

async function run(
  plan: Plan,
  options: ComputeOptions,
  parts: boolean,
  groups?: number,
  writeStep?: FrameRunOptions["writeStep"],
  persisted = false,
): Promise<StoredParts> {
  if (plan.version !== PLAN_VERSION)
    throw new BasinError(
      "BASIN_PLAN",
      `this plan has version ${plan.version}, but this Basin reads version ${PLAN_VERSION}; rebuild it with this Basin`,
    );
  return clusterOf(options).runFrame(plan, {
    optimize: options.optimize,
    onProgress: options.onProgress,
    signal: options.signal,
    parts,
    groups,
    writeStep,
    persisted,
  });
}
