// The partition chains every lowering builds on: a partition's inputs plus the steps
// not yet closed into a task. lower.ts and the lowerings beside it (rows, windows,
// bags) share these.
import type { SourceLocation } from "../common/errors.js";
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

/** A row's frame position is partition × PARTITION_STRIDE + row: room for 2^32 rows a partition, exact in a double up to 2^21 partitions. */
export const PARTITION_STRIDE = 2 ** 32;

/**
 * The chain of partition `partition` with its rows' frame positions appended as
 * int64 column `name`: rows of several partitions, mixed by a shuffle, can be put
 * back in frame order, or ordered by it among equals.
 *
 * @example
 * withPosition(chain, 3, "__row", loc) // rows numbered from 3 × 2^32
 */
export function withPosition(c: Chain, partition: number, name: string, loc: SourceLocation | undefined): Chain {
  return append(c, { kind: "rowIndex", start: partition * PARTITION_STRIDE, name, loc });
}
