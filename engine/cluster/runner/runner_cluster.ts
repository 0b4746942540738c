// A runner as a Cluster, for the workbench (`basin serve --cluster RUNNER`) and the
// API: the job starts with rank 1 holding the client's slot, this process's Dask
// bridge connects to the scheduler (through the login node's tunnel over SSH) once
// every worker rank has joined, the job and its ranks are watched (a worker rank
// that dies is reported with its log; the scheduler's rank or the job ending fails
// later runs with the reason), and close() cancels the job.
import type { ClusterStatus } from "../../common/rpc.js";
import { BasinError } from "../../common/errors.js";

import { StartedDask, type Reach } from "../dask/started_dask.js";

import { RunnerJob, type RunnerJobOptions } from "./runner_job.js";

export interface RunnerClusterOptions extends RunnerJobOptions {
  /** This machine's Python for the Dask bridge (default as DaskCluster). */
  python?: string;
  /** Maps the scheduler's address (as the nodes have it) to one reachable here. */
  reach?: Reach;
  /** Progress and problems, one line each (job submitted, pending, connected, a rank that died). */
  log?: (line: string) => void;
  /** How the login node is reached, for messages. */
  via?: string;
  /** Frees what reaching the login node took, after the job is cancelled. */
  onClose?: () => Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * @example
 * const runner = new RunnerCluster({ spec: { name: "mpi", launcher: "mpirun", tasks: 4, submit: "none", cores: 1, memory: "1G" } });
 * await runner.start();
 * const table = await df.compute({ cluster: runner });
 * await runner.close();
 */
export class RunnerCluster extends StartedDask {
  readonly job: RunnerJob;
  private readonly options: RunnerClusterOptions;
  private timer?: ReturnType<typeof setTimeout>;
  private ticking?: Promise<void>;
  private closing?: Promise<void>;
  private lostError?: BasinError;
  private readonly reported = new Set<number>();

  constructor(options: RunnerClusterOptions) {
    super();
    this.options = options;
    this.job = new RunnerJob(options);
  }

  get label(): string {
    const s = this.job.spec;
    const at = this.client ? `scheduler ${this.client.address}` : "not started";
    return `runner profile ${s.name} (${s.tasks} tasks with ${s.launcher}, ${at}${this.options.via ? ` via ${this.options.via}` : ""})`;
  }

  protected get what(): string {
    return `the runner "${this.job.spec.name}"`;
  }

  /** Why the cluster stopped working (its job or scheduler rank ended), if it did. */
  get lost(): BasinError | undefined {
    return this.lostError;
  }

  /** The job script start() would submit, to show (and edit) before. */
  script(): Promise<string> {
    return this.job.script({ kind: "serve" });
  }

  /**
   * Submits the job (or `script`, an edited one), waits for its scheduler and every
   * worker rank, and connects; resolves to the seconds that took. On failure the job
   * is cancelled and the error names the rank and its log.
   */
  async start(script?: string): Promise<number> {
    const t0 = performance.now();
    const log = this.options.log ?? (() => {});
    const spec = this.job.spec;
    try {
      await this.job.start(script ?? (await this.script()));
      log(
        `${this.job.job.label} ${this.job.job.jobId ? "submitted" : "started"}: ${spec.tasks} tasks with ${spec.launcher} (scheduler, client slot, ${spec.tasks - 2} workers)`,
      );
      const address = await this.job.waitForScheduler((s) =>
        log(`${this.job.job.label} is pending (${s.reason || "waiting for resources"})`),
      );
      await this.connectTo(address, this.options.reach, this.options.python);
      await this.waitForWorkers(spec.tasks - 2);
    } catch (e) {
      await this.close(true);
      throw e;
    }
    const seconds = (performance.now() - t0) / 1000;
    log(`connected to the runner's Dask scheduler at ${this.dask.address} ${seconds.toFixed(1)} s after submitting`);
    this.schedule();
    return seconds;
  }

  async clusterStatus(): Promise<ClusterStatus> {
    const status = await this.dask.clusterStatus();
    const id = this.job.job.jobId;
    if (id === undefined) return status;
    const { state } = await this.job.state();
    return { ...status, slurm: { jobs: [{ id, state, scheduler: true }] } };
  }

  /** Stops watching, disconnects and cancels the job (its folder is kept with `keepLogs`). */
  close(keepLogs = false): Promise<void> {
    this.closing ??= (async () => {
      clearTimeout(this.timer);
      await this.ticking?.catch(() => {});
      try {
        await this.client?.close();
        await this.job.close(keepLogs);
      } finally {
        await this.options.onClose?.();
      }
    })();
    return this.closing;
  }

  private async waitForWorkers(n: number): Promise<void> {
    const deadline = Date.now() + this.job.startTimeoutMs;
    for (;;) {
      const status = await this.dask.status();
      if (status.workers.length >= n) return;
      const exits = await this.job.rankExits();
      const dead = [...exits.keys()].filter((r) => r !== 1);
      if (dead.length > 0 || (await this.job.state()).ended)
        throw new BasinError(
          "BASIN_IO",
          `${this.job.job.label} (runner profile "${this.job.spec.name}") lost ${dead.length > 0 ? `rank ${dead.join(", ")}` : "its ranks"} before all ${n} Dask workers joined; ${(await Promise.all(dead.map((r) => this.job.rankLog(r)))).join("\n") || (await this.job.tail())}`,
        );
      if (Date.now() > deadline)
        throw new BasinError(
          "BASIN_IO",
          `only ${status.workers.length} of the ${n} Dask workers of ${this.job.job.label} (runner profile "${this.job.spec.name}") joined within ${this.job.startTimeoutMs / 1000} s; it was cancelled. ${await this.job.rankLog(2)}`,
        );
      await sleep(this.job.pollMs);
    }
  }

  private schedule(): void {
    if (this.closing || this.lostError) return;
    this.timer = setTimeout(
      () => {
        this.ticking = this.tick()
          .catch((e: unknown) =>
            this.options.log?.(`watching the runner's job failed (retrying): ${(e as Error).message}`),
          )
          .finally(() => this.schedule());
      },
      Math.max(1000, this.job.pollMs * 4),
    );
    this.timer.unref?.();
  }

  private async tick(): Promise<void> {
    const s = await this.job.state();
    const exits = await this.job.rankExits();
    if (s.ended || exits.has(0)) {
      this.lostError = new BasinError(
        "BASIN_IO",
        `${this.job.job.label} (runner profile "${this.job.spec.name}") ${s.ended ? `ended (${s.state})` : "lost rank 0"}; it ran the Dask scheduler, so this cluster is gone: reconnect to start a new one. ${exits.has(0) ? await this.job.rankLog(0) : await this.job.tail()}`,
      );
      this.client?.fail(this.lostError);
      this.options.log?.(this.lostError.message);
      return;
    }
    for (const [rank, status] of exits) {
      if (rank === 1 || this.reported.has(rank)) continue;
      this.reported.add(rank);
      this.options.log?.(
        `rank ${rank} (a Dask worker) of ${this.job.job.label} exited with status ${status}; the runner goes on with one worker less (Dask recomputes what it held). ${await this.job.rankLog(rank)}`,
      );
    }
  }
}
