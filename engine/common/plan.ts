import type { BagNode } from "./bag.js";
import type { ExprNode } from "./expr.js";
import type { SourceLocation } from "./errors.js";
import type { DType, Field } from "./types.js";

/** Bumped whenever the shape of a plan changes; consumers reject other versions. */
export const PLAN_VERSION = 2;

export interface CsvSourceOptions {
  delimiter: string;
  header: boolean;
  nullValues: string[];
  blocksize: number;
  onBadLines: "error" | "skip";
  /** "utf8" (checked), "latin1" or "replace" (invalid bytes read as U+FFFD). */
  encoding: "utf8" | "latin1" | "replace";
}

/** File formats read by the `scanFile` node (CSV has its own node, `scanCsv`). */
export type FileFormat = "parquet" | "json" | "arrow";

export interface FileSourceOptions {
  /** Bytes per partition: JSON byte ranges; Parquet row groups are merged up to it. */
  blocksize: number;
}

/** The row groups a Parquet scan reads, per file, after pruning by statistics. */
export interface RowGroupSelection {
  kept: number[][];
  total: number;
  /** Columns each of whose values lies in one kept row group (io/parquet_stats.ts clustered). */
  clustered?: string[];
}

/** A named expression: one output column. */
export interface NamedExpr {
  name: string;
  expr: ExprNode;
}

/** A serializable logical plan node. Schemas are resolved when the node is built. */
export type PlanNode =
  | {
      kind: "scanCsv";
      files: string[];
      options: CsvSourceOptions;
      /** Every column of the files, with (inferred or overridden) types. */
      fileSchema: Field[];
      /** Columns to read (projection pushdown); all when absent. */
      columns?: string[];
      /** Rows to keep while scanning (predicate pushdown). */
      predicate?: ExprNode;
      /** Where the filter pushed into the scan was written (its errors are reported there, not at the reader). */
      predicateLoc?: SourceLocation;
      schema: Field[];
      loc?: SourceLocation;
    }
  | {
      kind: "scanFile";
      format: FileFormat;
      files: string[];
      options: FileSourceOptions;
      /** Every column of the files (the first file's schema), with Basin types. */
      fileSchema: Field[];
      /** Columns to read (projection pushdown); all when absent. */
      columns?: string[];
      /** Rows to keep while scanning (predicate pushdown). */
      predicate?: ExprNode;
      /** Where the filter pushed into the scan was written (its errors are reported there, not at the reader). */
      predicateLoc?: SourceLocation;
      /** Parquet: the row groups left after pruning with the predicate (set by the optimizer). */
      rowGroups?: RowGroupSelection;
      schema: Field[];
      loc?: SourceLocation;
    }
  | {
      kind: "values";
      /** Partitions, each a record of column → values (JSON-safe: dates as ISO strings). */
      partitions: Record<string, (number | string | boolean | null)[]>[];
      schema: Field[];
      loc?: SourceLocation;
    }
  | {
      kind: "stored";
      /** Tables already in this process's store, one per partition (a kept result, for paging and views). */
      handles: number[];
      /** Their size in the store, for the planner's estimates. */
      bytes: number;
      /** Smallest and largest value of numeric and date columns, for the planner's estimates. */
      ranges?: Record<string, { min: number; max: number }>;
      /** Columns each of whose values lies in one partition (run/persist.ts). */
      clustered?: string[];
      schema: Field[];
      loc?: SourceLocation;
    }
  /** A bag's items (objects) as rows: the field of each column's name, converted to its type. */
  /** With `raw`, the items themselves as one string column "item" of JSON text (a bag shown as a result). */
  | { kind: "fromBag"; bag: BagNode; schema: Field[]; raw?: boolean; loc?: SourceLocation }
  | { kind: "project"; input: PlanNode; exprs: NamedExpr[]; schema: Field[]; loc?: SourceLocation }
  | { kind: "filter"; input: PlanNode; predicate: ExprNode; schema: Field[]; loc?: SourceLocation }
  | { kind: "aggregate"; input: PlanNode; keys: NamedExpr[]; aggs: NamedExpr[]; schema: Field[]; loc?: SourceLocation }
  | { kind: "head"; input: PlanNode; n: number; schema: Field[]; loc?: SourceLocation }
  /**
   * Appends one column per window expression (each a `window` ExprNode, all with the
   * same `over`), computed in the input's row order; the rows and their order stay.
   */
  | { kind: "window"; input: PlanNode; windows: NamedExpr[]; schema: Field[]; loc?: SourceLocation }
  | {
      kind: "sort";
      input: PlanNode;
      keys: SortSpec[];
      /** top-n: only the first `limit` rows */ limit?: number;
      schema: Field[];
      loc?: SourceLocation;
    }
  | {
      kind: "join";
      left: PlanNode;
      right: PlanNode;
      how: JoinHow;
      leftOn: string[];
      rightOn: string[];
      /** Output columns in order; "key" is the coalesced key `source` (index into leftOn). */
      output: JoinOutput[];
      /** Chosen by the planner: ship the whole right side to every left partition, or hash-partition both. */
      strategy?: "broadcast" | "hash";
      schema: Field[];
      loc?: SourceLocation;
    }
  /** The last `n` rows, in partition order. */
  | { kind: "tail"; input: PlanNode; n: number; schema: Field[]; loc?: SourceLocation }
  /** One row per distinct combination of `keys`: the first in frame order, or any. */
  | { kind: "distinct"; input: PlanNode; keys: string[]; keep: "first" | "any"; schema: Field[]; loc?: SourceLocation }
  /**
   * Per group of `keys` (the whole frame when []), the `k` rows with the largest (or,
   * not `descending`, smallest) non-null `by`; output: the keys, then the input's
   * other columns.
   */
  | {
      kind: "topK";
      input: PlanNode;
      keys: NamedExpr[];
      by: string;
      k: number;
      descending: boolean;
      schema: Field[];
      loc?: SourceLocation;
    }
  /** A seeded random sample: `n` rows, or each row with probability `fraction`; frame order kept. */
  | {
      kind: "sample";
      input: PlanNode;
      n?: number;
      fraction?: number;
      seed: number;
      schema: Field[];
      loc?: SourceLocation;
    }
  /** The rows of every input, one after another; the inputs have exactly this schema. */
  | { kind: "union"; inputs: PlanNode[]; schema: Field[]; loc?: SourceLocation }
  /**
   * Every block of expressions evaluated over the input, and the results stacked: the
   * rows of block 0, then block 1, ... (each block yields the same names and types).
   */
  | { kind: "stack"; input: PlanNode; blocks: NamedExpr[][]; schema: Field[]; loc?: SourceLocation };

export type JoinHow = "inner" | "left" | "right" | "outer" | "semi" | "anti";

/** One output column of a join: a column of one side, or a coalesced key. */
export type JoinOutput =
  { side: "left" | "right"; source: string; name: string } | { side: "key"; source: number; name: string };

/** One sort key: a column, its direction, and where nulls go. */
export interface SortSpec {
  name: string;
  descending: boolean;
  nullsFirst: boolean;
}

/** The inputs of a node (a join has two). */
export function childrenOf(node: PlanNode): PlanNode[] {
  if (node.kind === "join") return [node.left, node.right];
  if (node.kind === "union") return node.inputs;
  return "input" in node ? [node.input] : [];
}

/** The node with new inputs, in `childrenOf` order. */
export function withChildren(node: PlanNode, children: PlanNode[]): PlanNode {
  if (node.kind === "join") return { ...node, left: children[0], right: children[1] };
  if (node.kind === "union") return { ...node, inputs: children };
  return "input" in node ? ({ ...node, input: children[0] } as PlanNode) : node;
}

/** A plan as it travels: versioned, plain JSON. */
export interface Plan {
  version: number;
  root: PlanNode;
}

export type { DType, Field };
