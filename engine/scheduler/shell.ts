// The async shell around SchedulerState: sends tasks to workers, feeds results
// back as events, releases data, reports progress. All decisions stay in state.ts.
import { BasinError } from "../common/errors.js";
import type { TaskGraph } from "../lower/tasks.js";
import { native } from "../native/addon.js";
import type { Instruction, Ref, SchedulerEvent } from "./events.js";
import { SchedulerState } from "./state.js";

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
}

export interface RunOptions {
  onProgress?: (e: ProgressEvent) => void;
  signal?: AbortSignal;
}

/**
 * One run of a graph: `feed` takes events from the cluster, `result` settles when
 * the run is over and no task of it is still running.
 */
export class GraphRun {
  readonly state: SchedulerState;
  readonly result: Promise<Ref>;
  skippedLines = 0;
  /** worker → task now running there */
  private readonly running = new Map<string, string>();
  private outcome?: { ok: true; ref: Ref } | { ok: false; error: BasinError };
  private settle!: { resolve: (r: Ref) => void; reject: (e: BasinError) => void };
  private seq = 0;

  constructor(
    readonly graph: TaskGraph,
    private readonly executor: Executor,
    private readonly options: RunOptions = {},
  ) {
    this.state = new SchedulerState(graph);
    this.result = new Promise<Ref>((resolve, reject) => (this.settle = { resolve, reject }));
    const onAbort = () => this.feed({ type: "cancel", reason: String(options.signal?.reason ?? "aborted"), stimulusId: this.stimulus("cancel") });
    options.signal?.addEventListener("abort", onAbort, { once: true });
    this.result.finally(() => options.signal?.removeEventListener("abort", onAbort)).catch(() => {});
  }

  start(): void {
    for (const w of this.executor.workers()) this.feed({ type: "workerAdded", worker: w, stimulusId: this.stimulus("add") });
    this.feed({ type: "start", stimulusId: this.stimulus("start") });
    if (this.options.signal?.aborted) this.feed({ type: "cancel", reason: "aborted before start", stimulusId: this.stimulus("cancel") });
  }

  stimulus(what: string): string {
    return `${what}-${this.seq++}`;
  }

  feed(e: SchedulerEvent): void {
    if (e.type === "taskFinished" || e.type === "taskErred" || e.type === "workerLost") this.running.delete(e.worker);
    for (const i of this.state.handle(e)) this.apply(i);
    this.maybeSettle();
  }

  private apply(i: Instruction): void {
    switch (i.type) {
      case "execute":
        this.running.set(i.worker, i.key);
        this.executor.execute(i.worker, i.key, i.inputs);
        break;
      case "release":
        for (const h of i.outputs) native().release(h);
        break;
      case "progress":
        this.options.onProgress?.({ group: i.group, done: i.done, total: i.total });
        break;
      case "finished":
        this.outcome = { ok: true, ref: i.outputs[0] };
        for (const h of i.outputs.slice(1)) native().release(h);
        break;
      case "failed":
        this.outcome = { ok: false, error: BasinError.fromJSON(i.error) };
        break;
    }
  }

  private maybeSettle(): void {
    if (!this.outcome || this.running.size > 0) return;
    if (this.outcome.ok) this.settle.resolve(this.outcome.ref);
    else this.settle.reject(this.outcome.error);
  }
}
