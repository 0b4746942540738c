// A Dask cluster as a place to run pipelines: a Python bridge process
// (resources/dask_bridge/bridge.py, the cluster's Python with dask + pandas) holds one
// distributed.Client, translates each plan into dask.dataframe and returns the result,
// which lands in the native store like a local run's.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { BasinError, type SerializedError } from "../../common/errors.js";
import { checkSchedulerAddress } from "./scheduler_address.js";
import type { Plan } from "../../common/plan.js";
import type { ClusterStatus } from "../../common/rpc.js";
import type { TaskGraph } from "../../graph/tasks.js";
import { native, type Handle } from "../../native/addon.js";
import { splitRows } from "../../native/split_rows.js";
import { optimize } from "../../plan/optimizer.js";
import type { OptimizeOptions } from "../../plan/passes/pass.js";
import type { Cluster, ClusterRunOptions, FrameRunOptions, StoredParts } from "../cluster.js";
import { bridgePlan } from "./bridge_plan.js";
import { bridgeJson, decodeWireTable, type WireTable } from "./wire.js";

export interface DaskClusterOptions {
  /** The Python with dask, distributed and pandas (default: BASIN_PYTHON, else /usr/bin/python3 where it exists, else python3). */
  python?: string;
  /** Seconds to wait for the scheduler before failing (default 10). */
  connectTimeout?: number;
  /**
   * Fetch results through the scheduler rather than from the workers directly: for a
   * scheduler reached through a tunnel, whose workers are not reachable from here.
   */
  viaScheduler?: boolean;
  /** What it is, for messages (default: the address). */
  label?: string;
  /** Frees what reaching the scheduler took (an SSH tunnel), after the bridge has stopped. */
  onClose?: () => Promise<void>;
}

/** One worker as the scheduler reports it. */
export interface DaskWorkerStatus {
  address: string;
  name: string;
  threads: number;
  /** Bytes in use, and the worker's limit. */
  memory: number;
  memoryLimit: number;
  /** Tasks executing or ready on it. */
  tasks: number;
}

export interface DaskStatus {
  scheduler: string;
  /** The scheduler's own dashboard (as the scheduler sees its address). */
  dashboard: string;
  workers: DaskWorkerStatus[];
  /** Tasks the workers are processing, and tasks waiting at the scheduler for a worker. */
  processing: number;
  waiting: number;
}

interface Reply {
  id: number | null;
  ok: boolean;
  error?: SerializedError;
  [key: string]: unknown;
}

/** resources/dask_bridge/bridge.py, found from the source tree and from dist/ alike. */
export function bridgeScript(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++, dir = dirname(dir)) {
    const p = join(dir, "resources", "dask_bridge", "bridge.py");
    if (existsSync(p)) return p;
  }
  throw new BasinError(
    "BASIN_INTERNAL",
    "resources/dask_bridge/bridge.py is missing from this Basin installation; reinstall Basin",
  );
}

function defaultPython(): string {
  return process.env.BASIN_PYTHON ?? (existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3");
}

/**
 * @example
 * const cluster = new DaskCluster("tcp://127.0.0.1:8786");
 * const table = await df.compute({ cluster });
 * await cluster.close();
 */
export class DaskCluster implements Cluster {
  readonly kind = "dask";
  readonly workerSlots = 0;
  readonly address: string;
  private readonly options: DaskClusterOptions;
  private proc?: ChildProcessWithoutNullStreams;
  private pending = new Map<
    number,
    { resolve: (r: Reply) => void; reject: (e: BasinError) => void; onPart?: (t: WireTable) => void }
  >();
  private nextId = 1;
  private stderrTail = "";
  private exited?: BasinError;
  private failed?: BasinError;

  constructor(address: string, options: DaskClusterOptions = {}) {
    checkSchedulerAddress(address);
    checkNoWorkersGrace(process.env.BASIN_DASK_NO_WORKERS_S);
    this.address = address;
    this.options = { ...options };
  }

  get label(): string {
    return this.options.label ?? this.address;
  }

  /** Connects to the scheduler (the first run does so too); fails within connectTimeout when it is unreachable. */
  async connect(): Promise<void> {
    await this.request({ op: "connect" });
  }

  /** Workers, their memory and tasks. */
  async status(): Promise<DaskStatus> {
    const r = await this.request({ op: "status" });
    return {
      scheduler: String(r.scheduler),
      dashboard: String(r.dashboard),
      workers: r.workers as DaskWorkerStatus[],
      processing: Number(r.processing ?? 0),
      waiting: Number(r.waiting ?? 0),
    };
  }

  async clusterStatus(): Promise<ClusterStatus> {
    const s = native().storeStats();
    const d = await this.status();
    return {
      kind: "dask",
      workers: d.workers.map((w) => ({
        name: w.name || w.address,
        kind: "cpu" as const,
        busy: w.tasks > 0,
        memory: w.memory,
        memoryLimit: w.memoryLimit,
        tasks: w.tasks,
      })),
      store: { tables: s.handles, bytes: s.bytes, peakBytes: s.peakBytes },
      dask: { scheduler: d.scheduler, dashboard: d.dashboard },
    };
  }

  /**
   * Runs a frame plan on Dask: its single result as one part, or as `groups` row
   * ranges (the whole result is released once split).
   */
  async runFrame(plan: Plan, options: FrameRunOptions = {}): Promise<StoredParts> {
    const ref = await this.runPlan(plan, { optimize: options.optimize, signal: options.signal });
    const groups = options.parts ? options.groups : undefined;
    if (!groups || groups <= 1) return { refs: [ref], skippedLines: 0, tasks: 0 };
    try {
      return { refs: splitRows(ref, groups), skippedLines: 0, tasks: 0 };
    } finally {
      native().release(ref);
    }
  }

  /** Arrays, bags and delayed calls run on Basin's own workers only. */
  async runGraph(_graph: TaskGraph, what: string, _options?: ClusterRunOptions): Promise<StoredParts> {
    throw new BasinError(
      "BASIN_PLAN",
      `${what} run on Basin's local cluster only; compute them without the Dask cluster option`,
    );
  }

  /** Retires the workers with these names gracefully (their data moves to other workers, then they close). */
  async retireWorkers(names: string[]): Promise<number> {
    const r = await this.request({ op: "retire", names });
    return Number(r.retired);
  }

  /**
   * Optimizes the plan, runs it on Dask and puts the result in the native store; the
   * caller owns the handle. Operations the bridge cannot translate fail before any
   * work is submitted, naming the operation.
   */
  async runPlan(plan: Plan, options: { optimize?: OptimizeOptions; signal?: AbortSignal } = {}): Promise<Handle> {
    const wire = bridgePlan(optimize(plan.root, options.optimize));
    const id = this.nextId;
    // Only to a bridge that runs: a cancel must not start a fresh one (the run's bridge may
    // have ended of the same Ctrl+C or stop signal).
    const onAbort = () => {
      if (this.proc) void this.request({ op: "cancel", target: id }).catch(() => {});
    };
    options.signal?.throwIfAborted();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    // The result arrives in parts (row ranges, in order), each put in the store as it comes.
    const parts: Handle[] = [];
    const addon = native();
    try {
      await this.request({ op: "run", plan: wire }, (t) => parts.push(addon.tableFromJs(decodeWireTable(t))));
      if (parts.length === 1) return parts.pop()!;
      if (parts.length === 0) throw new BasinError("BASIN_INTERNAL", "the Dask bridge sent no result");
      return addon.concat(parts);
    } catch (e) {
      // Cancelled: however the bridge answered, or ended (a stop signal reaches it too).
      if (options.signal?.aborted && !(e instanceof BasinError && e.code === "BASIN_CANCELLED"))
        throw new BasinError("BASIN_CANCELLED", `the run was cancelled (${String(options.signal.reason)})`);
      throw e;
    } finally {
      options.signal?.removeEventListener("abort", onAbort);
      for (const h of parts) addon.release(h);
    }
  }

  /**
   * Fails every request in flight with `error` and stops the bridge, whose client is
   * stuck on a lost connection (e.g. a dropped SSH tunnel); the next request starts a
   * fresh bridge.
   */
  abandon(error: BasinError): void {
    const p = this.proc;
    this.proc = undefined;
    if (p) {
      p.removeAllListeners("exit");
      p.removeAllListeners("error");
      p.on("error", () => {});
      p.kill("SIGKILL");
    }
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const w of waiting) w.reject(error);
  }

  /**
   * Like abandon(), for good: the scheduler is gone (e.g. its SLURM job ended), so
   * every later request fails with `error` too instead of waiting to connect.
   */
  fail(error: BasinError): void {
    this.failed = error;
    this.abandon(error);
  }

  /** Disconnects from the scheduler (which keeps running), stops the bridge, then runs the onClose option. */
  async close(): Promise<void> {
    await this.stopBridge();
    const onClose = this.options.onClose;
    this.options.onClose = undefined;
    await onClose?.();
  }

  private async stopBridge(): Promise<void> {
    const p = this.proc;
    if (!p) return;
    this.proc = undefined;
    if (p.exitCode !== null) return;
    const gone = new Promise<void>((resolve) => p.once("exit", () => resolve()));
    p.stdin.end(`${JSON.stringify({ op: "close" })}\n`);
    const timer = setTimeout(() => p.kill("SIGKILL"), 8000);
    await gone;
    clearTimeout(timer);
  }

  private start(): ChildProcessWithoutNullStreams {
    if (this.proc) return this.proc;
    const args = [bridgeScript(), "--scheduler", this.address, "--timeout", String(this.options.connectTimeout ?? 10)];
    if (this.options.viaScheduler) args.push("--no-direct");
    if (this.options.label) args.push("--name", this.options.label);
    const python = this.options.python ?? defaultPython();
    const proc = spawn(python, args, { stdio: ["pipe", "pipe", "pipe"] });
    this.proc = proc;
    // A Python that exits at once (a wrapper script that fails) closes its stdin under our
    // first request: the exit handler below reports it, with what it printed.
    proc.stdin.on("error", () => {});
    this.exited = undefined;
    proc.stderr.setEncoding("utf8");
    proc.stderr.on("data", (s: string) => (this.stderrTail = (this.stderrTail + s).slice(-4000)));
    createInterface({ input: proc.stdout }).on("line", (line) => this.onLine(line));
    const fail = (why: string, bySignal = false) => {
      const printed = this.stderrTail ? `:\n${this.stderrTail.trim().split("\n").slice(-6).join("\n")}` : "";
      // Ended by a signal (a stop signal to the process group, a kill, the close below after
      // its grace): not a Python without dask, so no such hint.
      this.exited = new BasinError(
        "BASIN_WORKER",
        bySignal
          ? `the Dask bridge (${python}) ${why}${printed}; the run on it stopped`
          : `the Dask bridge (${python}) ${why}${printed}; check that this Python has dask, distributed and pandas (set BASIN_PYTHON to choose another)`,
      );
      if (this.proc === proc) this.proc = undefined;
      for (const p of this.pending.values()) p.reject(this.exited);
      this.pending.clear();
    };
    proc.on("error", (e) => fail(`could not start (${e.message})`));
    proc.on("exit", (code, signal) => (signal ? fail(`was ended by ${signal}`, true) : fail(`exited (code ${code})`)));
    return proc;
  }

  private onLine(line: string): void {
    let reply: Reply;
    try {
      reply = JSON.parse(line) as Reply;
    } catch {
      this.stderrTail = (this.stderrTail + line + "\n").slice(-4000); // stray output from a library
      return;
    }
    if (reply.id === null) return; // hello
    const p = this.pending.get(reply.id);
    if (!p) return;
    if (reply.part !== undefined) {
      try {
        p.onPart?.(reply.part as WireTable);
      } catch (e) {
        this.pending.delete(reply.id);
        p.reject(BasinError.from(e));
      }
      return;
    }
    this.pending.delete(reply.id);
    if (reply.ok) p.resolve(reply);
    else
      p.reject(
        BasinError.fromJSON(
          reply.error ?? { name: "BasinError", code: "BASIN_INTERNAL", message: "the Dask bridge failed" },
        ),
      );
  }

  /** Sends a request; `onPart` takes the parts of a run's result, which come before its reply. */
  private request(body: Record<string, unknown>, onPart?: (t: WireTable) => void): Promise<Reply> {
    if (this.failed) return Promise.reject(this.failed);
    const proc = this.start();
    const id = this.nextId++;
    return new Promise<Reply>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onPart });
      proc.stdin.write(`${bridgeJson({ id, ...body })}\n`);
    });
  }
}

/** BASIN_DASK_NO_WORKERS_S, read by the bridge: a positive number of seconds, checked here where a mistake can be said. */
function checkNoWorkersGrace(value: string | undefined): void {
  if (value === undefined || (value.trim() !== "" && Number(value) > 0)) return;
  throw new BasinError(
    "BASIN_PLAN",
    `BASIN_DASK_NO_WORKERS_S must be a positive number of seconds (how long a run waits on a scheduler without workers), got ${JSON.stringify(value)}; unset it for the default of 60`,
  );
}
