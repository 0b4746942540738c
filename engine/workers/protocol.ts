import type { SerializedError } from "../common/errors.js";
import type { Step } from "../graph/tasks.js";
import type { GpuConfig, GpuFault, GpuStats, Handle, MemoryStats, StoreStats } from "../native/addon.js";
import type { MemorySettings } from "../memory/limits.js";
import type { SpillCounters } from "../memory/status.js";

/** Engine → worker (thread or process): run one task. */
export interface TaskMessage {
  key: string;
  steps: Step[];
  inputs: Handle[];
  /** Tables moved into a worker process for this task only: it releases them after the task. */
  transient?: Handle[];
}

/** Worker → engine. */
export type ResultMessage =
  | {
      key: string;
      ok: true;
      outputs: Handle[];
      rows: number;
      skippedLines: number;
      ms: number;
      /** A worker process's own spilling during the task (a thread's shows in the engine's counters). */
      spill?: SpillCounters;
    }
  | { key: string; ok: false; error: SerializedError };

/** What a worker process's store and GPU hold and have done (the dashboard adds it to the engine's). */
export interface WorkerStats {
  store: StoreStats;
  memory: MemoryStats;
  /** Its GPU's, when it is a GPU's worker. */
  gpus: GpuStats[];
}

/** Engine → worker process: a question, answered (`ProcessReply`) with a number, or its stats. */
export type ProcessQuery =
  | { type: "configure"; memory: MemorySettings; gpu?: { device: number; config: GpuConfig } }
  /** Writes a table of its store to `path`; answers the bytes. */
  | { type: "save"; handle: Handle; path: string }
  /** Reads a table from `path` into its store; answers the handle. */
  | { type: "load"; path: string }
  /** Uploads a table of its store to its GPU (a persisted partition whose home that GPU is); answers 0. */
  | { type: "keep"; handle: Handle }
  /** Answers its WorkerStats. */
  | { type: "stats" };

/** The answer to each query. */
export type Answer<Q extends ProcessQuery> = Q extends { type: "stats" } ? WorkerStats : number;

/**
 * Engine → worker process, besides tasks: its store is its own, so tables move in
 * and out through files (`save`, `load`), and the engine releases what it held.
 */
export type ProcessRequest =
  | { type: "task"; task: TaskMessage }
  | (ProcessQuery & { id: number })
  | { type: "release"; handles: Handle[] }
  /** Fault injection (the GPU suite): its next task fails with this CUDA fault instead of running. */
  | { type: "fault"; kind: GpuFault }
  /** The run is over: drop per-run caches (broadcast builds); `trim` also gives freed memory back. */
  | { type: "idle"; trim: boolean };

/** Worker process → engine. */
export type ProcessReply =
  | { type: "result"; result: ResultMessage }
  | { type: "reply"; id: number; ok: true; value: number | WorkerStats }
  | { type: "reply"; id: number; ok: false; error: SerializedError };
