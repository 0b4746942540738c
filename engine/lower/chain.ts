// The partition chains every lowering builds on: a partition's inputs plus the steps
// not yet closed into a task. lower.ts and the lowerings beside it (rows, windows,
// bags) share these.
import type { Dep, Step } from "../graph/tasks.js";

/** Upper bound on output partitions of a shuffle. */
export const MAX_SHUFFLE_PARTS = 32;

/** A partition still being built: inputs plus steps not yet closed into a task. */
export interface Chain {
  deps: Dep[];
  steps: Step[];
}

/**
 * The first output of task `key`, as an input.
 *
 * @example
 * const chain: Chain = { deps: [dep("scan-0")], steps: [] };
 */
export function dep(key: string): Dep {
  return { key, index: 0 };
}

/**
 * The chain with one more step.
 *
 * @example
 * append(chain, { kind: "head", n: 5 })
 */
export function append(c: Chain, step: Step): Chain {
  return { deps: c.deps, steps: [...c.steps, step] };
}
