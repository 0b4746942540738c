// `--cluster PROFILE` for a slurm profile: a SlurmCluster whose sbatch runs here, or
// on the login node of the profile's ssh profile (the scheduler then reached through
// a tunnel of that SSH connection).
import type { DaskClusterOptions } from "../dask/dask_cluster.js";
import type { SlurmProfile } from "../profiles.js";
import { loginNode } from "./login_node.js";
import { SlurmCluster, type SlurmEvent, type SlurmScale } from "./slurm_cluster.js";

/**
 * One line for a cluster event, as the CLI prints it.
 *
 * @example
 * describeSlurmEvent({ type: "removed", jobId: "12" }); // "SLURM job 12 removed (its worker was idle)"
 */
export function describeSlurmEvent(e: SlurmEvent): string {
  switch (e.type) {
    case "submitted":
      return `SLURM job ${e.jobId} submitted (${e.scheduler ? "Dask scheduler and a worker" : "a Dask worker"})`;
    case "connected":
      return `connected to the Dask scheduler at ${e.address} ${e.seconds.toFixed(1)} s after submitting`;
    case "removed":
      return `SLURM job ${e.jobId} removed (its worker was idle)`;
    default:
      return e.message;
  }
}

/**
 * The scale a profile asks for.
 *
 * @example
 * profileScale({ ...profile, minJobs: 1, maxJobs: 4 }); // { minJobs: 1, maxJobs: 4, idleSeconds: undefined }
 */
export function profileScale(p: SlurmProfile): SlurmScale {
  return p.minJobs !== undefined && p.maxJobs !== undefined
    ? { minJobs: p.minJobs, maxJobs: p.maxJobs, idleSeconds: p.idleSeconds }
    : { jobs: p.jobs ?? 1 };
}

/**
 * Starts the profile's cluster (submits its jobs and waits for the scheduler); close() cancels them.
 *
 * @example
 * const { cluster, close } = await openSlurm(findProfile("hpc") as SlurmProfile, { log: console.error });
 */
export async function openSlurm(
  p: SlurmProfile,
  options: Pick<DaskClusterOptions, "python"> & { log?: (line: string) => void } = {},
): Promise<SlurmCluster> {
  const login = await loginNode(p, "slurm profile");
  const slurm = new SlurmCluster({
    spec: p,
    scale: profileScale(p),
    runner: login.runner,
    reach: login.reach,
    directory: p.directory,
    startTimeout: p.startTimeout,
    python: options.python,
    onEvent: (e) => options.log?.(describeSlurmEvent(e)),
    via: login.via,
    onClose: login.close,
  });
  // A start that fails closes the cluster (cancelling what it submitted), and with it the SSH session.
  await slurm.start();
  return slurm;
}
