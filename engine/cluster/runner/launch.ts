// A runner's job once started: a SLURM batch job (sbatch, squeue, scancel), or, with
// `submit: "none"`, the job script run directly in a session of its own (polled
// with ps, stopped with a signal to the script, then to what is left of the session). Both go through a
// CommandRunner, so they work here and on a login node alike.
import { BasinError } from "../../common/errors.js";
import type { CommandRunner } from "../slurm/command_runner.js";
import { cancelJobs, jobEnded, queryJobs, submitJob } from "../slurm/slurm_commands.js";
import { shellQuote } from "../ssh/shell_quote.js";

/** What the job is doing, as far as can be told from outside. */
export interface JobState {
  /** PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, … (a direct launch: RUNNING or ENDED). */
  state: string;
  /** Why it is pending, when SLURM says. */
  reason: string;
  ended: boolean;
}

export interface LaunchedJob {
  /** "SLURM job 12" or "runner session 4321 on this machine", for messages. */
  readonly label: string;
  /** The SLURM job id, where there is one. */
  readonly jobId?: string;
  /** How to stop it by hand, for messages. */
  readonly cancelHint: string;
  /** Where its own output (the launcher's) goes. */
  readonly log: string;
  state(): Promise<JobState>;
  /** Stops it (async: signals, close). */
  cancel(): Promise<void>;
  /** Stops it synchronously, best effort (the process's "exit" event). */
  cancelSync(): void;
}

/**
 * Submits `script` with sbatch from `dir`; its output goes to the script's #SBATCH --output.
 *
 * @example
 * const job = await submitBatch(runner, "/shared/s/runner.sh", "/shared/s", "/shared/s/basin-hpc-%j.log");
 */
export async function submitBatch(
  runner: CommandRunner,
  script: string,
  dir: string,
  logPattern: string,
): Promise<LaunchedJob> {
  const id = await submitJob(runner, script, dir);
  return {
    label: `SLURM job ${id}`,
    jobId: id,
    cancelHint: `scancel ${id} on ${runner.where}`,
    log: logPattern.replace("%j", id),
    async state() {
      const q = (await queryJobs(runner, [id])).get(id);
      // a job squeue no longer lists ended long ago
      if (!q) return { state: "ENDED", reason: "", ended: true };
      return { state: q.state, reason: q.reason && q.reason !== "None" ? q.reason : "", ended: jobEnded(q.state) };
    },
    cancel: () => cancelJobs(runner, [id]),
    cancelSync: () => void runner.runSync(["scancel", id]),
  };
}

/**
 * Runs `script` with bash in a new session from `dir`, its
 * output to `log`; resolves once it has started.
 *
 * @example
 * const job = await launchDirect(new LocalRunner(), "/tmp/s/runner.sh", "/tmp/s", "/tmp/s/runner.log");
 */
export async function launchDirect(
  runner: CommandRunner,
  script: string,
  dir: string,
  log: string,
): Promise<LaunchedJob> {
  const r = await runner.run([
    "bash",
    "-c",
    // (not `cd && setsid … &`: that backgrounds a subshell that keeps this command's output open)
    `cd ${shellQuote(dir)} || exit 1; setsid bash ${shellQuote(script)} >${shellQuote(log)} 2>&1 </dev/null & echo $!`,
  ]);
  const pid = r.stdout.trim();
  if (r.code !== 0 || !/^\d+$/.test(pid))
    throw new BasinError(
      "BASIN_IO",
      `could not start ${script} on ${runner.where}: ${r.stderr.trim() || `exit code ${r.code}`}; check that bash and setsid are there`,
    );
  // setsid made the script's process the leader of a new session: every process the
  // launcher starts stays in that session (mpirun gives each rank its own process group).
  return {
    label: `runner session ${pid} on ${runner.where}`,
    cancelHint: `pkill -s ${pid} on ${runner.where}`,
    log,
    async state() {
      // a zombie (ended, not yet reaped by whoever adopted it) has ended too
      const r = await runner.run(["ps", "-o", "stat=", "-s", pid]);
      const alive = r.stdout.split("\n").some((l) => l.trim() && !/^Z/.test(l.trim()));
      return { state: alive ? "RUNNING" : "ENDED", reason: "", ended: !alive };
    },
    async cancel() {
      // The script's trap stops the launcher, which stops its ranks; what is left of
      // the session after 5 s is killed.
      await runner.run([
        "sh",
        "-c",
        `kill -TERM ${pid} 2>/dev/null; for _ in $(seq 50); do ps -o stat= -s ${pid} | grep -qv '^Z' || exit 0; sleep 0.1; done; pkill -KILL -s ${pid}; true`,
      ]);
    },
    cancelSync: () => void runner.runSync(["kill", "-TERM", pid]),
  };
}
