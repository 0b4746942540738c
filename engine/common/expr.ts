import type { DType } from "./types.js";
import type { SourceLocation } from "./errors.js";

export type BinaryOp = "add" | "sub" | "mul" | "div" | "mod" | "eq" | "ne" | "lt" | "le" | "gt" | "ge" | "and" | "or";
export type UnaryOp = "neg" | "not" | "isNull" | "isNotNull";
export type AggOp = "sum" | "mean" | "min" | "max" | "count" | "std" | "var" | "median" | "nunique" | "first" | "last" | "quantile" | "corr";

export const ARITHMETIC_OPS: readonly BinaryOp[] = ["add", "sub", "mul", "div", "mod"];
export const COMPARISON_OPS: readonly BinaryOp[] = ["eq", "ne", "lt", "le", "gt", "ge"];
/** Aggregations that cannot be combined from partial results: they need a shuffle. */
export const HOLISTIC_AGGS: readonly AggOp[] = ["median", "nunique", "quantile"];

export type Scalar = number | string | boolean | null;

/** A serializable expression over column names, as written by the user. */
export type ExprNode =
  | { kind: "col"; name: string; loc?: SourceLocation }
  | { kind: "lit"; value: Scalar; type?: DType }
  | { kind: "binary"; op: BinaryOp; left: ExprNode; right: ExprNode; loc?: SourceLocation }
  | { kind: "unary"; op: UnaryOp; arg: ExprNode; loc?: SourceLocation }
  | { kind: "fillNull"; arg: ExprNode; fill: ExprNode; loc?: SourceLocation }
  | { kind: "cast"; arg: ExprNode; to: DType; loc?: SourceLocation }
  | { kind: "alias"; arg: ExprNode; name: string }
  | {
      kind: "agg";
      op: AggOp;
      arg: ExprNode | null;
      /** The second input of a two-column aggregation (corr). */
      arg2?: ExprNode;
      /** The quantile of "quantile", in [0, 1]. */
      q?: number;
      loc?: SourceLocation;
    };

/** The output name of an expression: its alias, else the column it reads. */
export function outputName(e: ExprNode): string | undefined {
  switch (e.kind) {
    case "alias": return e.name;
    case "col": return e.name;
    case "lit": return "literal";
    case "agg": return e.arg ? outputName(e.arg) : "count";
    case "binary": return outputName(e.left);
    case "unary":
    case "fillNull":
    case "cast": return outputName(e.arg);
  }
}

/** Every column name an expression reads. */
export function columnsOf(e: ExprNode, into: Set<string> = new Set()): Set<string> {
  switch (e.kind) {
    case "col": into.add(e.name); break;
    case "lit": break;
    case "binary": columnsOf(e.left, into); columnsOf(e.right, into); break;
    case "fillNull": columnsOf(e.arg, into); columnsOf(e.fill, into); break;
    case "agg": if (e.arg) columnsOf(e.arg, into); if (e.arg2) columnsOf(e.arg2, into); break;
    default: columnsOf(e.arg, into);
  }
  return into;
}

export function containsAgg(e: ExprNode): boolean {
  switch (e.kind) {
    case "agg": return true;
    case "col":
    case "lit": return false;
    case "binary": return containsAgg(e.left) || containsAgg(e.right);
    case "fillNull": return containsAgg(e.arg) || containsAgg(e.fill);
    default: return containsAgg(e.arg);
  }
}

/** Renders an expression the way explain() shows it. */
export function exprToString(e: ExprNode): string {
  switch (e.kind) {
    case "col": return `col(${JSON.stringify(e.name)})`;
    case "lit": return JSON.stringify(e.value);
    case "binary": return `(${exprToString(e.left)} ${SYMBOLS[e.op]} ${exprToString(e.right)})`;
    case "unary": return `${e.op}(${exprToString(e.arg)})`;
    case "fillNull": return `fillNull(${exprToString(e.arg)}, ${exprToString(e.fill)})`;
    case "cast": return `cast(${exprToString(e.arg)} as ${e.to})`;
    case "alias": return `${exprToString(e.arg)} as ${JSON.stringify(e.name)}`;
    case "agg": {
      const extra = (e.arg2 ? `, ${exprToString(e.arg2)}` : "") + (e.q !== undefined ? `, ${e.q}` : "");
      return `${e.op}(${e.arg ? exprToString(e.arg) : "*"}${extra})`;
    }
  }
}

const SYMBOLS: Record<BinaryOp, string> = {
  add: "+", sub: "-", mul: "*", div: "/", mod: "%", eq: "==", ne: "!=", lt: "<", le: "<=", gt: ">", ge: ">=", and: "and", or: "or",
};
