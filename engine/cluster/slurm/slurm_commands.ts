// sbatch, squeue and scancel through a CommandRunner, with their output parsed and
// their failures turned into errors that say what failed and what to do.
import { BasinError } from "../../common/errors.js";
import type { CommandResult, CommandRunner } from "./command_runner.js";

/** A job as squeue reports it. */
export interface QueuedJob {
  id: string;
  /** PENDING, RUNNING, COMPLETING, COMPLETED, FAILED, CANCELLED, TIMEOUT, ... */
  state: string;
  /** Why it is pending (Resources, Priority, PartitionDown, ...) or its node. */
  reason: string;
}

/** States in which a job no longer runs (squeue shows them for MinJobAge seconds). */
const ENDED = new Set([
  "COMPLETED",
  "FAILED",
  "CANCELLED",
  "TIMEOUT",
  "NODE_FAIL",
  "PREEMPTED",
  "OUT_OF_MEMORY",
  "BOOT_FAIL",
  "DEADLINE",
  "SPECIAL_EXIT",
  "REVOKED",
]);

/**
 * Whether a job in this squeue state has ended (a state SLURM may add later counts as running).
 *
 * @example
 * jobEnded("CANCELLED"); // true
 */
export function jobEnded(state: string): boolean {
  return ENDED.has(state);
}

function missing(r: CommandResult, cmd: string, where: string): BasinError | undefined {
  if (r.code === 127)
    // the shell's (or execFile's) "command not found"
    return new BasinError(
      "BASIN_IO",
      `${cmd} is not found on ${where}; install the SLURM client there (Debian: slurm-client) or load its module in the login shell`,
    );
  return undefined;
}

/** A command's error output on one line, without its "cmd: error: " prefixes. */
function oneLine(stderr: string, cmd: string): string {
  return stderr
    .trim()
    .split("\n")
    .map((l) => l.replace(new RegExp(`^${cmd}: error: `), "").trim())
    .filter(Boolean)
    .join("; ");
}

/**
 * The job id in `sbatch --parsable` output ("123" or "123;cluster").
 *
 * @example
 * parseSbatch("17;cluster-a\n"); // "17"
 */
export function parseSbatch(stdout: string): string {
  const m = /^(\d+)(?:;\S+)?\s*$/m.exec(stdout.trim());
  if (!m)
    throw new BasinError(
      "BASIN_IO",
      `sbatch printed no job id (it said "${stdout.trim()}"); check the SLURM client version`,
    );
  return m[1];
}

/**
 * Lines of `squeue -h -o "%i|%T|%R"`.
 *
 * @example
 * parseSqueue("12|PENDING|(Resources)\n"); // [{ id: "12", state: "PENDING", reason: "Resources" }]
 */
export function parseSqueue(stdout: string): QueuedJob[] {
  return stdout
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => {
      const [id, state, ...reason] = l.trim().split("|");
      return { id, state, reason: reason.join("|").replace(/^\((.*)\)$/, "$1") };
    });
}

/**
 * Submits a batch script file; resolves to the job id.
 *
 * @example
 * const id = await submitJob(new LocalRunner(), "/shared/basin/job.sh", "/shared/basin");
 */
export async function submitJob(runner: CommandRunner, scriptPath: string, workDir: string): Promise<string> {
  const r = await runner.run(["sbatch", "--parsable", `--chdir=${workDir}`, scriptPath]);
  const notFound = missing(r, "sbatch", runner.where);
  if (notFound) throw notFound;
  if (r.code !== 0)
    throw new BasinError(
      "BASIN_IO",
      `sbatch refused ${scriptPath} on ${runner.where}: ${oneLine(r.stderr, "sbatch") || `exit code ${r.code}`}; check the profile's partition, account, cores, memory and walltime against the cluster's limits (sinfo, sacctmgr show assoc)`,
    );
  return parseSbatch(r.stdout);
}

/**
 * The jobs among `ids` that squeue still knows (a job that ended long ago is absent).
 *
 * @example
 * const state = (await queryJobs(runner, ["12"])).get("12")?.state; // "RUNNING"
 */
export async function queryJobs(runner: CommandRunner, ids: string[]): Promise<Map<string, QueuedJob>> {
  if (ids.length === 0) return new Map();
  const r = await runner.run(["squeue", "-h", "-t", "all", "-j", ids.join(","), "-o", "%i|%T|%R"]);
  const notFound = missing(r, "squeue", runner.where);
  if (notFound) throw notFound;
  // squeue fails for a list of only unknown (long ended) job ids: none of them is queued.
  if (r.code !== 0 && /Invalid job id/i.test(r.stderr)) return new Map();
  if (r.code !== 0)
    throw new BasinError(
      "BASIN_IO",
      `squeue failed on ${runner.where}: ${oneLine(r.stderr, "squeue") || `exit code ${r.code}`}; check that slurmctld is reachable (sinfo)`,
    );
  return new Map(parseSqueue(r.stdout).map((j) => [j.id, j]));
}

/**
 * Cancels jobs; unknown (already ended) ids are not an error.
 *
 * @example
 * await cancelJobs(runner, ["12", "13"]);
 */
export async function cancelJobs(runner: CommandRunner, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  const r = await runner.run(["scancel", ...ids]);
  const notFound = missing(r, "scancel", runner.where);
  if (notFound) throw notFound;
  if (r.code !== 0 && !/Invalid job id|already completing or completed/i.test(r.stderr))
    throw new BasinError(
      "BASIN_IO",
      `scancel ${ids.join(" ")} failed on ${runner.where}: ${oneLine(r.stderr, "scancel")}; cancel them by hand (scancel ${ids.join(" ")})`,
    );
}
