// The scheduler as a pure state machine (after dask/distributed): events in,
// instructions out, no I/O. The async shell (shell.ts) carries instructions out.
import type { SerializedError } from "../common/errors.js";
import type { Step, TaskGraph } from "../graph/tasks.js";
import type { Instruction, Ref, SchedulerEvent } from "./events.js";
import { graphOrder } from "./order.js";
import { isGpuWorker, placement, type CpuTasks, type GpuAffinity } from "./placement.js";

/** A task killed its worker this many times: it is bad, the run fails. */
export const ALLOWED_FAILURES = 3;

type TaskStatus = "waiting" | "ready" | "processing" | "memory" | "released" | "erred";

interface TaskState {
  key: string;
  group: string;
  deps: { key: string; index: number }[];
  dependents: string[];
  status: TaskStatus;
  priority: number;
  waitingOn: number; // deps not yet in memory
  pendingDependents: number; // dependents not yet finished
  worker?: string;
  outputs: Ref[];
  nbytes: number;
  failures: number;
  gpu: GpuAffinity;
  /** The GPU worker whose device is home to the task's stored input (persist() uploaded it there). */
  home?: string;
}

export type RunStatus = "running" | "finished" | "failed";

/**
 * Scheduling state of one run of a task graph.
 *
 * @example
 * const s = new SchedulerState(graph);
 * s.handle({ type: "workerAdded", worker: "w0", stimulusId: "add-w0" });
 * const out = s.handle({ type: "start", stimulusId: "go" }); // [{ type: "execute", ... }, ...]
 */
export class SchedulerState {
  status: RunStatus = "running";
  private readonly tasks = new Map<string, TaskState>();
  private readonly ready = new Set<string>();
  private readonly idle = new Set<string>();
  private readonly busy = new Map<string, string>(); // worker → task
  /** Workers another run's task holds now (runs share a cluster's workers). */
  private readonly taken = new Set<string>();
  private readonly groups = new Map<string, { done: number; total: number }>();
  private started = false;
  /** Memory is over its limit: no new root tasks start while others run (no root-task overproduction). */
  private overMemory = false;

  /** `cpuTasks`: what CPU workers run beside GPU workers (engine/scheduler/placement.ts). */
  constructor(
    private readonly graph: TaskGraph,
    cpuTasks: CpuTasks = "all",
    storedHome: (handle: number) => string | undefined = () => undefined,
  ) {
    const order = graphOrder(graph);
    for (const t of graph.tasks) {
      this.tasks.set(t.key, {
        key: t.key,
        group: t.group,
        deps: t.deps,
        dependents: [],
        status: "waiting",
        priority: order.get(t.key) ?? 0,
        waitingOn: new Set(t.deps.map((d) => d.key)).size,
        pendingDependents: 0,
        outputs: [],
        nbytes: 0,
        failures: 0,
        gpu: placement(t.steps, cpuTasks),
        home: homeWorker(t.steps, storedHome),
      });
      const g = this.groups.get(t.group) ?? { done: 0, total: 0 };
      g.total++;
      this.groups.set(t.group, g);
    }
    for (const t of this.tasks.values())
      for (const depKey of new Set(t.deps.map((d) => d.key))) {
        const dep = this.tasks.get(depKey)!;
        dep.dependents.push(t.key);
        dep.pendingDependents++;
      }
  }

  /** Number of tasks in each status, for tests and the dashboard. */
  counts(): Record<TaskStatus, number> {
    const c: Record<TaskStatus, number> = { waiting: 0, ready: 0, processing: 0, memory: 0, released: 0, erred: 0 };
    for (const t of this.tasks.values()) c[t.status]++;
    return c;
  }

  handle(e: SchedulerEvent): Instruction[] {
    const out: Instruction[] = [];
    const id = e.stimulusId;
    switch (e.type) {
      case "start":
        this.started = true;
        for (const [group, g] of this.groups)
          out.push({ type: "progress", group, done: g.done, total: g.total, stimulusId: id });
        for (const t of this.tasks.values()) if (t.waitingOn === 0) this.markReady(t);
        break;
      case "workerAdded":
        this.taken.delete(e.worker);
        if (!this.busy.has(e.worker)) this.idle.add(e.worker);
        break;
      case "workerTaken":
        this.taken.add(e.worker);
        this.idle.delete(e.worker);
        break;
      case "workerLost": {
        this.idle.delete(e.worker);
        this.taken.delete(e.worker);
        const key = this.busy.get(e.worker);
        this.busy.delete(e.worker);
        const t = key ? this.tasks.get(key) : undefined;
        if (t && t.status === "processing" && this.status !== "running") {
          t.status = "released"; // a failed run: its inputs can go now
          this.releaseUnread(out, id);
        } else if (t && t.status === "processing") {
          if (e.started !== false) t.failures++;
          t.worker = undefined;
          if (t.failures >= ALLOWED_FAILURES) {
            t.status = "erred";
            this.fail(out, id, t.key, {
              name: "BasinError",
              code: "BASIN_WORKER",
              message: `task ${t.key} was running on a worker that died, ${t.failures} times; giving up on it (last: ${e.reason})`,
            });
          } else {
            this.markReady(t);
          }
        }
        if (e.lost?.length && this.status === "running") this.recompute(out, id, new Set(e.lost));
        break;
      }
      case "taskFinished": {
        const t = this.tasks.get(e.key);
        this.freeWorker(e.worker);
        if (!t || t.status !== "processing" || t.worker !== e.worker || this.status !== "running") {
          // A stale result (failed or cancelled run, or a task already requeued): drop it.
          if (t && t.status === "processing" && t.worker === e.worker) t.status = "released";
          if (e.outputs.length) out.push({ type: "release", key: e.key, outputs: e.outputs, stimulusId: id });
          if (this.status === "failed") this.releaseUnread(out, id);
          break;
        }
        t.status = "memory";
        t.outputs = e.outputs;
        t.nbytes = e.nbytes;
        const g = this.groups.get(t.group)!;
        g.done++;
        out.push({ type: "progress", group: t.group, done: g.done, total: g.total, stimulusId: id });
        if (t.key === this.graph.output) {
          this.status = "finished";
          t.status = "released"; // ownership moves to the caller
          out.push({ type: "finished", outputs: t.outputs, stimulusId: id });
        }
        for (const depKey of new Set(t.deps.map((d) => d.key))) {
          const dep = this.tasks.get(depKey)!;
          if (--dep.pendingDependents === 0 && dep.status === "memory") this.release(out, dep, id);
        }
        for (const k of t.dependents) {
          const d = this.tasks.get(k)!;
          if (--d.waitingOn === 0 && d.status === "waiting") this.markReady(d);
        }
        break;
      }
      case "taskErred": {
        const t = this.tasks.get(e.key);
        this.freeWorker(e.worker);
        if (t && t.status === "processing" && t.worker === e.worker) {
          t.status = "erred";
          if (this.status === "running") this.fail(out, id, t.key, e.error);
          else this.releaseUnread(out, id);
        }
        break;
      }
      case "memory":
        this.overMemory = e.overLimit;
        break;
      case "cancel":
        if (this.status === "running")
          this.fail(out, id, undefined, {
            name: "BasinError",
            code: "BASIN_CANCELLED",
            message: `the run was cancelled (${e.reason})`,
          });
        break;
    }
    if (this.status === "running" && this.started) this.assign(out, id);
    return out;
  }

  /**
   * Recomputes from lineage what a lost worker held (dask/distributed does the same):
   * each finished task whose outputs are gone runs again, and so does every released
   * task it needs; tasks running on other workers that read a lost output start over
   * (their worker's result arrives as a stale one and is dropped).
   */
  private recompute(out: Instruction[], id: string, lost: Set<Ref>): void {
    const redo = new Set<TaskState>();
    const restart = new Set<TaskState>();
    const add = (t: TaskState) => {
      if (redo.has(t)) return;
      redo.add(t);
      for (const d of new Set(t.deps.map((x) => x.key))) {
        const dep = this.tasks.get(d)!;
        if (dep.status === "released") add(dep);
      }
    };
    for (const t of this.tasks.values()) if (t.status === "memory" && t.outputs.some((r) => lost.has(r))) add(t);
    if (redo.size === 0) return;
    for (const t of this.tasks.values())
      if (t.status === "processing" && t.deps.some((d) => redo.has(this.tasks.get(d.key)!))) restart.add(t);
    for (const t of redo) {
      // It counts as a pending reader of its inputs again, and as not done.
      for (const d of new Set(t.deps.map((x) => x.key))) this.tasks.get(d)!.pendingDependents++;
      const g = this.groups.get(t.group)!;
      g.done--;
      out.push({ type: "progress", group: t.group, done: g.done, total: g.total, stimulusId: id });
      t.outputs = [];
      t.status = "waiting";
    }
    for (const t of restart) {
      t.worker = undefined; // its worker stays busy until the stale result comes back
      t.status = "waiting";
    }
    // Every task not yet finished that reads a recomputed one waits for it again.
    const affected = new Set<TaskState>([...redo, ...restart]);
    for (const t of redo)
      for (const k of t.dependents) {
        const d = this.tasks.get(k)!;
        if (d.status === "waiting" || d.status === "ready") affected.add(d);
      }
    for (const t of affected) {
      t.waitingOn = 0;
      for (const d of new Set(t.deps.map((x) => x.key))) if (this.tasks.get(d)!.status !== "memory") t.waitingOn++;
      this.ready.delete(t.key);
      t.status = "waiting";
      if (t.waitingOn === 0) this.markReady(t);
    }
  }

  private markReady(t: TaskState): void {
    t.status = "ready";
    this.ready.add(t.key);
  }

  private freeWorker(worker: string): void {
    this.busy.delete(worker);
    if (!this.taken.has(worker)) this.idle.add(worker);
  }

  private release(out: Instruction[], t: TaskState, id: string): void {
    out.push({ type: "release", key: t.key, outputs: t.outputs, stimulusId: id });
    t.status = "released";
    t.outputs = [];
  }

  /**
   * Fails the run: nothing new starts, and everything held is released as soon as
   * no task still running reads it (releasing a running task's input would pull
   * it from under the worker).
   */
  private fail(out: Instruction[], id: string, key: string | undefined, error: SerializedError): void {
    this.status = "failed";
    this.ready.clear();
    this.releaseUnread(out, id);
    out.push({ type: "failed", key, error, stimulusId: id });
  }

  /** After a failure: releases every held output that no running task reads. */
  private releaseUnread(out: Instruction[], id: string): void {
    const read = new Set<string>();
    for (const t of this.tasks.values()) if (t.status === "processing") for (const d of t.deps) read.add(d.key);
    for (const t of this.tasks.values()) if (t.status === "memory" && !read.has(t.key)) this.release(out, t, id);
  }

  /**
   * Gives ready tasks to idle workers: highest priority first, to the worker holding
   * most of its inputs. Over the memory limit, root tasks (no inputs: they only add
   * data) wait while any task runs; with nothing running one starts, so a run always
   * progresses.
   */
  private assign(out: Instruction[], id: string): void {
    while (this.idle.size > 0 && this.ready.size > 0) {
      let best: TaskState | undefined;
      const holdRoots = this.overMemory && this.busy.size > 0;
      const gpuIdle = [...this.idle].some(isGpuWorker);
      const gpuAny = gpuIdle || [...this.busy.keys(), ...this.taken].some(isGpuWorker);
      for (const k of this.ready) {
        const t = this.tasks.get(k)!;
        if (holdRoots && t.deps.length === 0) continue;
        if (t.gpu === "require" && gpuAny && !gpuIdle) continue; // waits for a GPU worker
        if (!best || t.priority < best.priority) best = t;
      }
      if (!best) break;
      const t = best;
      const worker = this.pickWorker(t);
      this.ready.delete(t.key);
      this.idle.delete(worker);
      this.busy.set(worker, t.key);
      t.status = "processing";
      t.worker = worker;
      const inputs = t.deps.map((d) => this.tasks.get(d.key)!.outputs[d.index]);
      out.push({ type: "execute", key: t.key, worker, inputs, stimulusId: id });
    }
  }

  private pickWorker(t: TaskState): string {
    const idle = [...this.idle];
    if (t.gpu !== "none") {
      // The GPU that holds its input when that one is free, else any free GPU (it uploads).
      if (t.home && this.idle.has(t.home)) return t.home;
      const gpu = idle.find(isGpuWorker);
      if (gpu) return gpu;
    }
    // The worker process keeping a copy of its stored input reads it in place.
    if (t.home && !isGpuWorker(t.home) && this.idle.has(t.home)) return t.home;
    const held = new Map<string, number>();
    for (const d of t.deps) {
      const dep = this.tasks.get(d.key)!;
      if (dep.worker && this.idle.has(dep.worker)) held.set(dep.worker, (held.get(dep.worker) ?? 0) + dep.nbytes);
    }
    // Without inputs held anywhere idle: CPU work to a CPU worker while one is free.
    let worker = idle.find((w) => !isGpuWorker(w)) ?? idle[0];
    let most = -1;
    for (const [w, bytes] of held) if (bytes > most) [worker, most] = [w, bytes];
    return worker;
  }
}

/** The worker home to a task's first stored input with a home (its GPU, or the worker process keeping its copy). */
function homeWorker(steps: readonly Step[], storedHome: (handle: number) => string | undefined): string | undefined {
  for (const s of steps) {
    if (s.kind !== "stored") continue;
    const home = storedHome(s.handle);
    if (home !== undefined) return home;
  }
  return undefined;
}
