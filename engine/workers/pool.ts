// The local cluster's workers: threads sharing the engine's store, or processes with
// a store of their own (a GPU's worker, so a sticky CUDA error ends that process
// only). Each runs one task at a time; a worker that dies is reported, with the
// tables only it held, and replaced.
import { fork, type ChildProcess } from "node:child_process";
import { Worker } from "node:worker_threads";
import { BasinError } from "../common/errors.js";
import { native, type GpuConfig, type GpuFault, type Handle } from "../native/addon.js";
import type { MemorySettings } from "../memory/limits.js";
import type { Ref } from "../scheduler/events.js";
import { builtScript } from "./built_script.js";
import { removeStaleSpillDirectories } from "../memory/spill_dir.js";
import { HeldTables, isHeld } from "./held_tables.js";
import type {
  Answer,
  ProcessQuery,
  ProcessReply,
  ProcessRequest,
  ResultMessage,
  TaskMessage,
  WorkerStats,
} from "./protocol.js";

/**
 * Starts a worker thread with the main thread's flags where a worker accepts them:
 * not how the main code was given (`--input-type`), and none at all when a flag is
 * per-process only (`--max-old-space-size`: workers have their own heap limits).
 */
function startThread(name: string, workerData: { owner: number; gpu?: number }): Worker {
  const execArgv = process.execArgv.filter((a) => !a.startsWith("--input-type"));
  try {
    return new Worker(builtScript("workers/worker.js"), { name, execArgv, workerData });
  } catch (e) {
    if ((e as { code?: string }).code !== "ERR_WORKER_INVALID_EXEC_ARGV") throw e;
    return new Worker(builtScript("workers/worker.js"), { name, execArgv: [], workerData });
  }
}

/** A worker process: Node (or Electron as Node) running workers/worker_process.js. */
function startProcess(gpu?: number): ChildProcess {
  return fork(builtScript("workers/worker_process.js"), [gpu === undefined ? "" : String(gpu)], {
    serialization: "advanced",
    execArgv: [],
    env: process.versions.electron ? { ...process.env, ELECTRON_RUN_AS_NODE: "1" } : process.env,
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
}

export interface PoolEvents {
  /** A task's result; the outputs of a process's task are held refs (held_tables.ts). */
  result(worker: string, msg: ResultMessage): void;
  /** The worker died (crash, or killed), taking `lost` with it; a replacement is added right after. */
  lost(worker: string, reason: string, lost: Ref[]): void;
  added(worker: string): void;
}

/** How long a worker process may take to exit when the pool closes before it is killed. */
const CLOSE_GRACE_MS = 2000;

/** Which workers are processes: none (all threads, the default), the GPUs' workers, or all. */
export type WorkerProcesses = "none" | "gpu" | "all";
export const WORKER_PROCESSES: readonly WorkerProcesses[] = ["none", "gpu", "all"];

type Link =
  | { kind: "thread"; thread: Worker; owner: number }
  | {
      kind: "process";
      child: ChildProcess;
      gpu?: number;
      /** Running a task now. */
      busy: boolean;
      /** Requests sent, by id, waiting for their answer. */
      pending: Map<number, { resolve(v: number | WorkerStats): void; reject(e: Error): void }>;
    };
type ProcessLink = Extract<Link, { kind: "process" }>;

/**
 * Workers named "cpu-0", "cpu-1", ..., and one per GPU named "gpu-<device>".
 *
 * @example
 * const pool = new WorkerPool(2, events, [0], "gpu"); pool.send("gpu-0", { key, steps, inputs });
 */
export class WorkerPool {
  private readonly workers = new Map<string, Link>();
  /** Tables held by worker processes, and how they move. */
  readonly held = new HeldTables(
    (worker, req) => this.request(worker, req),
    (worker, handles) => this.releaseInWorker(worker, handles),
  );
  private next = 0;
  private requests = 0;
  /** Each worker process's latest stats (processStats). */
  private readonly lastStats = new Map<string, WorkerStats>();
  /** The settings of the latest run, for worker processes started during it. */
  private settings?: { memory: MemorySettings; gpuConfigs: ReadonlyMap<number, GpuConfig> };
  private closed = false;

  constructor(
    readonly size: number,
    private readonly events: PoolEvents,
    /** GPU devices, one worker each, besides the `size` CPU workers. */
    readonly gpus: readonly number[] = [],
    readonly processes: WorkerProcesses = "none",
  ) {
    for (let i = 0; i < size; i++) this.spawn();
    for (const d of gpus) this.spawn(d);
  }

  get names(): string[] {
    return [...this.workers.keys()];
  }

  /** Whether a worker is a process (its tables are its own; inputs must be placed there). */
  isProcess(worker: string): boolean {
    return this.workers.get(worker)?.kind === "process";
  }

  /** The worker now running under a name: compare two answers to tell whether it was replaced meanwhile. */
  incarnation(worker: string): unknown {
    return this.workers.get(worker);
  }

  send(worker: string, msg: TaskMessage): void {
    const w = this.workers.get(worker);
    if (!w) throw new BasinError("BASIN_INTERNAL", `no worker ${worker}`);
    if (w.kind === "thread") {
      w.thread.ref(); // a busy worker keeps the process alive
      w.thread.postMessage(msg);
    } else {
      w.busy = true;
      this.hold(w);
      w.child.send({ type: "task", task: msg } satisfies ProcessRequest);
    }
  }

  /** Applies the run's memory (and its GPU's) settings in every worker process. */
  async configure(memory: MemorySettings, gpuConfigs: ReadonlyMap<number, GpuConfig>): Promise<void> {
    this.settings = { memory, gpuConfigs };
    await Promise.all(
      this.names
        .filter((w) => this.isProcess(w))
        .map((w) =>
          this.configureOne(w).catch((e) => {
            // One that died meanwhile is replaced, and its replacement configured as it starts.
            if (this.incarnation(w) !== undefined && BasinError.from(e).code !== "BASIN_WORKER") throw e;
          }),
        ),
    );
  }

  /** Sends the last settings to one worker process (each new one gets them before its first task). */
  private configureOne(worker: string): Promise<number> {
    if (!this.settings) return Promise.resolve(0);
    const { memory, gpuConfigs } = this.settings;
    // Worker processes share the host limit with the engine's store: each gets its part.
    const share = { ...memory, hostLimit: Math.floor(memory.hostLimit / Math.max(1, this.workers.size)) };
    const device = (this.workers.get(worker) as ProcessLink | undefined)?.gpu;
    const config = device === undefined ? undefined : gpuConfigs.get(device);
    const gpu = device !== undefined && config ? { device, config } : undefined;
    return this.request(worker, { type: "configure", memory: share, ...(gpu ? { gpu } : {}) });
  }

  /**
   * A run is over: worker processes drop their per-run caches and their copies of
   * tables the engine has unpersisted (and, with `trim`, give freed memory back).
   */
  idle(trim: boolean): void {
    this.held.pruneStored();
    for (const w of this.workers.values())
      if (w.kind === "process" && w.child.connected) w.child.send({ type: "idle", trim } satisfies ProcessRequest);
  }

  /**
   * Each live worker process's stats, by worker. A process busy with a task answers when
   * the task ends: after `waitMs` its last answer stands in (none before its first).
   */
  async processStats(waitMs = 250): Promise<Record<string, WorkerStats>> {
    const names = this.names.filter((w) => this.isProcess(w));
    const asked = names.map((w) =>
      this.request(w, { type: "stats" }).then(
        (s) => void this.lastStats.set(w, s),
        () => {},
      ),
    );
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([Promise.all(asked), new Promise((r) => (timer = setTimeout(r, waitMs)))]);
    clearTimeout(timer);
    const out: Record<string, WorkerStats> = {};
    for (const w of names) {
      const s = this.lastStats.get(w);
      if (s) out[w] = s;
    }
    return out;
  }

  /** Makes a worker process's next task fail with a CUDA fault (the GPU suite's fault injection). */
  injectFault(worker: string, kind: GpuFault): void {
    const w = this.workers.get(worker);
    if (w?.kind !== "process") throw new BasinError("BASIN_INTERNAL", `${worker} is not a worker process`);
    w.child.send({ type: "fault", kind } satisfies ProcessRequest);
  }

  /** Releases refs: store handles here, held tables in their process. */
  release(refs: readonly Ref[]): void {
    for (const r of refs) {
      if (!isHeld(r)) native().release(r);
      else this.held.release(r);
    }
  }

  /** Releases tables in a worker process (moved in for a task that never ran, or no longer wanted). */
  releaseInWorker(worker: string, handles: readonly number[]): void {
    const w = this.workers.get(worker);
    if (handles.length > 0 && w?.kind === "process" && w.child.connected)
      w.child.send({ type: "release", handles: [...handles] } satisfies ProcessRequest);
  }

  /** Ends a worker on purpose (tests of worker loss, and tasks past a failed run's grace period). */
  async kill(worker: string): Promise<void> {
    const w = this.workers.get(worker);
    if (w?.kind === "thread") await w.thread.terminate();
    else if (w) await this.endProcess(w, 0);
  }

  /**
   * Ends every worker. A worker process is asked to exit (its IPC channel closes), so it
   * removes its spill folder; one still busy after CLOSE_GRACE_MS is killed.
   */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(
      [...this.workers.values()].map((w) =>
        w.kind === "thread" ? w.thread.terminate() : this.endProcess(w, CLOSE_GRACE_MS),
      ),
    );
    this.workers.clear();
  }

  /** Ends a worker process: asked to exit, and killed after `graceMs` (at once with 0). */
  private async endProcess(w: ProcessLink, graceMs: number): Promise<void> {
    if (w.child.exitCode !== null || w.child.signalCode !== null) return;
    const exited = new Promise((resolve) => w.child.once("exit", resolve));
    this.hold(w); // an idle process is unref'd: its exit must still be waited for
    if (graceMs === 0) w.child.kill("SIGKILL");
    const force = graceMs > 0 ? setTimeout(() => w.child.kill("SIGKILL"), graceMs) : undefined;
    if (graceMs > 0 && w.child.connected) w.child.disconnect();
    await exited;
    clearTimeout(force);
  }

  /**
   * Makes GPU worker process `worker` home to the engine's stored table `host` (a
   * persisted partition): the table moves into its store, kept there as the stored
   * copy later runs read in place, and its columns go up to its GPU.
   *
   * @example
   * await pool.keepOnGpu("gpu-0", handle);
   */
  async keepOnGpu(worker: string, host: Handle): Promise<void> {
    const { handle } = await this.held.placeStored(host, worker);
    await this.request(worker, { type: "keep", handle });
  }

  private request<Q extends ProcessQuery>(worker: string, req: Q): Promise<Answer<Q>> {
    const w = this.workers.get(worker);
    if (w?.kind !== "process" || !w.child.connected)
      return Promise.reject(new BasinError("BASIN_WORKER", `worker ${worker} is gone`));
    const id = ++this.requests;
    return new Promise<Answer<Q>>((resolve, reject) => {
      w.pending.set(id, { resolve: (v) => resolve(v as Answer<Q>), reject });
      this.hold(w);
      w.child.send({ ...req, id } satisfies ProcessRequest);
    });
  }

  /** A process with work under way (a task, or a request) keeps the engine alive; an idle one never does. */
  private hold(w: ProcessLink): void {
    w.child.ref();
    w.child.channel?.ref();
  }

  /** Lets the engine exit without this process, once it has nothing under way. */
  private letGo(w: ProcessLink): void {
    if (w.busy || w.pending.size > 0) return;
    w.child.unref();
    w.child.channel?.unref();
  }

  private spawn(gpu?: number, name?: string): void {
    const owner = ++this.next; // store owner id, unique per worker ever started
    name ??= gpu === undefined ? `cpu-${owner - 1}` : `gpu-${gpu}`;
    const asProcess = this.processes === "all" || (this.processes === "gpu" && gpu !== undefined);
    const replace = (reason: string, lost: Ref[]) => {
      if (this.closed) return;
      this.events.lost(name, reason, lost);
      this.spawn(gpu, gpu === undefined ? undefined : name);
    };
    if (asProcess) this.spawnProcess(name, gpu, replace);
    else this.spawnThread(name, owner, gpu, replace);
    this.events.added(name);
  }

  private spawnThread(
    name: string,
    owner: number,
    gpu: number | undefined,
    replace: (r: string, lost: Ref[]) => void,
  ): void {
    const thread = startThread(name, { owner, gpu });
    const link: Link = { kind: "thread", thread, owner };
    this.workers.set(name, link);
    thread.on("message", (msg: ResultMessage) => {
      if (this.workers.get(name) !== link) return; // from a thread already gone; its tables were freed
      thread.unref();
      if (msg.ok) for (const h of msg.outputs) native().claim(h);
      this.events.result(name, msg);
    });
    let reason = "exited";
    thread.on("error", (err: Error) => (reason = err.message));
    thread.on("exit", (code) => {
      if (this.workers.get(name) === link) this.workers.delete(name);
      native().releaseOwnedBy(owner);
      replace(`worker ${name} ${reason} (exit code ${code})`, []);
    });
    thread.unref(); // idle workers never keep the process alive (after the listeners, which ref the port)
  }

  private spawnProcess(name: string, gpu: number | undefined, replace: (r: string, lost: Ref[]) => void): void {
    const child = startProcess(gpu);
    const link: ProcessLink = { kind: "process", child, gpu, busy: false, pending: new Map() };
    this.workers.set(name, link);
    child.on("message", (msg: ProcessReply) => {
      if (this.workers.get(name) !== link) return;
      if (msg.type === "reply") {
        const p = link.pending.get(msg.id);
        link.pending.delete(msg.id);
        if (msg.ok) p?.resolve(msg.value);
        else p?.reject(BasinError.fromJSON(msg.error));
      } else {
        link.busy = false;
        const r = msg.result;
        this.events.result(name, r.ok ? { ...r, outputs: r.outputs.map((h) => this.held.hold(name, h)) } : r);
      }
      this.letGo(link);
    });
    let reason = "exited";
    child.on("error", (err: Error) => (reason = err.message));
    child.on("exit", (code, signal) => {
      if (this.workers.get(name) === link) this.workers.delete(name);
      this.lastStats.delete(name);
      // A killed process could not remove its spill folder: the engine does.
      if (signal && this.settings) removeStaleSpillDirectories(this.settings.memory.localDirectory);
      const lost = this.held.dropWorker(name);
      // The scheduler hears of the loss before any request to this worker fails, so a
      // task waiting on a lost table is already being recomputed when its move fails.
      replace(`worker process ${name} ${signal ? `was killed (${signal})` : `${reason} (exit code ${code})`}`, lost);
      const gone = new BasinError("BASIN_WORKER", `worker process ${name} exited`);
      for (const p of link.pending.values()) p.reject(gone);
      link.pending.clear();
    });
    this.letGo(link);
    // Messages arrive in order: a replacement is configured before its first task.
    this.configureOne(name).catch(() => {}); // it failing means it died: its exit is handled above
  }
}
