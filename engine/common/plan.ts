import type { ExprNode } from "./expr.js";
import type { SourceLocation } from "./errors.js";
import type { DType, Field } from "./types.js";

/** Bumped whenever the shape of a plan changes; consumers reject other versions. */
export const PLAN_VERSION = 1;

export interface CsvSourceOptions {
  delimiter: string;
  header: boolean;
  nullValues: string[];
  blocksize: number;
  onBadLines: "error" | "skip";
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
  | { kind: "project"; input: PlanNode; exprs: NamedExpr[]; schema: Field[]; loc?: SourceLocation }
  | { kind: "filter"; input: PlanNode; predicate: ExprNode; schema: Field[]; loc?: SourceLocation }
  | { kind: "aggregate"; input: PlanNode; keys: NamedExpr[]; aggs: NamedExpr[]; schema: Field[]; loc?: SourceLocation }
  | { kind: "head"; input: PlanNode; n: number; schema: Field[]; loc?: SourceLocation };

/** A plan as it travels: versioned, plain JSON. */
export interface Plan {
  version: number;
  root: PlanNode;
}

export type { DType, Field };
