// The task graph: what the scheduler orders and the workers execute. Plain JSON.
import type { BagOp } from "../common/bag.js";
import type { SourceLocation } from "../common/errors.js";
import type { DelayedCall } from "../common/delayed.js";
import type { Field } from "../common/types.js";
import type { ArrayStep } from "./array_steps.js";
import type { AggMode, CsvScanOptions, JoinSpec, NativeAgg, NativeExpr, NativeWindow, SortKey } from "./kernel_args.js";

/** One step of a task; a task runs its steps in order on one partition. */
export type Step = (
  | { kind: "scanCsv"; path: string; start: number; end: number; options: CsvScanOptions }
  /** Row groups of a Parquet file; `columns` by name, in output order. */
  /** `rows`: only rows [start, end) of its one row group (a row group larger than a task may hold, in slices). */
  | { kind: "scanParquet"; path: string; rowGroups: number[]; columns: Field[]; rows?: [number, number] }
  /** Lines in bytes [start, end) of a newline-delimited JSON file. */
  | { kind: "scanJson"; path: string; start: number; end: number; columns: Field[] }
  /** A record batch of an Arrow IPC file: the byte ranges of its dictionary and batch messages. */
  | { kind: "scanArrow"; path: string; ranges: [number, number][]; columns: Field[] }
  | { kind: "values"; schema: Field[]; columns: Record<string, (number | string | boolean | null)[]>; rows: number }
  /** A table already in the store (retained for the task's output). */
  | { kind: "stored"; handle: number }
  /** Outputs the task's inputs as they are: the partitions of a result its consumer reads in parts. */
  | { kind: "parts" }
  /** Concatenates the task's inputs at these indices, in order. */
  | { kind: "concat"; inputs: number[] }
  | { kind: "filter"; predicate: NativeExpr }
  | { kind: "project"; exprs: NativeExpr[]; names: string[] }
  | { kind: "aggregate"; keys: number[]; aggs: NativeAgg[]; mode: AggMode }
  | { kind: "head"; n: number }
  | { kind: "hashPartition"; keys: number[]; parts: number }
  /** Splits the table into `parts` row ranges, as even as can be (copies, in order). */
  | { kind: "split"; parts: number }
  | { kind: "sort"; keys: SortKey[] }
  /** `parts - 1` boundary rows (key columns only) at quantiles of the sort order. */
  | { kind: "sortBoundaries"; keys: SortKey[]; parts: number }
  /** Splits by the boundary rows in task input `bounds` into exactly `parts` tables. */
  | { kind: "rangePartition"; keys: SortKey[]; bounds: number; parts: number }
  /** Joins with the concatenation of task inputs `right`. */
  /** `broadcast`: the right side is the same for every left partition (its hash table is built once). */
  | { kind: "join"; spec: JoinSpec; right: number[]; broadcast?: boolean }
  /** Appends window columns; with `keys` per group, else with the carries in task inputs `before`/`after`. */
  | { kind: "window"; specs: NativeWindow[]; keys: number[]; before?: number; after?: number }
  /** Outputs the table, the carry of its last `tail` rows and that of its first `head` rows. */
  | { kind: "windowCarry"; specs: NativeWindow[]; tail: number; head: number }
  /** From the task's inputs (carries, in partition order), the carry before (`fromEnd`) or after each. */
  | { kind: "windowScan"; specs: NativeWindow[]; rows: number; fromEnd: boolean }
  /** Appends an int64 column `name` numbering the rows from `start`. */
  | { kind: "rowIndex"; start: number; name: string }
  | { kind: "tail"; n: number }
  /** The first row of each distinct combination of key columns. */
  | { kind: "distinct"; keys: number[] }
  | { kind: "topK"; keys: number[]; column: number; k: number; descending: boolean }
  /** Appends a random key and the frame position (native sampleKeys); `part` is the partition's index. */
  | { kind: "sampleKeys"; seed: number; part: number }
  /** Evaluates each block of expressions and concatenates the results. */
  | { kind: "stack"; blocks: NativeExpr[][]; names: string[] }
  /** Bag: the lines ("text") or JSON values ("json") in bytes [start, end) of a file, one item each. */
  | { kind: "bagRead"; path: string; start: number; end: number; format: "text" | "json" }
  /** Bag: runs `ops` on the current table's items; `keyed` outputs [key, value] pairs with a key column for a shuffle. */
  | { kind: "bag"; ops: BagOp[]; keyed: boolean }
  /** Bag → frame: fields of the current table's items (objects) as columns of `schema`. */
  | { kind: "bagToTable"; schema: Field[] }
  /** Delayed: calls a user function on arguments built from `args` and the task's inputs (engine/common/delayed.ts). */
  | { kind: "call"; call: DelayedCall }
  /** Writer: the table's rows as CSV lines, part `part` of the ordered file sink `sink` (engine/io/part_sink.ts). */
  | { kind: "writeCsvPart"; sink: number; part: number }
  /** Writer: the table as Parquet row groups, part `part` of the ordered file sink `sink` (its footer kept for the merge). */
  | { kind: "writeParquetPart"; sink: number; part: number; parquet: PartParquetOptions }
  /** Writer: the table as Arrow IPC record batches, part `part` of the ordered file sink `sink`. */
  | { kind: "writeArrowPart"; sink: number; part: number }
  /** Writer: the table as a file of its own at `path` (a part of a folder output; created, never overwritten). */
  | { kind: "writePartFile"; path: string; format: "csv" | "parquet" | "arrow"; parquet?: PartParquetOptions }
  /** One step of an array chunk task (engine/graph/array_steps.ts). */
  | { kind: "array"; step: ArrayStep }
) & { loc?: SourceLocation };

/** Parquet writer options a part file step carries (engine/io/write.ts WriteParquetOptions). */
export interface PartParquetOptions {
  compression?: "snappy" | "zstd" | "uncompressed";
  rowGroupSize?: number;
}

/** An input of a task: output `index` of task `key`. */
export interface Dep {
  key: string;
  index: number;
}

export interface Task {
  key: string;
  /** Tasks of one kind, counted together for progress ("scanCsv→filter"). */
  group: string;
  deps: Dep[];
  steps: Step[];
}

export interface TaskGraph {
  tasks: Task[];
  /** The task whose first output is the result. */
  output: string;
  /** The output task's outputs are the result's partitions, in order (a "parts" task): none is concatenated. */
  partitioned?: boolean;
}

/**
 * Whether a step writes into one of the engine process's file sinks (engine/io/part_sink.ts):
 * only a worker in that process (a thread, or the engine's own thread) can run it.
 *
 * @example
 * writesToSink({ kind: "writeCsvPart", sink: 3, part: 0 }) // true
 */
export function writesToSink(s: Step): boolean {
  return s.kind === "writeCsvPart" || s.kind === "writeParquetPart" || s.kind === "writeArrowPart";
}

/**
 * The step that concatenates a task's `n` inputs, in order.
 *
 * @example
 * const gather: Task = { key: "gather", group: "gather", deps, steps: [concatAll(deps.length)] };
 */
export function concatAll(n: number): Step {
  return { kind: "concat", inputs: Array.from({ length: n }, (_, i) => i) };
}
