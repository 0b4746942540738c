// The local cluster: a pool of CPU worker threads in this process, sharing the
// native store. Runs share the workers: each has its own scheduler state, and the
// workers take their tasks in turn (worker_turns.ts).
import { availableParallelism } from "node:os";
import { BasinError } from "../common/errors.js";
import { unpersistedError } from "../common/unpersisted.js";
import type { ClusterStatus, GpuMemoryStatus } from "../common/rpc.js";
import type { Plan } from "../common/plan.js";
import type { TaskGraph } from "../graph/tasks.js";
import { withWriteTasks } from "../graph/write_tasks.js";
import { lowerPlan } from "../lower/lower.js";
import type { DeviceShare, MemoryBudget } from "../lower/out_of_core.js";
import { applyMemory, resolveMemory, type MemoryOptions, type MemorySettings } from "../memory/limits.js";
import { addMemoryStats, addSpill, addStoreStats, memoryStatus, spillCounters } from "../memory/status.js";
import { native, type GpuStats, type Handle, type MemoryStats, type StoreStats } from "../native/addon.js";
import { optimize } from "../plan/optimizer.js";
import type { Ref } from "../scheduler/events.js";
import { CPU_TASKS, isGpuWorker, type CpuTasks } from "../scheduler/placement.js";
import { GraphRun, type RunOptions } from "../scheduler/shell.js";
import type { Cluster, ClusterRunOptions, FrameRunOptions, StoredParts } from "./cluster.js";
import { WORKER_PROCESSES, WorkerPool, type WorkerProcesses } from "../workers/pool.js";
import { isHeld, type Placed } from "../workers/held_tables.js";
import { writesToSink, type Step } from "../graph/tasks.js";
import { runTask } from "../workers/run_task.js";
import { applyGpus, holdGpus, releaseGpus, resolveGpus, type GpuOptions, type GpuSettings } from "./gpus.js";
import type { ResultMessage, TaskMessage } from "../workers/protocol.js";
import { TaskStreamLog, taskKind } from "./task_stream.js";
import { WorkerTurns, type Turn } from "./worker_turns.js";
import { deviceHomes } from "./device_home.js";
import { GpuMonitor, onPath, type GpuMonitorOptions } from "./gpu_monitor.js";

/**
 * How long the engine waits without a run before giving freed memory back to the
 * system: jemalloc's default decay. Memory given back is slow to take again (fresh
 * pages fault; on a VM whose freed memory goes back to the host, twice): SF 10's 22
 * queries from Parquet, 2.5 s apart, took 2.8M page faults and 6.7 s of kernel time
 * with 2 s here, 1.1M and 4.4–5.9 s with 10 s (as many as back to back).
 */
export const IDLE_RELEASE_MS = 10_000;

/**
 * memoryLimit, spillLimit and localDirectory (engine/memory/limits.ts) apply to the
 * process-wide store while this cluster runs a graph; gpus and the device options
 * (engine/cluster/gpus.ts) start one GPU worker per GPU besides the CPU workers.
 */
export interface LocalClusterOptions extends MemoryOptions, GpuOptions {
  /** CPU worker threads (default: one per core; 0 is allowed when there are GPU workers). */
  workers?: number;
  /** How GPU utilisation is read while there are GPU workers (default: nvidia-smi from PATH, every second). */
  gpuMonitor?: GpuMonitorOptions;
  /**
   * Which workers run as processes with a store of their own (default "none": every
   * worker is a thread of this process). A worker process that dies loses only what
   * it held, which is recomputed from the task graph; tables move to and from it
   * through shared memory. The environment variable BASIN_WORKER_PROCESSES sets the default.
   */
  workerProcesses?: WorkerProcesses;
  /**
   * What the CPU workers run beside GPU workers (default "all"). "reads": only the tasks
   * that read files, so CSV and Parquet are parsed on every core while everything else
   * (the queries over persisted tables) runs on the GPUs alone. Needs GPU workers.
   */
  cpuTasks?: CpuTasks;
}

export interface RunResult {
  /** The result (the first part of a partitioned graph's). */
  ref: Ref;
  /** Every part of the result, in order: [ref] unless the graph is partitioned. The caller owns them all. */
  refs: Ref[];
  skippedLines: number;
}

/**
 * @example
 * const cluster = new LocalCluster({ workers: 2, gpus: "all" });
 * const table = await df.compute({ cluster });
 * await cluster.close();
 */
export class LocalCluster implements Cluster {
  readonly kind = "local";
  readonly label = "local";
  readonly pool: WorkerPool;
  /** Runs under way (started, not yet settled: a task of theirs may still run), with their tasks by key. */
  private readonly runs = new Map<GraphRun, Map<string, TaskGraph["tasks"][number]>>();
  /** Runs submitted and not settled, started or not: idle() waits for them. */
  private readonly outstanding = new Set<Promise<void>>();
  /** The worker processes' settings, sent once (a replacement process gets them as it starts). */
  private configured?: Promise<void>;
  /** Which run's task each worker runs, and those waiting for it. */
  private readonly turns = new WorkerTurns<GraphRun>((worker, turn) => this.startTask(worker, turn));
  /** Where the next offer of a freed worker starts among the runs (each gets the first offer in turn). */
  private nextOffer = 0;
  private idleTimer?: ReturnType<typeof setTimeout>;
  /** The memory limits this cluster's runs apply. */
  readonly memory: MemorySettings;
  private readonly gpuSettings: GpuSettings;
  private readonly cpuTasks: CpuTasks;
  /** Stored tables uploaded by keepOnDevices, and their GPU: its worker takes their tasks when free. */
  private readonly deviceHomes = new Map<Handle, number>();
  /** Whether the GPU workers are this process's threads (their GPU memory is this process's). */
  private readonly gpusInProcess: boolean;
  /** Every task's span on its worker, for the dashboard's task stream. */
  readonly taskStream = new TaskStreamLog();
  /**
   * Utilisation of the GPUs with a worker (nvidia-smi): started by the first clusterStatus()
   * (a dashboard is watching; batch runs never start it), stopped by close().
   */
  private monitor?: GpuMonitor;
  private readonly monitorOptions?: GpuMonitorOptions;
  private closed = false;
  /** Each GPU worker's device's PCI bus id, to find its nvidia-smi reading. */
  private readonly busIds = new Map<number, string>();

  constructor(options: LocalClusterOptions = {}) {
    this.memory = resolveMemory(options);
    const n = options.workers ?? availableParallelism();
    this.gpuSettings = resolveGpus(options);
    const gpus = this.gpuSettings.devices;
    if (!Number.isInteger(n) || n < (gpus.length > 0 ? 0 : 1))
      throw new BasinError(
        "BASIN_PLAN",
        `workers must be a positive integer${gpus.length > 0 ? " or 0 (GPU workers only)" : ""}, got ${n}`,
      );
    // Each worker is a thread with its own heap: thousands exhaust memory and file handles.
    const most = Math.max(64, 8 * availableParallelism());
    if (n > most)
      throw new BasinError(
        "BASIN_PLAN",
        `workers ${n} is more than this machine can run (at most ${most}: 8 per core); the default is one per core`,
      );
    const cpuTasks = options.cpuTasks ?? "all";
    if (!CPU_TASKS.includes(cpuTasks))
      throw new BasinError(
        "BASIN_PLAN",
        `cpuTasks must be one of ${CPU_TASKS.map((p) => `"${p}"`).join(", ")}, got ${JSON.stringify(cpuTasks)}`,
      );
    if (cpuTasks === "reads" && gpus.length === 0)
      throw new BasinError(
        "BASIN_PLAN",
        'cpuTasks "reads" (--cpu-tasks reads) leaves every task but file reads to GPU workers, and this cluster has none (no GPU is visible, or gpus is "none"); give GPUs (--gpus) or leave cpuTasks out',
      );
    this.cpuTasks = cpuTasks;
    const processes = options.workerProcesses ?? process.env.BASIN_WORKER_PROCESSES ?? "none";
    if (!WORKER_PROCESSES.includes(processes as WorkerProcesses))
      throw new BasinError(
        "BASIN_PLAN",
        `workerProcesses (or BASIN_WORKER_PROCESSES) must be one of ${WORKER_PROCESSES.map((p) => `"${p}"`).join(", ")}, got ${JSON.stringify(processes)}`,
      );
    this.pool = new WorkerPool(
      n,
      {
        result: (worker, msg) => this.onResult(worker, msg),
        lost: (worker, reason, lost) => {
          this.taskStream.dropWorker(worker);
          const { current } = this.turns.lost(worker);
          for (const run of this.runs.keys())
            run.feed({
              type: "workerLost",
              worker,
              reason,
              lost,
              started: current?.run === run,
              stimulusId: run.stimulus("lost"),
            });
        },
        added: (worker) => {
          for (const run of this.runs.keys())
            run.feed({ type: "workerAdded", worker, stimulusId: run.stimulus("added") });
        },
      },
      gpus,
      processes as WorkerProcesses,
    );
    if (this.pool.gpus.length > 0) {
      for (const d of native().gpuInfo().devices) this.busIds.set(d.index, d.pciBusId);
      this.monitorOptions = options.gpuMonitor;
    }
    this.gpusInProcess = gpus.length > 0 && processes !== "gpu" && processes !== "all";
    if (this.gpusInProcess) holdGpus(this.gpuSettings);
  }

  get workerCount(): number {
    return this.pool.size;
  }

  /** Workers that compute: CPU and GPU together, or the GPUs alone under cpuTasks "reads" (persist()'s default partitions: one per GPU, the whole table on the device). */
  get workerSlots(): number {
    return this.cpuTasks === "reads" ? this.pool.gpus.length : this.pool.size + this.pool.gpus.length;
  }

  /**
   * Under cpuTasks "reads" (the GPUs alone compute): a quarter of the smallest device
   * memory limit, the bytes of a persisted partition whose columns and a task's working
   * memory fit on a GPU (persist()'s default partitionBytes). Undefined otherwise.
   */
  get devicePartitionBytes(): number | undefined {
    if (this.cpuTasks !== "reads") return undefined;
    const limit = this.smallestDeviceLimit();
    return limit ? Math.floor(limit / 4) : undefined;
  }

  /** Where the GPUs alone compute: how many, and the bytes of a task's partition on one (the lowering's shuffle width). */
  private get deviceShare(): DeviceShare | undefined {
    const partBytes = this.devicePartitionBytes;
    return partBytes === undefined ? undefined : { gpus: this.pool.gpus.length, partBytes };
  }

  /** The smallest memory limit set on this cluster's GPUs (bytes), or 0 when none is set. */
  private smallestDeviceLimit(): number {
    const limits = [...this.gpuSettings.configs.values()].flatMap((c) => (c.memoryLimit ? [c.memoryLimit] : []));
    return limits.length > 0 ? Math.min(...limits) : 0;
  }

  /**
   * Where the GPUs alone compute (cpuTasks "reads"): uploads persisted partitions to
   * their GPUs now, dealt in turn, up to half of each device's memory limit with what
   * earlier persists keep there, so that the first query over them does not pay the
   * upload (persist() calls it). A GPU whose worker is a process gets its partitions
   * moved into that process first (kept there for later runs). Elsewhere it does nothing.
   */
  async keepOnDevices(handles: readonly Handle[]): Promise<void> {
    if (this.cpuTasks !== "reads" || this.closed) return;
    const budget = this.smallestDeviceLimit() / 2;
    const addon = native();
    const bytes = handles.map((h) => addon.tableBytes(h));
    const kept = new Map<number, number>();
    for (const [h, device] of this.deviceHomes) {
      if (!addon.tableExists(h))
        this.deviceHomes.delete(h); // released since
      else kept.set(device, (kept.get(device) ?? 0) + addon.tableBytes(h));
    }
    if (this.gpusInProcess) applyGpus(this.gpuSettings, true);
    await Promise.all(
      deviceHomes(bytes, this.pool.gpus, budget, kept).map(async ({ index, device }) => {
        const h = handles[index]!;
        if (!this.pool.isProcess(`gpu-${device}`)) {
          await addon.gpuKeep(device, h);
          this.deviceHomes.set(h, device);
          return;
        }
        // A partition a worker process made stays there: a GPU's process keeps it on its
        // own GPU; one a CPU worker process keeps is left where it is.
        const keeper = this.pool.held.storedIn(h) ?? `gpu-${device}`;
        if (!isGpuWorker(keeper)) return;
        try {
          await this.pool.keepOnGpu(keeper, h);
          this.deviceHomes.set(h, Number(keeper.slice("gpu-".length)));
        } catch (e) {
          // Only an optimisation: a worker process gone meanwhile leaves the upload to the queries.
          if (BasinError.from(e).code !== "BASIN_WORKER") throw e;
        }
      }),
    );
  }

  /** Persisted tables were let go: worker processes drop their copies now, not after the next run. */
  unpersisted(): void {
    this.pool.held.pruneStored();
  }

  /** Whether every worker is a thread of this process, reading its store in place (no worker processes). */
  get workersShareStore(): boolean {
    return this.pool.names.every((w) => !this.pool.isProcess(w));
  }

  /** The GPUs this cluster has a worker on. */
  get gpus(): readonly number[] {
    return this.pool.gpus;
  }

  /** The memory the lowering plans tasks for: the host limit, shared by the workers. */
  get budget(): MemoryBudget {
    return { limit: this.memory.hostLimit, workers: this.pool.size + this.pool.gpus.length };
  }

  /**
   * Bytes per memory tier and spill activity (process-wide).
   *
   * @example
   * const { spilledBytes, diskBytes } = cluster.memoryStats();
   */
  memoryStats(): MemoryStats {
    return native().memoryStats();
  }

  /** Workers running a task now. */
  busyWorkers(): string[] {
    return this.turns.busy();
  }

  /** Nothing to reach: the workers are this process's. */
  async connect(): Promise<void> {}

  /**
   * This process's store and memory statistics with its worker processes' added, and
   * every GPU's (a GPU worker process's own): the dashboard's figures, and what `basin
   * run --stats` prints (read before close).
   *
   * @example
   * const { memory, gpus } = await cluster.memoryTotals(); formatMemoryStats(memory, gpus);
   */
  async memoryTotals(): Promise<{ store: StoreStats; memory: MemoryStats; gpus: GpuStats[] }> {
    const workers = Object.values(await this.pool.processStats());
    const inProcesses = workers.flatMap((w) => w.gpus);
    return {
      store: addStoreStats(
        native().storeStats(),
        workers.map((w) => w.store),
      ),
      memory: addMemoryStats(
        native().memoryStats(),
        workers.map((w) => w.memory),
      ),
      gpus: [
        ...native()
          .gpuStats()
          .filter((g) => !inProcesses.some((p) => p.device === g.device)),
        ...inProcesses,
      ].sort((a, b) => a.device - b.device),
    };
  }

  async runFrame(plan: Plan, options: FrameRunOptions = {}): Promise<StoredParts> {
    let graph = lowerPlan(optimize(plan.root, options.optimize), {
      budget: this.budget,
      parts: options.parts ?? false,
      groups: options.groups,
      scanWorkers: this.cpuTasks === "reads" ? Math.max(1, this.pool.size) : this.pool.size + this.pool.gpus.length,
      devices: this.deviceShare,
    });
    let written: number | undefined;
    if (options.writeStep) ({ graph, parts: written } = withWriteTasks(graph, options.writeStep));
    const { refs, skippedLines } = await this.run(graph, options, options.persisted);
    return { refs, skippedLines, tasks: graph.tasks.length, ...(written === undefined ? {} : { written }) };
  }

  async runGraph(graph: TaskGraph, _what: string, options: ClusterRunOptions = {}): Promise<StoredParts> {
    const { refs, skippedLines } = await this.run(graph, options);
    return { refs, skippedLines, tasks: graph.tasks.length };
  }

  /** Workers, memory, GPUs (or why none), and with `since` the task spans recorded after that cursor. */
  async clusterStatus(since?: number): Promise<ClusterStatus> {
    if (this.pool.gpus.length > 0 && !this.monitor && !this.closed) {
      this.monitor = new GpuMonitor(this.monitorOptions);
      this.monitor.start();
    }
    // Worker processes hold their own tables (and their GPU's state): theirs count too.
    const totals = await this.memoryTotals();
    const s = totals.store;
    const gpus = totals.gpus.filter((g) => this.gpus.includes(g.device));
    return {
      kind: "local",
      workers: this.pool.names.map((name) => {
        const busy = this.busyWorkers().includes(name);
        if (!isGpuWorker(name)) return { name, kind: "cpu" as const, busy };
        const g = gpus.find((x) => `gpu-${x.device}` === name);
        return {
          name,
          kind: "gpu" as const,
          busy,
          ...(g && g.limit > 0 ? { memory: g.used, memoryLimit: g.limit } : {}),
        };
      }),
      store: { tables: s.handles, bytes: s.bytes, peakBytes: s.peakBytes },
      memory: memoryStatus(totals.memory, gpus, (device) => this.gpuReading(device)),
      gpu:
        this.pool.gpus.length > 0
          ? { workers: this.pool.gpus.length, why: "", utilisation: this.monitor?.why ?? "" }
          : { workers: 0, why: noGpuReason(this.gpuSettings) },
      ...(typeof since === "number" && since >= 0 ? { stream: this.taskStream.read(since) } : {}),
    };
  }

  /** nvidia-smi's latest reading of a GPU worker's device (matched by PCI bus id), or undefined. */
  private gpuReading(device: number): GpuMemoryStatus["reading"] {
    const bus = this.busIds.get(device);
    const r = bus ? this.monitor?.reading(bus) : this.monitor?.all().find((x) => x.index === device);
    return r && { utilisation: r.utilisation, memoryUsed: r.memoryUsed, memoryTotal: r.memoryTotal, at: r.at };
  }

  /**
   * Runs a graph beside any other runs (the workers take their tasks in turn); resolves
   * with the result's handles. With `persisted`, worker processes keep their copies of
   * the result (see HeldTables.take).
   */
  async run(graph: TaskGraph, options: RunOptions = {}, persisted = false): Promise<RunResult> {
    if (this.closed)
      throw new BasinError(
        "BASIN_PLAN",
        "this LocalCluster was closed (cluster.close()); create a new one to run on, or leave cluster out to run on the default cluster",
      );
    let settled!: () => void;
    const over = new Promise<void>((resolve) => (settled = resolve));
    this.outstanding.add(over);
    void over.then(() => this.outstanding.delete(over));
    // The process-wide limits at every run's start (another cluster's run may have set its
    // own meanwhile); the worker processes, this cluster's alone, once.
    let configured: Promise<void> | undefined;
    try {
      applyMemory(this.memory);
      applyGpus(this.gpuSettings, this.gpusInProcess);
      configured = this.configured ??= this.pool.configure(this.memory, this.gpuSettings.configs);
      await configured;
    } catch (e) {
      if (configured && this.configured === configured) this.configured = undefined; // the next run tries again
      settled(); // a run refused before it started is over
      throw e;
    }
    const run: GraphRun = new GraphRun(
      graph,
      {
        workers: () => this.pool.names,
        execute: (worker, key, inputs) => this.turns.give(worker, { run, key, inputs }),
        release: (refs) => this.pool.release(refs),
        taken: () => this.turns.busy(),
        overMemory: () => native().memoryStats().overLimit,
        // Only a worker on this run's task: one whose turn has not come has it taken back.
        abandon: (worker) => void (this.turns.on(worker)?.run === run && this.pool.kill(worker)),
        cpuTasks: this.cpuTasks,
        storedHome: (h) => {
          const device = this.deviceHomes.get(h);
          return device !== undefined ? `gpu-${device}` : this.pool.held.storedIn(h);
        },
      },
      options,
    );
    this.runs.set(run, new Map(graph.tasks.map((t) => [t.key, t])));
    clearTimeout(this.idleTimer);
    void run.settled.then(() => {
      this.ended(run);
      settled();
    });
    // A failed run's tasks still waiting for a worker never start.
    run.result.catch(() => this.withdraw(run));
    run.start();
    // What worker processes hold of the result comes to the engine's store: the caller owns it there.
    const refs = await takeAll(
      await run.result,
      (r) => this.pool.held.take(r, persisted),
      (r) => this.pool.release(r),
    );
    // Outputs a GPU kept (the device tier) come down now, off the JS thread: the
    // caller reads them here, and a GPU failure after the run cannot lose them.
    try {
      await native().tablesToHost(refs);
    } catch (e) {
      this.pool.release(refs);
      throw e;
    }
    return { ref: refs[0], refs, skippedLines: run.skippedLines };
  }

  /** A run is over and none of its tasks runs: with no other run left, the engine tidies up. */
  private ended(run: GraphRun): void {
    this.runs.delete(run);
    native().purgeBroadcastBuilds(); // the run's right sides are let go by now
    if (this.runs.size > 0) return;
    this.pool.idle(false); // also lets go of worker copies of tables unpersisted since
    this.releaseWhenIdle();
  }

  /** Takes back a failed run's tasks that wait for a worker: the run hears they ended without running. */
  private withdraw(run: GraphRun): void {
    for (const { worker, turn } of this.turns.withdraw(run))
      run.feed({
        type: "taskErred",
        key: turn.key,
        worker,
        error: new BasinError("BASIN_CANCELLED", "the run ended before this task's turn").toJSON(),
        stimulusId: run.stimulus("withdrawn"),
      });
  }

  /** A worker's turn came: the task goes to it. */
  private startTask(worker: string, { run, key, inputs }: Turn<GraphRun>): void {
    // The other runs see the worker taken (they give it nothing until it is free); this
    // one, that it is its own (it may have seen it taken while its task waited there).
    for (const r of this.runs.keys())
      r.feed({ type: r === run ? "workerAdded" : "workerTaken", worker, stimulusId: r.stimulus("turn") });
    this.taskStream.started(worker, key, spillCounters(native().memoryStats()));
    const steps = this.runs.get(run)!.get(key)!.steps;
    if (this.pool.isProcess(worker) || inputs.some(isHeld)) return void this.dispatch(run, worker, key, steps, inputs);
    try {
      this.pool.send(worker, { key, steps, inputs });
    } catch (e) {
      // A task that could not be sent fails as itself; its worker goes on to its next turn.
      this.endTurn(worker);
      run.feed({ type: "taskErred", key, worker, error: BasinError.from(e).toJSON(), stimulusId: run.stimulus("err") });
    }
  }

  /**
   * Ends the worker's turn: its next waiting task starts, or, with none, the other runs
   * are offered the worker in turn until one gives it a task (the run whose task ended
   * hears of it last, by its result, so a long run does not keep a worker from the rest).
   * Returns the run whose task it was.
   */
  private endTurn(worker: string): GraphRun | undefined {
    const ended = this.turns.ended(worker)?.run;
    const runs = [...this.runs.keys()];
    for (let i = 0; i < runs.length && !this.turns.on(worker); i++) {
      const r = runs[(this.nextOffer + i) % runs.length];
      if (r === ended) continue;
      r.feed({ type: "workerAdded", worker, stimulusId: r.stimulus("free") });
      if (this.turns.on(worker)) this.nextOffer = (this.nextOffer + i + 1) % runs.length;
    }
    return ended;
  }

  /**
   * Resolves once no run is submitted or running, tasks of cancelled runs included
   * (a cancelled run answers at once; its tasks finish or are ended within the grace period).
   *
   * @example
   * ac.abort(); await cluster.idle(); // every worker is free now
   */
  async idle(): Promise<void> {
    while (this.outstanding.size > 0) await Promise.all(this.outstanding);
  }

  async close(): Promise<void> {
    const first = !this.closed;
    this.closed = true;
    this.monitor?.stop();
    await this.idle();
    clearTimeout(this.idleTimer);
    await this.pool.close();
    if (this.gpusInProcess && first) releaseGpus(this.gpuSettings);
    native().releaseFreeMemory(); // what the workers' threads freed stays in their arenas otherwise
  }

  /**
   * Memory the workers freed is kept for the next run's buffers (the native BlockPool,
   * and glibc's arenas); once no run has come for IDLE_RELEASE_MS it goes back to the
   * system, so an idle engine holds only its data.
   */
  private releaseWhenIdle(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.runs.size > 0) return;
      native().releaseFreeMemory();
      this.pool.idle(true);
    }, IDLE_RELEASE_MS);
    this.idleTimer.unref();
  }

  /**
   * Sends a task whose inputs must first be placed where its worker reads them: into
   * a worker process (its inputs, and the stored tables its steps name), or into this
   * store from the process that holds them. A task that writes into a file sink of
   * this process runs here instead (a write is one step over a finished partition).
   * A move that fails because a worker died is already being handled (the scheduler
   * heard of the loss first and requeued the task); any other failure fails the task.
   */
  private async dispatch(run: GraphRun, worker: string, key: string, steps: Step[], inputs: Ref[]): Promise<void> {
    const who = this.pool.incarnation(worker);
    const isProcess = this.pool.isProcess(worker);
    const transient: number[] = [];
    try {
      if (isProcess && steps.some(writesToSink)) {
        // The file sink is this process's: the task runs here, on the engine's thread.
        const local = await Promise.all(inputs.map((r) => this.pool.held.toHost(r)));
        if (this.pool.incarnation(worker) === who) this.onResult(worker, runAsWorker({ key, steps, inputs: local }));
        return;
      }
      // Every placement settles before the task goes or fails: one that fails (its holder
      // died) must not leave the copies the others make in the worker unreleased.
      const stored = isProcess ? steps.filter((s): s is Step & { kind: "stored" } => s.kind === "stored") : [];
      const settled = await Promise.allSettled([
        ...inputs.map((r) => this.pool.held.place(r, worker, isProcess)),
        ...stored.map((s) => this.placeStored(s, worker)),
      ]);
      const placed = settled.flatMap((p) => (p.status === "fulfilled" ? [p.value] : []));
      for (const p of placed) if (p.transient) transient.push(p.handle);
      const failed = settled.find((p): p is PromiseRejectedResult => p.status === "rejected");
      if (failed) throw failed.reason;
      const handles = placed.slice(0, inputs.length).map((p) => p.handle);
      const storedHandles = new Map<Step, Handle>(stored.map((s, i) => [s, placed[inputs.length + i]!.handle]));
      const placedSteps = steps.map((s) => {
        const handle = storedHandles.get(s);
        return handle === undefined ? s : { ...s, handle };
      });
      if (this.pool.incarnation(worker) !== who) return;
      this.pool.send(worker, { key, steps: placedSteps, inputs: handles, transient });
    } catch (e) {
      if (this.pool.incarnation(worker) !== who) return;
      this.pool.releaseInWorker(worker, transient);
      this.endTurn(worker); // the task never reached the worker: its next turn starts
      run.feed({ type: "taskErred", key, worker, error: BasinError.from(e).toJSON(), stimulusId: run.stimulus("err") });
    }
  }

  /** A persisted partition into a worker process; one unpersist() let go meanwhile fails as such, where it was persisted. */
  private async placeStored(step: Step & { kind: "stored" }, worker: string): Promise<Placed> {
    try {
      return await this.pool.held.placeStored(step.handle, worker);
    } catch (e) {
      if (!native().tableExists(step.handle)) throw unpersistedError(step.loc);
      throw e;
    }
  }

  /**
   * A task's result. A run's output task on a worker process ends only once its outputs
   * are in the engine's store: until then the process holds the only copy, and its death
   * then is the task's (run again on another worker) rather than a result lost after the run.
   */
  private onResult(worker: string, msg: ResultMessage): void {
    const task = this.turns.on(worker);
    const move = msg.ok && task?.run.graph.output === msg.key && task.run.state.status === "running";
    if (!move || !msg.outputs.some(isHeld)) return this.taskEnded(worker, msg); // a stale result moves nothing
    const who = this.pool.incarnation(worker);
    // The worker lost meanwhile: the run heard of it (the task runs again); what arrived goes.
    const lost = (): boolean => {
      if (this.pool.incarnation(worker) === who) return false;
      this.pool.release(msg.outputs);
      return true;
    };
    void Promise.all(msg.outputs.map((r) => this.pool.held.toHost(r))).then(
      () => lost() || this.taskEnded(worker, msg),
      (e: unknown) => {
        if (lost()) return;
        this.pool.release(msg.outputs);
        this.taskEnded(worker, { key: msg.key, ok: false, error: BasinError.from(e).toJSON() });
      },
    );
  }

  /** A task is over on its worker: its span ends, its worker's next turn starts, its run hears how it went. */
  private taskEnded(worker: string, msg: ResultMessage): void {
    const task = this.turns.on(worker);
    const steps = task && this.runs.get(task.run)?.get(msg.key);
    if (steps)
      this.taskStream.finished(
        worker,
        msg.key,
        steps.group,
        taskKind(steps.steps),
        msg.ok ? msg.ms : undefined,
        // A worker process's own spilling during the task adds to the engine's.
        msg.ok && msg.spill
          ? addSpill(spillCounters(native().memoryStats()), msg.spill)
          : spillCounters(native().memoryStats()),
      );
    // The worker's next turn starts now, or the other runs are offered it; the run then hears how this one went.
    const run = this.endTurn(worker);
    if (!run) return;
    if (msg.ok) {
      run.skippedLines += msg.skippedLines;
      run.feed({
        type: "taskFinished",
        key: msg.key,
        worker,
        outputs: msg.outputs,
        nbytes: msg.rows,
        stimulusId: run.stimulus("done"),
      });
    } else {
      run.feed({ type: "taskErred", key: msg.key, worker, error: msg.error, stimulusId: run.stimulus("err") });
    }
  }
}

/** The store owner the engine's thread takes while it runs a task (no worker thread has it). */
const ENGINE_TASK_OWNER = 2 ** 32 - 1;

/**
 * Runs a task on the engine's thread as a worker would: the store spills under its
 * limit only for tables a worker makes (the engine's thread never waits on a spill
 * otherwise), so the parts that wait in a file sink spill; its outputs are then the
 * engine's.
 */
function runAsWorker(task: TaskMessage): ResultMessage {
  const addon = native();
  addon.setThreadOwner(ENGINE_TASK_OWNER);
  try {
    const r = runTask(task);
    if (r.ok) for (const h of r.outputs) addon.claim(h);
    return r;
  } finally {
    addon.setThreadOwner(0);
  }
}

/**
 * Takes every ref of a result into the caller's hands (`take`); if one cannot be
 * taken, what was taken and what is left are released and the error stands.
 */
async function takeAll(refs: Ref[], take: (r: Ref) => Promise<Ref>, release: (refs: Ref[]) => void): Promise<Ref[]> {
  const taken = await Promise.allSettled(refs.map(take));
  const failed = taken.find((t): t is PromiseRejectedResult => t.status === "rejected");
  if (!failed) return taken.map((t) => (t as PromiseFulfilledResult<Ref>).value);
  release(refs.filter((r, i) => taken[i].status === "rejected"));
  release(taken.flatMap((t) => (t.status === "fulfilled" ? [t.value] : [])));
  throw BasinError.from(failed.reason);
}

/** Why a local cluster runs without GPU workers, in words for the dashboard. */
function noGpuReason(settings: GpuSettings): string {
  const info = native().gpuInfo();
  if (!info.compiled) return "this Basin was built without CUDA (rebuild the addon with the CUDA toolkit to use GPUs)";
  if (info.devices.length === 0)
    return (
      (info.note || "no CUDA device is visible (check the driver and CUDA_VISIBLE_DEVICES)") +
      (onPath("nvidia-smi")
        ? "; nvidia-smi is on PATH: run it to see what the driver reports"
        : "; nvidia-smi is not on PATH either, so the NVIDIA driver seems not to be installed")
    );
  if (settings.devices.length === 0)
    return `GPUs are present (${info.devices.length}) but this cluster was started with gpus: "none"`;
  return "the GPU workers have not started";
}
