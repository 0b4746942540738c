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

/** The process's default cluster: a LocalCluster, started on first use. */
export function defaultCluster(): LocalCluster {
  const env = process.env.BASIN_WORKERS ? Number(process.env.BASIN_WORKERS) : undefined;
  cluster ??= new LocalCluster({ ...options, workers: options.workers ?? env });
  return cluster;
}

/** Stops the default cluster's workers (a later compute starts a new one). */
export async function closeDefaultCluster(): Promise<void> {
  const c = cluster;
  cluster = undefined;
  await c?.close();
}
