// A Dask cluster inside SLURM allocations: Basin renders the batch scripts, submits
// the scheduler's job with sbatch (here or on a login node over SSH), waits for the
// scheduler file, connects a DaskCluster, keeps a fixed number of jobs or scales
// adaptively between min and max jobs, reports jobs that die (replacing them when
// adaptive), and cancels every job it submitted on close and on process exit.
import { randomBytes } from "node:crypto";
import { BasinError } from "../../common/errors.js";
import type { ClusterStatus } from "../../common/rpc.js";
import type { DaskStatus } from "../dask/dask_cluster.js";
import { StartedDask, type Reach } from "../dask/started_dask.js";
import { renderBatchScript, readSchedulerFile, type SlurmJobSpec } from "./batch_script.js";
import { LocalRunner, type CommandRunner } from "./command_runner.js";
import { cancelOnExit } from "./exit_cleanup.js";
import { scaleDecision } from "./scaling_policy.js";
import { cancelJobs, jobEnded, queryJobs, submitJob, type QueuedJob } from "./slurm_commands.js";

/** A fixed number of jobs, or adaptive between minJobs and maxJobs. */
export type SlurmScale = { jobs: number } | { minJobs: number; maxJobs: number; idleSeconds?: number };

export interface SlurmClusterOptions {
  spec: SlurmJobSpec;
  /** Default: one job. */
  scale?: SlurmScale;
  /** Where sbatch runs (default: this machine). */
  runner?: CommandRunner;
  /** A folder on storage shared by the login node and the compute nodes (default ~/.basin/slurm). */
  directory?: string;
  /** Seconds to wait for the scheduler (queue time included) and for its first worker (default 300). */
  startTimeout?: number;
  /** Seconds between looks at the queue and the scheduler (default 2). */
  pollInterval?: number;
  /** This machine's Python for the Dask bridge (default as DaskCluster). */
  python?: string;
  /** Maps the scheduler's address (as the compute node has it) to one reachable here, e.g. through an SSH tunnel. */
  reach?: Reach;
  /** Called for every job submitted, ended, removed, and when the cluster is connected or lost. */
  onEvent?: (event: SlurmEvent) => void;
  /** How the login node is reached, for messages ("ssh user@host:22"). */
  via?: string;
  /** Frees what reaching the login node took (an SSH session), after the jobs are cancelled. */
  onClose?: () => Promise<void>;
}

export type SlurmEvent =
  | { type: "submitted"; jobId: string; scheduler: boolean }
  | { type: "connected"; address: string; seconds: number }
  | { type: "jobEnded"; jobId: string; state: string; message: string; replaced: boolean }
  | { type: "removed"; jobId: string }
  | { type: "lost"; message: string }
  /** Something went wrong once and is retried (e.g. squeue did not answer). */
  | { type: "warning"; message: string };

/** The batch scripts before they are submitted: shown to the user, who may edit them. */
export interface SlurmScripts {
  /** The first job's: the Dask scheduler and a worker. */
  scheduler: string;
  /** Every other job's: a worker. */
  worker: string;
}

/** One of this cluster's jobs. */
export interface SlurmJob {
  id: string;
  scheduler: boolean;
  /** The last squeue state seen. */
  state: string;
  submittedAt: number;
  /** Its worker has joined the scheduler. */
  joined: boolean;
  idleSince?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * @example
 * const slurm = new SlurmCluster({ spec: { name: "hpc", walltime: "01:00:00", cores: 8, memory: "32G" },
 *   scale: { minJobs: 1, maxJobs: 10 } });
 * await slurm.start();
 * const table = await df.compute({ cluster: slurm.dask });
 * await slurm.close(); // scancel
 */
export class SlurmCluster extends StartedDask {
  readonly spec: SlurmJobSpec;
  private readonly options: SlurmClusterOptions;
  private readonly runner: CommandRunner;
  private readonly jobs = new Map<string, SlurmJob>();
  /** Every job ever submitted and not yet seen ended: what close() cancels. */
  private readonly submitted = new Set<string>();
  private folder?: string;
  /** An error named a job log in the folder: it stays when the cluster closes. */
  private logNamed = false;
  private timer?: ReturnType<typeof setTimeout>;
  private ticking?: Promise<void>;
  private closing?: Promise<void>;
  private lostError?: BasinError;
  private forgetExit?: () => void;

  constructor(options: SlurmClusterOptions) {
    super();
    this.options = options;
    this.spec = options.spec;
    this.runner = options.runner ?? new LocalRunner();
    const s = options.scale;
    if (
      s && "jobs" in s
        ? !(Number.isInteger(s.jobs) && s.jobs >= 1)
        : s && !(Number.isInteger(s.minJobs) && Number.isInteger(s.maxJobs) && s.minJobs >= 1 && s.maxJobs >= s.minJobs)
    )
      throw new BasinError(
        "BASIN_PLAN",
        `SLURM profile "${this.spec.name}": scale needs jobs ≥ 1, or 1 ≤ minJobs ≤ maxJobs (whole numbers), got ${JSON.stringify(s)}`,
      );
  }

  protected get what(): string {
    return `the SLURM cluster "${this.spec.name}"`;
  }

  /** "SLURM profile hpc (scheduler tcp://…:8786 via ssh me@login:22)". */
  get label(): string {
    const at = this.client ? `scheduler ${this.client.address}` : "not started";
    return `SLURM profile ${this.spec.name} (${at}${this.options.via ? ` via ${this.options.via}` : ""})`;
  }

  /** The Dask cluster's status with this cluster's live jobs. */
  async clusterStatus(): Promise<ClusterStatus> {
    const status = await this.dask.clusterStatus();
    return {
      ...status,
      slurm: { jobs: this.liveJobs.map((j) => ({ id: j.id, state: j.state, scheduler: j.scheduler })) },
    };
  }

  /** The jobs submitted and not ended, the scheduler's first. */
  get liveJobs(): SlurmJob[] {
    return [...this.jobs.values()];
  }

  /** Why the cluster stopped working (its scheduler's job ended), if it did. */
  get lost(): BasinError | undefined {
    return this.lostError;
  }

  /** This session's folder on shared storage: scripts, scheduler file, job logs. */
  async directory(): Promise<string> {
    if (!this.folder) {
      const base = (this.options.directory ?? `${await this.runner.home()}/.basin/slurm`).replace(/\/+$/, "");
      this.folder = `${base}/${this.spec.name}-${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`;
    }
    return this.folder;
  }

  /** The batch scripts start() would submit, to show (and edit) before. */
  async scripts(): Promise<SlurmScripts> {
    const dir = await this.directory();
    const common = { schedulerFile: `${dir}/scheduler.json`, logDir: dir };
    return {
      scheduler: renderBatchScript(this.spec, { ...common, withScheduler: true }),
      worker: renderBatchScript(this.spec, { ...common, withScheduler: false }),
    };
  }

  /**
   * Submits the scheduler's job, waits (bounded) for its scheduler and first worker,
   * connects, submits the other jobs and starts watching them. Resolves to the
   * seconds from submission to connected with a first worker. On failure every job
   * is cancelled, and the error names the job, its state and its log's tail.
   */
  async start(scripts?: SlurmScripts): Promise<number> {
    const t0 = performance.now();
    const dir = await this.directory();
    const text = scripts ?? (await this.scripts());
    await this.runner.mkdir(dir);
    await this.runner.writeFile(`${dir}/scheduler.sh`, text.scheduler);
    await this.runner.writeFile(`${dir}/worker.sh`, text.worker);
    this.forgetExit = cancelOnExit({
      cancel: () => cancelJobs(this.runner, [...this.submitted]),
      cancelSync: () => void (this.submitted.size > 0 && this.runner.runSync(["scancel", ...this.submitted])),
    });
    try {
      const first = await this.submit(true);
      const address = await this.waitForScheduler(first);
      await this.connectTo(address, this.options.reach, this.options.python);
      const s = this.options.scale ?? { jobs: 1 };
      for (let i = 1; i < ("jobs" in s ? s.jobs : s.minJobs); i++) await this.submit(false);
      await this.waitForWorker(first);
      await this.refreshStates();
    } catch (e) {
      await this.close();
      throw e;
    }
    const seconds = (performance.now() - t0) / 1000;
    this.emit({ type: "connected", address: this.dask.address, seconds });
    this.schedule();
    return seconds;
  }

  /** Stops watching, disconnects, cancels every job submitted and waits (bounded) until SLURM has ended them. */
  close(): Promise<void> {
    this.closing ??= this.shutdown().finally(() => this.options.onClose?.());
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    clearTimeout(this.timer);
    await this.ticking?.catch(() => {});
    await this.client?.close();
    const ids = [...this.submitted];
    try {
      await cancelJobs(this.runner, ids);
      for (let i = 0; i < 150; i++) {
        const q = await queryJobs(this.runner, ids);
        if ([...q.values()].every((j) => jobEnded(j.state))) break;
        await sleep(100);
      }
      this.submitted.clear();
      this.jobs.clear();
      // A folder whose log an error named stays, for the user to read the rest of it.
      if (this.folder && !this.logNamed) await this.runner.remove(this.folder);
    } finally {
      this.forgetExit?.();
    }
  }

  private emit(e: SlurmEvent): void {
    this.options.onEvent?.(e);
  }

  private async submit(scheduler: boolean): Promise<string> {
    const dir = await this.directory();
    const id = await submitJob(this.runner, `${dir}/${scheduler ? "scheduler" : "worker"}.sh`, dir);
    this.submitted.add(id);
    this.jobs.set(id, {
      id,
      scheduler,
      state: "PENDING",
      submittedAt: Date.now(),
      joined: false,
      idleSince: Date.now(),
    });
    this.emit({ type: "submitted", jobId: id, scheduler });
    return id;
  }

  /**
   * The last lines of a job's log, for messages. A failure's log is `kept`: the job
   * folder then stays when the cluster closes, for the user to read the rest.
   */
  private async logTail(id: string, keep = true): Promise<string> {
    const path = `${await this.directory()}/basin-${this.spec.name}-${id}.log`;
    const text = await this.runner.readFile(path);
    if (!text?.trim()) return `its log ${path} is empty or missing`;
    if (keep) this.logNamed = true;
    return `its log ${path}${keep ? " (kept)" : ""} ends with:\n${text.trimEnd().split("\n").slice(-12).join("\n")}`;
  }

  private timeoutMs(): number {
    return (this.options.startTimeout ?? 300) * 1000;
  }

  private async waitForScheduler(id: string): Promise<string> {
    const file = `${await this.directory()}/scheduler.json`;
    const deadline = Date.now() + this.timeoutMs();
    let job: QueuedJob | undefined;
    for (;;) {
      const address = await readSchedulerFile(this.runner, file);
      if (address) return address;
      job = (await queryJobs(this.runner, [id])).get(id);
      if (!job || jobEnded(job.state))
        throw new BasinError(
          "BASIN_IO",
          `SLURM job ${id} (the Dask scheduler of profile "${this.spec.name}") ended${job ? ` (${job.state}${job.reason && job.reason !== "None" ? `, ${job.reason}` : ""})` : ""} before its scheduler started; ${await this.logTail(id)}\nFix the profile (python, modules, conda) so the job can start Dask, and try again`,
        );
      if (Date.now() > deadline) break;
      await sleep(this.options.pollInterval !== undefined ? Math.min(500, this.options.pollInterval * 1000) : 500);
    }
    const secs = this.options.startTimeout ?? 300;
    if (job.state === "PENDING")
      throw new BasinError(
        "BASIN_IO",
        `SLURM job ${id} (the Dask scheduler of profile "${this.spec.name}") is still PENDING (${job.reason || "no reason given"}) after ${secs} s; the job was cancelled. Check the partition and the queue (squeue -j ${id}), ask for fewer resources, or allow a longer startTimeout`,
      );
    throw new BasinError(
      "BASIN_IO",
      `SLURM job ${id} (the Dask scheduler of profile "${this.spec.name}") is ${job.state} but wrote no scheduler file ${file} within ${secs} s; the job was cancelled. ${await this.logTail(id)}`,
    );
  }

  private async waitForWorker(id: string): Promise<void> {
    const deadline = Date.now() + this.timeoutMs();
    for (;;) {
      const status = await this.dask.status();
      if (status.workers.length > 0) return void this.observe(status);
      const job = (await queryJobs(this.runner, [id])).get(id);
      if (!job || jobEnded(job.state))
        throw new BasinError(
          "BASIN_IO",
          `SLURM job ${id} of profile "${this.spec.name}" ended (${job?.state ?? "gone"}) before its Dask worker joined; ${await this.logTail(id)}`,
        );
      if (Date.now() > deadline)
        throw new BasinError(
          "BASIN_IO",
          `no Dask worker of SLURM job ${id} (profile "${this.spec.name}") joined the scheduler within ${this.options.startTimeout ?? 300} s; the jobs were cancelled. ${await this.logTail(id)}`,
        );
      await sleep(300);
    }
  }

  private async refreshStates(): Promise<void> {
    const queue = await queryJobs(this.runner, [...this.jobs.keys()]);
    for (const job of this.jobs.values()) job.state = queue.get(job.id)?.state ?? job.state;
  }

  /** Marks the jobs whose workers joined, and when each went idle. */
  private observe(status: DaskStatus): void {
    const now = Date.now();
    for (const w of status.workers) {
      const m = /^basin-(\d+)/.exec(w.name);
      const job = m ? this.jobs.get(m[1]) : undefined;
      if (!job) continue;
      if (!job.joined) {
        job.joined = true;
        job.idleSince = now;
      }
      if (w.tasks > 0) job.idleSince = undefined;
      else job.idleSince ??= now;
    }
  }

  private schedule(): void {
    if (this.closing || this.lostError) return;
    this.timer = setTimeout(
      () => {
        this.ticking = this.tick()
          .catch((e: unknown) => {
            // A failed look (squeue hiccup, scheduler busy) is retried at the next tick.
            this.emit({
              type: "warning",
              message: `watching the SLURM jobs failed (retrying): ${(e as Error).message}`,
            });
          })
          .finally(() => this.schedule());
      },
      (this.options.pollInterval ?? 2) * 1000,
    );
    this.timer.unref?.();
  }

  private async tick(): Promise<void> {
    const queue = await queryJobs(this.runner, [...this.jobs.keys()]);
    const adaptive = this.options.scale !== undefined && !("jobs" in this.options.scale);
    for (const job of [...this.jobs.values()]) {
      const q = queue.get(job.id);
      if (q && !jobEnded(q.state)) {
        job.state = q.state;
        continue;
      }
      this.jobs.delete(job.id);
      this.submitted.delete(job.id);
      const state = q?.state ?? "ENDED";
      const why = `SLURM job ${job.id} of profile "${this.spec.name}" ended (${state}${q?.reason && q.reason !== "None" ? `, ${q.reason}` : ""})`;
      if (job.scheduler) {
        this.lostError = new BasinError(
          "BASIN_IO",
          `${why}; it ran the Dask scheduler, so this cluster is gone: reconnect to start a new one. ${await this.logTail(job.id)}`,
        );
        this.client?.fail(this.lostError);
        this.emit({ type: "lost", message: this.lostError.message });
        return;
      }
      // A worker retiring before the walltime ends its job COMPLETED.
      const retired = state === "COMPLETED" ? ": its worker retired before the walltime" : "";
      const next = adaptive
        ? "; a new job replaces it"
        : "; this fixed-size cluster goes on with one job less (reconnect for a full one, or use minJobs/maxJobs to have jobs replaced)";
      this.emit({
        type: "jobEnded",
        jobId: job.id,
        state,
        replaced: adaptive,
        message: `${why}${retired}${next}. ${await this.logTail(job.id, false)}`,
      });
    }
    if (!adaptive || this.closing) return;
    const status = await this.dask.status();
    this.observe(status);
    const s = this.options.scale as { minJobs: number; maxJobs: number; idleSeconds?: number };
    const decision = scaleDecision({
      now: Date.now(),
      jobs: [...this.jobs.values()].map((j) => ({
        id: j.id,
        starting: !j.joined,
        scheduler: j.scheduler,
        idleSince: j.idleSince,
      })),
      processing: status.processing,
      waiting: status.waiting,
      // `dask cuda worker` runs one single-threaded worker per GPU
      threadsPerJob: (this.spec.gpus ?? 0) > 0 ? (this.spec.gpus ?? 1) : this.spec.cores,
      minJobs: s.minJobs,
      maxJobs: s.maxJobs,
      idleMs: (s.idleSeconds ?? 60) * 1000,
    });
    for (let i = 0; i < decision.submit; i++) await this.submit(false);
    if (decision.remove.length > 0) await this.remove(decision.remove);
  }

  /** Retires the jobs' workers (their data moves elsewhere), then cancels the jobs. */
  private async remove(ids: string[]): Promise<void> {
    const names = ids.filter((id) => this.jobs.get(id)?.joined).map((id) => `basin-${id}`);
    // No longer counted, nor reported when it ends; close() still cancels it should scancel fail now.
    for (const id of ids) this.jobs.delete(id);
    if (names.length > 0) await Promise.race([this.dask.retireWorkers(names).catch(() => 0), sleep(10_000)]);
    await cancelJobs(this.runner, ids);
    for (const id of ids) this.emit({ type: "removed", jobId: id });
  }
}
