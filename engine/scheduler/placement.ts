// Where tasks run when the cluster has GPU workers. A task whose heavy part the GPU
// does (a filter/project chain, or one ending in an aggregate the GPU accumulates)
// goes to a GPU worker. It waits for one only when all of it is GPU work on data
// already in memory; a task with CPU work around its GPU steps (parsing a file first,
// partitioning a partial aggregate after) takes an idle GPU worker, else any worker, so
// adding a GPU never leaves CPU workers idle behind it. A task whose heavy part is
// CPU-only (a sort or a join, unmeasured on the GPU yet) prefers CPU workers.
import { GPU_STEP_KINDS } from "../graph/gpu_steps.js";
import type { Step } from "../graph/tasks.js";

export type GpuAffinity = "none" | "prefer" | "require";

function gpuStep(s: Step): boolean {
  return GPU_STEP_KINDS.has(s.kind) && (s.kind !== "aggregate" || s.mode === "full" || s.mode === "partial");
}

/**
 * @example
 * gpuAffinity([{ kind: "stored", handle: 1 }, { kind: "aggregate", keys: [0], aggs, mode: "full" }]) // "require"
 */
export function gpuAffinity(steps: readonly Step[]): GpuAffinity {
  const first = steps.findIndex(gpuStep);
  if (first < 0) return "none";
  let end = first;
  while (end < steps.length && gpuStep(steps[end])) end++;
  const last = steps[end - 1];
  // Past the GPU run only aggregated (small) data is left (the GPU computes every
  // aggregate), or nothing.
  const heavyOnGpu = last.kind === "aggregate" || end === steps.length;
  if (!heavyOnGpu) return "none";
  const allGpu = end === steps.length && steps.slice(0, first).every((s) => s.kind === "stored" || s.kind === "concat");
  return allGpu ? "require" : "prefer";
}

/** What a cluster's CPU workers run beside its GPU workers: every task, or only the file reads. */
export type CpuTasks = "all" | "reads";
export const CPU_TASKS: readonly CpuTasks[] = ["all", "reads"];

const READ_STEPS = new Set<Step["kind"]>(["scanCsv", "scanParquet", "scanJson", "scanArrow", "bagRead"]);

/**
 * Where a task may run: its GPU affinity, except that with `cpuTasks: "reads"` a task
 * that does not start by reading a file waits for a GPU worker (the CPU workers parse
 * files in parallel; everything else is the GPUs' work).
 *
 * @example
 * placement([{ kind: "stored", handle: 1 }, { kind: "sort", keys }], "reads") // "require"
 */
export function placement(steps: readonly Step[], cpuTasks: CpuTasks): GpuAffinity {
  if (cpuTasks === "reads" && !(steps.length > 0 && READ_STEPS.has(steps[0].kind))) return "require";
  return gpuAffinity(steps);
}

/** Whether a worker name is a GPU worker's ("gpu-0"). */
export function isGpuWorker(name: string): boolean {
  return name.startsWith("gpu-");
}
