// One way to run a plan: every collection (frame, array, bag, delayed calls) builds
// a plan and hands it here; this lowers it where that is Basin's job, runs it on the
// cluster (engine/cluster/cluster.ts) and takes the result into JS memory.
import { totalmem } from "node:os";
import { BasinError } from "../common/errors.js";
import type { ArrayDType, ArrayNode } from "../common/array_plan.js";
import { sizeOf } from "../common/array_plan.js";
import type { BagNode, JsonValue } from "../common/bag.js";
import type { CallOutcome } from "../common/delayed.js";
import type { Plan } from "../common/plan.js";
import type { TaskGraph } from "../graph/tasks.js";
import { lowerTagged } from "../lower/lower.js";
import { lowerArray } from "../lower/lower_array.js";
import { bagGraph } from "../lower/lower_bag.js";
import { formatBytes } from "../memory/bytes.js";
import { withResident } from "../memory/resident.js";
import { native, type Handle, type JsTable } from "../native/addon.js";
import { optimize } from "../plan/optimizer.js";
import { decodeItems } from "../workers/bag_steps.js";
import { decodeOutcomes } from "../workers/call_step.js";
import { clusterOf, computeParts, type ComputeOptions, type StoredParts } from "./stored.js";
import { Table } from "./table.js";
import { takeTable } from "./take.js";

/** The typed array each dtype computes to. */
export type ArrayData = Float64Array | Float32Array | BigInt64Array | Int32Array | Uint8Array;

/** A computed array: elements in C order. */
export interface ArrayResult {
  data: ArrayData;
  shape: number[];
  dtype: ArrayDType;
}

/** A frame's float64 columns with an int64 partition tag (the last column): how a frame becomes an array. */
export interface TaggedRows {
  table: JsTable;
  /** Partitions the frame ran in (tags are 0..parts-1). */
  parts: number;
}

/** Every plan a collection hands over, by kind. */
export type RunnablePlan =
  | { kind: "frame"; plan: Plan }
  | { kind: "array"; node: ArrayNode }
  /** A frame's rows, each tagged with its partition's index in column `tag`. */
  | { kind: "taggedFrame"; plan: Plan; tag: string }
  | { kind: "bag"; node: BagNode }
  /** Delayed calls: a graph whose output holds one outcome per root call. */
  | { kind: "delayed"; graph: TaskGraph };

/** What each kind of plan computes to. */
export type RunResultOf<P extends RunnablePlan> = {
  frame: Table;
  array: ArrayResult;
  taggedFrame: TaggedRows;
  bag: JsonValue[];
  delayed: CallOutcome[];
}[P["kind"]];

/**
 * Runs a plan of any kind on the cluster (default: the local one) and takes its
 * result into JS memory, leaving nothing in the store. Arrays, bags and delayed
 * calls run on Basin's own workers: a cluster that runs only frames refuses them.
 *
 * @example
 * const table = await runPlan({ kind: "frame", plan: df.toPlan() }, { onProgress: console.log });
 * const { data, shape } = await runPlan({ kind: "array", node: x.node });
 */
export async function runPlan<P extends RunnablePlan>(p: P, options: ComputeOptions = {}): Promise<RunResultOf<P>> {
  const run = p as RunnablePlan;
  switch (run.kind) {
    case "frame":
      return (await takeParts(await computeParts(run.plan, options))) as RunResultOf<P>;
    case "array":
      return (await runArray(run.node, options)) as RunResultOf<P>;
    case "taggedFrame": {
      const { graph, parts } = lowerTagged(optimize(run.plan.root, options.optimize), run.tag);
      const table = await runGraph(graph, "arrays", options, (h) => native().tableToJs(h));
      return { table, parts } as RunResultOf<P>;
    }
    case "bag":
      return (await runGraph(bagGraph(run.node), "bags", options, decodeItems)) as RunResultOf<P>;
    case "delayed":
      return (await runGraph(run.graph, "delayed calls", options, decodeOutcomes)) as RunResultOf<P>;
  }
}

/**
 * Moves a stored result into JS memory part by part, releasing every part (the store
 * never holds the whole result as one table; its buffers are handed over without
 * copies: moved, or shared with the tables that hold them).
 *
 * @example
 * const table = await takeParts(await computeParts(df.toPlan()));
 */
export async function takeParts({ refs, skippedLines, tasks }: StoredParts): Promise<Table> {
  const parts: JsTable[] = [];
  try {
    for (let i = 0; i < refs.length; i++) {
      // Taking releases the handle, even when the copy out fails.
      parts.push(
        await withResident(refs[i], (h) => {
          refs[i] = -1;
          return takeTable(h);
        }),
      );
    }
  } finally {
    for (const h of refs) if (h !== -1) native().release(h);
  }
  return new Table(parts, { skippedLines, tasks });
}

/** Runs a graph a collection built; `read` decodes its result, and every part is released after. */
async function runGraph<T>(
  graph: TaskGraph,
  what: string,
  options: ComputeOptions,
  read: (h: Handle) => T,
): Promise<T> {
  const { refs } = await clusterOf(options).runGraph(graph, what, {
    onProgress: options.onProgress,
    signal: options.signal,
  });
  try {
    return read(refs[0]);
  } finally {
    for (const h of refs) native().release(h);
  }
}

/** float64 elements as the typed array of `dtype`. */
export function toTyped(values: Float64Array, dtype: ArrayDType): ArrayData {
  switch (dtype) {
    case "float64":
      return values;
    case "float32":
      return Float32Array.from(values);
    case "int32":
      return Int32Array.from(values);
    case "bool":
      return Uint8Array.from(values, (v) => (v !== 0 ? 1 : 0));
    case "int64":
      return BigInt64Array.from(values, (v) => {
        // An int64 result that is not a whole number int64 holds (NaN from astype, a
        // negative power, an overflow past 2^63): an error, not a wrapped number.
        if (!Number.isInteger(v) || v < -(2 ** 63) || v >= 2 ** 63)
          throw new BasinError(
            "BASIN_CAST",
            `an int64 array result holds ${v}, which int64 cannot hold; compute in float64 (astype("float64")) or keep the values in range`,
          );
        return BigInt(v);
      });
  }
}

/**
 * Refuses, before anything runs, an array result that JavaScript memory cannot take:
 * compute() brings every element over, so one larger than the memory limit (or the
 * machine, without one) would only fill memory and disk on its way (zeros([2e5, 2e5]):
 * 320 GB).
 */
function checkArrayResult(node: ArrayNode): void {
  if (node.kind === "mask") return; // its length is known only once computed: at most its input's
  const elements = sizeOf(node.shape);
  const limit = native().memoryStats().hostLimit;
  const room = limit > 0 ? limit : totalmem();
  if (elements * 8 <= room) return;
  throw new BasinError(
    "BASIN_OOM",
    `an array result of shape [${node.shape.join(", ")}] holds ${elements.toExponential(2)} elements (${formatBytes(elements * 8)}), more than ${limit > 0 ? `the memory limit (${formatBytes(limit)})` : `this machine's memory (${formatBytes(room)})`} can bring into JavaScript; reduce it first (sum, mean, a slice) or compute less of it`,
    node.loc,
  );
}

/** Lowers, runs and fetches an array plan. */
async function runArray(node: ArrayNode, options: ComputeOptions): Promise<ArrayResult> {
  checkArrayResult(node);
  const values = await runGraph(
    lowerArray(node),
    "arrays",
    options,
    (h) => native().tableToJs(h).columns[0].values as Float64Array,
  );
  const shape = node.kind === "mask" ? [values.length] : [...node.shape];
  if (sizeOf(shape) !== values.length)
    throw new Error(`internal: result has ${values.length} elements for shape ${shape}`);
  return { data: toTyped(values, node.dtype), shape, dtype: node.dtype };
}
