import { availableParallelism } from "node:os";
import type { MemoryBudget } from "../lower/out_of_core.js";
import { resolveMemory } from "../memory/limits.js";
import type { Cluster } from "./cluster.js";
import { LocalCluster, type LocalClusterOptions } from "./local.js";

let cluster: LocalCluster | undefined;
let options: LocalClusterOptions = {};

/**
 * Sets the options of the default cluster (before its first use), e.g. from
 * `basin run --workers 2`.
 *
 * @example
 * configureDefaultCluster({ workers: 2 });
 */
export function configureDefaultCluster(o: LocalClusterOptions): void {
  options = o;
}

function envWorkers(): number | undefined {
  return process.env.BASIN_WORKERS ? Number(process.env.BASIN_WORKERS) : undefined;
}

/** The process's default cluster: a LocalCluster, started on first use. */
export function defaultCluster(): LocalCluster {
  cluster ??= new LocalCluster({ ...options, workers: options.workers ?? envWorkers() });
  return cluster;
}

/** The default cluster's memory budget, without starting it (for explain()). */
export function defaultBudget(): MemoryBudget {
  if (cluster) return cluster.budget;
  return {
    limit: resolveMemory(options).hostLimit,
    workers: options.workers ?? envWorkers() ?? availableParallelism(),
  };
}

/** The default cluster if something has started it, without starting one. */
export function startedDefaultCluster(): LocalCluster | undefined {
  return cluster;
}

/** Stops the default cluster's workers (a later compute starts a new one). */
export async function closeDefaultCluster(): Promise<void> {
  const c = cluster;
  cluster = undefined;
  await c?.close();
}

/**
 * The cluster whose workers share this process's store, for work that stays here
 * (arrays, and views of kept results) while frames may run elsewhere: `cluster`
 * when it is local, else undefined, which means the default cluster.
 *
 * @example
 * runPlan({ kind: "array", node }, { cluster: localPart(options.cluster) });
 */
export function localPart(cluster: Cluster | undefined): Cluster | undefined {
  return cluster?.kind === "local" ? cluster : undefined;
}
