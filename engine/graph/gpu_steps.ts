// Which steps a GPU worker may run: read by the scheduler's placement and by the
// worker that hands a run of them to the device.
import type { Step } from "./tasks.js";

/** Step kinds a GPU worker may run (the native gpuPrefix decides for exact expressions and types). */
export const GPU_STEP_KINDS: ReadonlySet<Step["kind"]> = new Set<Step["kind"]>([
  "filter",
  "project",
  "aggregate",
  "topK",
]);
