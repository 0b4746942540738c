// The task graph: what the scheduler orders and the workers execute. Plain JSON.
import type { SourceLocation } from "../common/errors.js";
import type { Field } from "../common/types.js";
import type { AggMode, CsvScanOptions, NativeAgg, NativeExpr } from "../native/addon.js";

/** One step of a task; a task runs its steps in order on one partition. */
export type Step = (
  | { kind: "scanCsv"; path: string; start: number; end: number; options: CsvScanOptions }
  | { kind: "values"; schema: Field[]; columns: Record<string, (number | string | boolean | null)[]>; rows: number }
  | { kind: "concat" }
  | { kind: "filter"; predicate: NativeExpr }
  | { kind: "project"; exprs: NativeExpr[]; names: string[] }
  | { kind: "aggregate"; keys: number[]; aggs: NativeAgg[]; mode: AggMode }
  | { kind: "head"; n: number }
  | { kind: "hashPartition"; keys: number[]; parts: number }
) & { loc?: SourceLocation };

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
}
