// The async shell around SchedulerState: sends tasks to workers, feeds results
// back as events, releases data, reports progress. All decisions stay in state.ts.
import { BasinError } from "../common/errors.js";
import type { TaskGraph } from "../graph/tasks.js";
import type { Instruction, Ref, SchedulerEvent } from "./events.js";
import { SchedulerState } from "./state.js";
import type { CpuTasks } from "./placement.js";

/** Progress of one task group, e.g. { group: "scanCsv→filter", done: 3, total: 8 }. */
export interface ProgressEvent {
  group: string;
  done: number;
  total: number;
}

/** What the shell needs from a cluster: a way to run a task on a named worker. */
export interface Executor {
  workers(): string[];
  execute(worker: string, key: string, inputs: Ref[]): void;
  /** Lets data go that no task reads any more. */
  release(refs: readonly Ref[]): void;
  /** Workers another run's task holds now (a cluster's runs share its workers): not free for this run yet. */
  taken?(): string[];
  /** Whether memory is over its limit even after spilling (the run then holds back root tasks). */
  overMemory?(): boolean;
  /** Ends a worker whose task ran on past the grace period of a failed run (the cluster replaces it). */
  abandon?(worker: string): void;
  /** What CPU workers run beside GPU workers (default "all"; "reads": only file reads). */
  cpuTasks?: CpuTasks;
  /**
   * The worker home to a stored table, if any: the GPU worker ("gpu-<device>") whose
   * device holds its columns, or the worker process keeping a copy (persist() put them there).
   */
  storedHome?(handle: number): string | undefined;
}

export interface RunOptions {
  onProgress?: (e: ProgressEvent) => void;
  signal?: AbortSignal;
  /** How long a task may run on after its run failed or was cancelled before its worker is ended (ms, default 1000). */
  graceMs?: number;
}

const DEFAULT_GRACE_MS = 1000;

/**
 * One run of a graph: `feed` takes events from the cluster. `result` settles when
 * the run is over: a failure or cancel at once, a success when its last task is done.
 * `settled` resolves when no task of the run is still running: a task that runs on
 * past the grace period of a failed run has its worker ended (`Executor.abandon`).
 */
export class GraphRun {
  readonly state: SchedulerState;
  /** The result's refs, owned by the caller: the output task's first output, or all of them for a partitioned graph. */
  readonly result: Promise<Ref[]>;
  /** Resolves once the run is over and none of its tasks is still running. */
  readonly settled: Promise<void>;
  skippedLines = 0;
  /** worker → task now running there */
  private readonly running = new Map<string, string>();

  private outcome?: { ok: true; refs: Ref[] } | { ok: false; error: BasinError };
  private settle!: { resolve: (r: Ref[]) => void; reject: (e: BasinError) => void };
  private markSettled!: () => void;
  private grace?: ReturnType<typeof setTimeout>;
  private seq = 0;
  private readonly queue: SchedulerEvent[] = [];
  private feeding = false;
  private overMemory = false;

  constructor(
    readonly graph: TaskGraph,
    private readonly executor: Executor,
    private readonly options: RunOptions = {},
  ) {
    this.state = new SchedulerState(graph, executor.cpuTasks, (h) => executor.storedHome?.(h));
    this.result = new Promise<Ref[]>((resolve, reject) => (this.settle = { resolve, reject }));
    this.settled = new Promise<void>((resolve) => (this.markSettled = resolve));
    const onAbort = () =>
      this.feed({
        type: "cancel",
        reason: String(options.signal?.reason ?? "aborted"),
        stimulusId: this.stimulus("cancel"),
      });
    options.signal?.addEventListener("abort", onAbort, { once: true });
    this.result.finally(() => options.signal?.removeEventListener("abort", onAbort)).catch(() => {});
  }

  start(): void {
    for (const w of this.executor.workers())
      this.feed({ type: "workerAdded", worker: w, stimulusId: this.stimulus("add") });
    for (const w of this.executor.taken?.() ?? [])
      this.feed({ type: "workerTaken", worker: w, stimulusId: this.stimulus("taken") });
    this.feed({ type: "start", stimulusId: this.stimulus("start") });
    if (this.options.signal?.aborted)
      this.feed({ type: "cancel", reason: "aborted before start", stimulusId: this.stimulus("cancel") });
  }

  stimulus(what: string): string {
    return `${what}-${this.seq++}`;
  }

  /**
   * Feeds an event. Events raised while instructions are being carried out (a
   * progress callback that aborts, say) wait their turn, so each event's
   * instructions are carried out whole and in order.
   */
  feed(e: SchedulerEvent): void {
    this.queue.push(e);
    if (this.feeding) return;
    this.feeding = true;
    try {
      for (let next = this.queue.shift(); next; next = this.queue.shift()) {
        if (next.type === "taskFinished" || next.type === "taskErred" || next.type === "workerLost")
          this.running.delete(next.worker);
        for (const i of this.state.handle(next)) this.apply(i);
        const over = this.executor.overMemory?.() ?? false;
        if (over !== this.overMemory) {
          this.overMemory = over;
          this.queue.push({ type: "memory", overLimit: over, stimulusId: this.stimulus("memory") });
        }
      }
    } finally {
      this.feeding = false;
    }
    this.maybeSettle();
  }

  private apply(i: Instruction): void {
    switch (i.type) {
      case "execute":
        this.running.set(i.worker, i.key);
        this.executor.execute(i.worker, i.key, i.inputs);
        break;
      case "release":
        this.executor.release(i.outputs);
        break;
      case "progress":
        try {
          this.options.onProgress?.({ group: i.group, done: i.done, total: i.total });
        } catch (err) {
          // The caller's callback failing must not stall the run: cancel it, saying why.
          this.feed({
            type: "cancel",
            reason: `onProgress threw: ${(err as Error)?.message ?? String(err)}`,
            stimulusId: this.stimulus("cancel"),
          });
        }
        break;
      case "finished":
        if (this.graph.partitioned) {
          this.outcome = { ok: true, refs: i.outputs };
        } else {
          this.outcome = { ok: true, refs: i.outputs.slice(0, 1) };
          this.executor.release(i.outputs.slice(1));
        }
        break;
      case "failed":
        this.outcome = { ok: false, error: BasinError.fromJSON(i.error) };
        // The caller hears at once; tasks still running get a grace period to finish
        // (their results are dropped), then their workers are ended.
        this.settle.reject(this.outcome.error);
        if (this.running.size > 0 && this.executor.abandon)
          this.grace = setTimeout(() => {
            for (const w of this.running.keys()) this.executor.abandon?.(w);
          }, this.options.graceMs ?? DEFAULT_GRACE_MS);
        break;
    }
  }

  private maybeSettle(): void {
    if (!this.outcome || this.running.size > 0) return;
    clearTimeout(this.grace);
    if (this.outcome.ok) this.settle.resolve(this.outcome.refs);
    this.markSettled();
  }
}
