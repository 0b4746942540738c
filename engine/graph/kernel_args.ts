// The arguments the native kernels take, as task steps carry them: resolved
// expressions (column indices, every node typed), aggregations, sort and join keys,
// window functions and CSV scan options. Plain JSON; the addon's typings and the
// task graph both read them from here.
import type { AggOp, BinaryOp, UnaryOp } from "../common/expr.js";
import type { DType } from "../common/types.js";

/** How a CSV file's bytes become text (see ReadCsvOptions.encoding). */
export type CsvEncoding = "utf8" | "latin1" | "replace";

export interface CsvOptions {
  delimiter: string;
  header: boolean;
  nullValues: string[];
  /** Default "utf8". */
  encoding?: CsvEncoding;
}

export interface CsvScanOptions extends CsvOptions {
  /** Names and types of every column of the file, in file order. */
  names: string[];
  types: DType[];
  /** Indices (file order) of the columns to materialize, in output order. */
  columns: number[];
  /** 1-based line number of the first line at `start`. */
  line: number;
  onBadLines: "error" | "skip";
}

/** A resolved expression: columns are indices into the input table, every node typed. */
export type NativeExpr =
  | { kind: "col"; index: number; type: DType }
  | { kind: "lit"; value: number | string | boolean | null; type: DType }
  | { kind: "binary"; op: BinaryOp; left: NativeExpr; right: NativeExpr; type: DType }
  | { kind: "unary"; op: UnaryOp; arg: NativeExpr; type: DType }
  | { kind: "fillNull"; arg: NativeExpr; fill: NativeExpr; type: DType }
  /** strict false: values that do not convert become null; label names the expression in errors. */
  | { kind: "cast"; arg: NativeExpr; type: DType; strict?: boolean; label?: string }
  /** A scalar function (engine/common/expr.ts FnName); options are already validated and normalized. */
  | { kind: "fn"; name: string; args: NativeExpr[]; options: NativeFnOptions; type: DType };

/** Function parameters: numbers (durations in microseconds), strings, bools, nulls, lists of them. */
export type NativeFnOptions = Record<string, number | string | boolean | null | (number | string | boolean | null)[]>;

// The plan's operator names are the kernels' too (one list, in common/expr.ts).
export type { AggOp, BinaryOp, UnaryOp } from "../common/expr.js";
export type AggMode = "full" | "partial" | "merge" | "final";

export interface NativeAgg {
  op: AggOp;
  /** Input column index; -1 with op "count" counts rows. Ignored in "merge"/"final" modes. */
  column: number;
  name: string;
  /** corr: the second input column. */
  column2?: number;
  /** quantile: q in [0, 1] (linear interpolation, as DuckDB's quantile_cont). */
  q?: number;
}

export interface SortKey {
  column: number;
  descending: boolean;
  nullsFirst: boolean;
}

export type JoinHow = "inner" | "left" | "right" | "outer" | "semi" | "anti";

export interface JoinSpec {
  how: JoinHow;
  /** Column indices in the left table. */
  leftKeys: number[];
  /**
   * Column indices in the right table: same count and types as leftKeys (int64/date/
   * timestamp/bool with the same type, string with string, float64 with float64; the
   * TS side casts int64↔float64 before calling).
   */
  rightKeys: number[];
  /**
   * Output columns, in order. For "outer"/"right" joins (others too) a key may be
   * { side: "key", column: k, name } = coalesce(left key k, right key k). semi/anti
   * output only left columns.
   */
  output: { side: "left" | "right" | "key"; column: number; name: string }[];
}

/** A window function as the kernels run it (cumCount arrives as a cumSum of isNotNull). */
export type NativeWindowOp =
  "cumSum" | "cumMin" | "cumMax" | "shift" | "diff" | "rollingSum" | "rollingMean" | "rollingMin" | "rollingMax";

export interface NativeWindow {
  op: NativeWindowOp;
  /** Input column index. */
  column: number;
  /** shift/diff: offset (negative looks ahead); rolling: window size. 0 otherwise. */
  n: number;
  /** rolling: non-null values the window needs for a result. 0 otherwise. */
  minPeriods: number;
  /** Output column name. */
  name: string;
}
