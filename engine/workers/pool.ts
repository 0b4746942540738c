// A pool of CPU worker threads. Each runs one task at a time; a worker that dies
// is reported and replaced.
import { Worker } from "node:worker_threads";
import { BasinError } from "../common/errors.js";
import { native } from "../native/addon.js";
import { builtScript } from "./built_script.js";
import type { ResultMessage, TaskMessage } from "./protocol.js";

/**
 * Starts a worker thread with the main thread's flags where a worker accepts them:
 * not how the main code was given (`--input-type`), and none at all when a flag is
 * per-process only (`--max-old-space-size`: workers have their own heap limits).
 */
function startWorker(name: string, workerData: { owner: number; gpu?: number }): Worker {
  const execArgv = process.execArgv.filter((a) => !a.startsWith("--input-type"));
  try {
    return new Worker(builtScript("workers/worker.js"), { name, execArgv, workerData });
  } catch (e) {
    if ((e as { code?: string }).code !== "ERR_WORKER_INVALID_EXEC_ARGV") throw e;
    return new Worker(builtScript("workers/worker.js"), { name, execArgv: [], workerData });
  }
}

export interface PoolEvents {
  result(worker: string, msg: ResultMessage): void;
  /** The worker died (crash, or killed); a replacement is added right after. */
  lost(worker: string, reason: string): void;
  added(worker: string): void;
}

/**
 * Worker threads named "cpu-0", "cpu-1", ..., and one per GPU named "gpu-<device>".
 *
 * @example
 * const pool = new WorkerPool(2, events, [0]); pool.send("gpu-0", { key, steps, inputs });
 */
export class WorkerPool {
  private readonly workers = new Map<string, Worker>();
  private next = 0;
  private closed = false;

  constructor(
    readonly size: number,
    private readonly events: PoolEvents,
    /** GPU devices, one worker each, besides the `size` CPU workers. */
    readonly gpus: readonly number[] = [],
  ) {
    for (let i = 0; i < size; i++) this.spawn();
    for (const d of gpus) this.spawn(d);
  }

  get names(): string[] {
    return [...this.workers.keys()];
  }

  send(worker: string, msg: TaskMessage): void {
    const w = this.workers.get(worker);
    if (!w) throw new BasinError("BASIN_INTERNAL", `no worker ${worker}`);
    w.ref(); // a busy worker keeps the process alive
    w.postMessage(msg);
  }

  /** Terminates a worker on purpose (tests of worker loss use it). */
  async kill(worker: string): Promise<void> {
    await this.workers.get(worker)?.terminate();
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.workers.values()].map((w) => w.terminate()));
    this.workers.clear();
  }

  private spawn(gpu?: number, name?: string): void {
    const owner = ++this.next; // store owner id, unique per thread ever started
    name ??= gpu === undefined ? `cpu-${owner - 1}` : `gpu-${gpu}`;
    const w = startWorker(name, { owner, gpu });
    this.workers.set(name, w);
    w.on("message", (msg: ResultMessage) => {
      if (this.workers.get(name) !== w) return; // from a thread already gone; its tables were freed
      w.unref();
      if (msg.ok) for (const h of msg.outputs) native().claim(h);
      this.events.result(name, msg);
    });
    let reason = "exited";
    w.on("error", (err: Error) => (reason = err.message));
    w.on("exit", (code) => {
      this.workers.delete(name);
      native().releaseOwnedBy(owner);
      if (this.closed) return;
      this.events.lost(name, `worker ${name} ${reason} (exit code ${code})`);
      this.spawn(gpu, gpu === undefined ? undefined : name);
    });
    w.unref(); // idle workers never keep the process alive (after the listeners, which ref the port)
    this.events.added(name);
  }
}
