// One runner job and its session folder on shared storage: renders and writes the
// job script, checks UCX up front, submits it (or launches it directly), cancels it
// on close and on process exit, and reads what its ranks leave in the folder: the
// scheduler file, each rank's exit status and log, the driver's output and status.
import { randomBytes } from "node:crypto";
import { BasinError } from "../../common/errors.js";
import { readSchedulerFile } from "../slurm/batch_script.js";
import { LocalRunner, type CommandRunner } from "../slurm/command_runner.js";
import { cancelOnExit } from "../slurm/exit_cleanup.js";
import { shellQuote } from "../ssh/shell_quote.js";
import { launchDirect, submitBatch, type JobState, type LaunchedJob } from "./launch.js";
import { renderRunnerScript, RUNNER_SCRIPT, type RunnerMode, type RunnerSpec } from "./runner_script.js";
import { checkUcx } from "./ucx_check.js";

export interface RunnerJobOptions {
  spec: RunnerSpec;
  /** Where sbatch (or the launcher) runs (default: this machine). */
  runner?: CommandRunner;
  /** A folder on storage the login node and every node share (default ~/.basin/runner). */
  directory?: string;
  /** Seconds to wait for the job to start (queue time included) and for its workers (default 300). */
  startTimeout?: number;
  /** Seconds between looks at the job (default 0.5). */
  pollInterval?: number;
}

/** The role of a rank, for messages. */
export function rankRole(rank: number): string {
  return rank === 0 ? "the Dask scheduler" : rank === 1 ? "the Basin driver" : "a Dask worker";
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * @example
 * const job = new RunnerJob({ spec });
 * await job.start(await job.script({ kind: "serve" }));
 * const address = await job.waitForScheduler();
 * await job.close();
 */
export class RunnerJob {
  readonly spec: RunnerSpec;
  readonly runner: CommandRunner;
  private readonly options: RunnerJobOptions;
  private folder?: string;
  private launched?: LaunchedJob;
  private forgetExit?: () => void;
  private closing?: Promise<void>;
  private readonly t0 = Date.now();

  constructor(options: RunnerJobOptions) {
    this.options = options;
    this.spec = options.spec;
    this.runner = options.runner ?? new LocalRunner();
  }

  /** The started job (after start()). */
  get job(): LaunchedJob {
    if (!this.launched)
      throw new BasinError("BASIN_PLAN", `the runner "${this.spec.name}" is not started; await start() first`);
    return this.launched;
  }

  get pollMs(): number {
    return (this.options.pollInterval ?? 0.5) * 1000;
  }

  get startTimeoutMs(): number {
    return (this.options.startTimeout ?? 300) * 1000;
  }

  /** This session's folder on shared storage: the script, the scheduler file, the logs. */
  async directory(): Promise<string> {
    if (!this.folder) {
      const base = (this.options.directory ?? `${await this.runner.home()}/.basin/runner`).replace(/\/+$/, "");
      this.folder = `${base}/${this.spec.name}-${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`;
    }
    return this.folder;
  }

  /** The job script start() would submit, to show (and edit) before. */
  async script(mode: RunnerMode): Promise<string> {
    return renderRunnerScript(this.spec, {
      dir: await this.directory(),
      mode,
      startTimeout: this.options.startTimeout,
    });
  }

  /** Creates the session folder and puts a file there (e.g. the pipeline, for a login node); resolves to its path. */
  async put(name: string, text: string): Promise<string> {
    const dir = await this.directory();
    await this.runner.mkdir(dir);
    await this.runner.writeFile(`${dir}/${name}`, text);
    return `${dir}/${name}`;
  }

  /**
   * Checks UCX where asked for, writes `script` to the session folder and submits it
   * (or launches it directly); from now on the job is cancelled on close() and when
   * the process ends.
   */
  async start(script: string): Promise<void> {
    if (this.spec.protocol === "ucx") await checkUcx(this.runner, this.spec);
    const dir = await this.directory();
    const path = await this.put(RUNNER_SCRIPT, script);
    this.launched =
      (this.spec.submit ?? "sbatch") === "sbatch"
        ? await submitBatch(this.runner, path, dir, `${dir}/basin-${this.spec.name}-%j.log`)
        : await launchDirect(this.runner, path, dir, `${dir}/runner.log`);
    const job = this.launched;
    this.forgetExit = cancelOnExit({ cancel: () => job.cancel(), cancelSync: () => job.cancelSync() });
  }

  state(): Promise<JobState> {
    return this.job.state();
  }

  /** A file of the session folder, or undefined while it does not exist. */
  async read(name: string): Promise<string | undefined> {
    return this.runner.readFile(`${await this.directory()}/${name}`);
  }

  /** The ranks whose process has ended, with its exit status (128 + n: killed by signal n). */
  async rankExits(): Promise<Map<number, number>> {
    const dir = await this.directory();
    const r = await this.runner.run([
      "sh",
      "-c",
      `cd ${shellQuote(dir)} 2>/dev/null && for f in rank-*.exit; do [ -s "$f" ] && echo "$f $(cat "$f")"; done; true`,
    ]);
    const exits = new Map<number, number>();
    for (const m of r.stdout.matchAll(/^rank-(\d+)\.exit (\d+)$/gm)) exits.set(Number(m[1]), Number(m[2]));
    return exits;
  }

  /** "rank 2 (a Dask worker): its log /x/rank-2.log ends with: …", for messages. */
  async rankLog(rank: number): Promise<string> {
    return `rank ${rank} (${rankRole(rank)}): ${await this.tail(`rank-${rank}.log`)}`;
  }

  /** The last lines of one of the folder's files (the job's own log when `name` is omitted). */
  async tail(name?: string, lines = 12): Promise<string> {
    const path = name ? `${await this.directory()}/${name}` : this.job.log;
    const text = await this.runner.readFile(path);
    if (!text?.trim()) return `its log ${path} is empty or missing`;
    return `its log ${path} ends with:\n${text.trimEnd().split("\n").slice(-lines).join("\n")}`;
  }

  /**
   * The scheduler's address once rank 0 has written the scheduler file; fails (and
   * the caller should close()) when the job ends or rank 0 exits first, or when it
   * is still pending after the start timeout.
   */
  async waitForScheduler(onPending?: (state: JobState) => void): Promise<string> {
    const file = `${await this.directory()}/scheduler.json`;
    let pendingSaid = false;
    for (;;) {
      const address = await readSchedulerFile(this.runner, file);
      if (address) return address;
      const s = await this.state();
      if (s.state === "PENDING" && !pendingSaid) {
        pendingSaid = true;
        onPending?.(s);
      }
      const exits = await this.rankExits();
      if (s.ended || exits.has(0))
        throw new BasinError(
          "BASIN_IO",
          `${this.job.label} (runner profile "${this.spec.name}") ${s.ended ? `ended (${s.state}${s.reason ? `, ${s.reason}` : ""})` : "lost rank 0"} before its Dask scheduler started; ${exits.has(0) ? await this.rankLog(0) : await this.tail()}\nFix the profile (python, modules, conda, launcher) so the job can start Dask, and try again`,
        );
      if (Date.now() - this.t0 > this.startTimeoutMs) {
        const secs = this.startTimeoutMs / 1000;
        throw new BasinError(
          "BASIN_IO",
          s.state === "PENDING"
            ? `${this.job.label} (runner profile "${this.spec.name}") is still PENDING (${s.reason || "no reason given"}) after ${secs} s; it was cancelled. Check the partition and the queue (squeue -j ${this.job.jobId ?? "…"}), ask for fewer tasks, or allow a longer startTimeout`
            : `${this.job.label} (runner profile "${this.spec.name}") is ${s.state} but its rank 0 wrote no scheduler file ${file} within ${secs} s; it was cancelled. ${await this.rankLog(0)}`,
        );
      }
      await sleep(this.pollMs);
    }
  }

  /** Waits (bounded) until the job has ended on its own; false if it is still running. */
  async waitEnded(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if ((await this.state()).ended) return true;
      await sleep(Math.min(this.pollMs, 200));
    }
    return false;
  }

  /**
   * Cancels the job if it still runs, waits (bounded) until it has ended, and removes
   * the session folder unless `keepFolder` (its logs are named in an error).
   */
  close(keepFolder = false): Promise<void> {
    this.closing ??= this.shutdown(keepFolder);
    return this.closing;
  }

  private async shutdown(keepFolder: boolean): Promise<void> {
    try {
      const job = this.launched;
      if (job && !(await job.state()).ended) {
        await job.cancel();
        if (!(await this.waitEnded(15_000)))
          throw new BasinError(
            "BASIN_IO",
            `${job.label} (runner profile "${this.spec.name}") did not end within 15 s of being cancelled; cancel it by hand (${job.cancelHint})`,
          );
      }
      if (!keepFolder && this.folder) await this.runner.remove(this.folder);
    } finally {
      this.forgetExit?.();
    }
  }
}
