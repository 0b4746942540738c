import type { SerializedError } from "../common/errors.js";
import type { Step } from "../graph/tasks.js";
import type { GpuConfig, Handle } from "../native/addon.js";
import type { MemorySettings } from "../memory/limits.js";

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
  | { key: string; ok: true; outputs: Handle[]; rows: number; skippedLines: number; ms: number }
  | { key: string; ok: false; error: SerializedError };

/**
 * Engine → worker process, besides tasks: its store is its own, so tables move in
 * and out through files (`save`, `load`), and the engine releases what it held.
 */
export type ProcessRequest =
  | { type: "task"; task: TaskMessage }
  | { type: "configure"; id: number; memory: MemorySettings; gpu?: { device: number; config: GpuConfig } }
  | { type: "save"; id: number; handle: Handle; path: string }
  | { type: "load"; id: number; path: string }
  | { type: "release"; handles: Handle[] }
  /** The run is over: drop per-run caches (broadcast builds); `trim` also gives freed memory back. */
  | { type: "idle"; trim: boolean };

/** Worker process → engine. */
export type ProcessReply =
  | { type: "result"; result: ResultMessage }
  | { type: "reply"; id: number; ok: true; value: number }
  | { type: "reply"; id: number; ok: false; error: SerializedError };
