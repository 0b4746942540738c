// A runner profile, used either way: as a Cluster (`basin serve --cluster RUNNER`,
// the API), or to run one pipeline file inside the job (`basin run --cluster
// RUNNER`); submitted here, or on the login node of the profile's ssh profile.
import type { DaskClusterOptions } from "../dask/dask_cluster.js";
import type { RunnerProfile } from "../profiles.js";
import { loginNode } from "../slurm/login_node.js";
import { runOnRunner, type RunOnRunnerOptions } from "./run_on_runner.js";
import { RunnerCluster } from "./runner_cluster.js";

/**
 * Starts the profile's job with rank 1 holding the client's slot and connects to its
 * scheduler once every worker has joined; close() cancels the job.
 *
 * @example
 * const cluster = await openRunner(findProfile("mpi") as RunnerProfile, { log: console.error });
 */
export async function openRunner(
  p: RunnerProfile,
  options: Pick<DaskClusterOptions, "python"> & { log?: (line: string) => void } = {},
): Promise<RunnerCluster> {
  const login = await loginNode(p, "runner profile");
  const cluster = new RunnerCluster({
    spec: p,
    runner: login.runner,
    directory: p.directory,
    startTimeout: p.startTimeout,
    python: options.python,
    reach: login.reach,
    log: options.log,
    via: login.via,
    onClose: login.close,
  });
  // A start that fails cancels the job and closes the SSH session.
  await cluster.start();
  return cluster;
}

/**
 * Runs `file` inside one job of the profile; resolves to the pipeline's exit status.
 *
 * @example
 * process.exitCode = await runWithRunner(profile, "p.ts", { ...printers, thisBasin, readSource });
 */
export async function runWithRunner(
  p: RunnerProfile,
  file: string,
  options: Omit<RunOnRunnerOptions, "runner" | "local" | "spec" | "directory" | "startTimeout" | "workspace">,
): Promise<number> {
  const login = await loginNode(p, "runner profile");
  try {
    return await runOnRunner(file, {
      ...options,
      spec: p,
      runner: login.runner,
      local: !p.ssh,
      directory: p.directory,
      startTimeout: p.startTimeout,
      workspace: p.workspace,
    });
  } finally {
    await login.close();
  }
}
