import type { SerializedError } from "../common/errors.js";
import type { Step } from "../graph/tasks.js";
import type { Handle } from "../native/addon.js";

/** Main thread → worker thread. */
export interface TaskMessage {
  key: string;
  steps: Step[];
  inputs: Handle[];
}

/** Worker thread → main thread. */
export type ResultMessage =
  | { key: string; ok: true; outputs: Handle[]; rows: number; skippedLines: number; ms: number }
  | { key: string; ok: false; error: SerializedError };
