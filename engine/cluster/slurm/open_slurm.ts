// `--cluster PROFILE` for a slurm profile: a SlurmCluster whose sbatch runs here, or
// on the login node of the profile's ssh profile (the scheduler then reached through
// a tunnel of that SSH connection).
import { BasinError } from "../../common/errors.js";
import type { DaskClusterOptions } from "../dask/dask_cluster.js";
import { findProfile, type SlurmProfile } from "../profiles.js";
import { SshSession, type Tunnel } from "../ssh/ssh_session.js";
import { LocalRunner, SshRunner, type CommandRunner } from "./command_runner.js";
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
  let ssh: SshSession | undefined;
  const tunnels: Tunnel[] = [];
  let runner: CommandRunner = new LocalRunner();
  let reach: ((address: string) => Promise<{ address: string; viaScheduler: boolean }>) | undefined;
  if (p.ssh) {
    const sp = findProfile(p.ssh);
    if (sp.kind !== "ssh")
      throw new BasinError(
        "BASIN_PLAN",
        `slurm profile "${p.name}": "ssh": "${p.ssh}" names a ${sp.kind} profile; name an ssh profile of the login node`,
      );
    const session = await SshSession.connect(sp);
    ssh = session;
    runner = new SshRunner(session);
    reach = async (address) => {
      const m = /^tcp:\/\/([^:/]+):(\d+)$/.exec(address);
      if (!m)
        throw new BasinError(
          "BASIN_IO",
          `the Dask scheduler of slurm profile "${p.name}" listens at ${address}, which an SSH tunnel cannot reach; use protocol tcp`,
        );
      const t = await session.tunnel(m[1], Number(m[2]));
      tunnels.push(t);
      return { address: `tcp://127.0.0.1:${t.port}`, viaScheduler: true };
    };
  }
  const closeSsh = async () => {
    for (const t of tunnels) await t.close();
    ssh?.close();
  };
  const slurm = new SlurmCluster({
    spec: p,
    scale: profileScale(p),
    runner,
    reach,
    directory: p.directory,
    startTimeout: p.startTimeout,
    python: options.python,
    onEvent: (e) => options.log?.(describeSlurmEvent(e)),
    via: ssh ? `ssh ${ssh.where}` : undefined,
    onClose: closeSsh,
  });
  // A start that fails closes the cluster (cancelling what it submitted), and with it the SSH session.
  await slurm.start();
  return slurm;
}
