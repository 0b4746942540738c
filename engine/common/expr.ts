import type { DType } from "./types.js";
import type { SourceLocation } from "./errors.js";

export type BinaryOp = "add" | "sub" | "mul" | "div" | "mod" | "eq" | "ne" | "lt" | "le" | "gt" | "ge" | "and" | "or";
export type UnaryOp = "neg" | "not" | "isNull" | "isNotNull";
export type AggOp = "sum" | "mean" | "min" | "max" | "count" | "std" | "var" | "median" | "nunique" | "first" | "last";

export const ARITHMETIC_OPS: readonly BinaryOp[] = ["add", "sub", "mul", "div", "mod"];
export const COMPARISON_OPS: readonly BinaryOp[] = ["eq", "ne", "lt", "le", "gt", "ge"];
/** Aggregations that cannot be combined from partial results: they need a shuffle. */
export const HOLISTIC_AGGS: readonly AggOp[] = ["median", "nunique"];

export type Scalar = number | string | boolean | null;

/**
 * Scalar functions, one generic `fn` node for all of them (so optimizer passes and
 * explain need no case per function). Type rules: engine/plan/resolve_fn.ts.
 */
export type FnName =
  | "str.len" | "str.lower" | "str.upper" | "str.strip" | "str.contains" | "str.startsWith" | "str.endsWith"
  | "str.replace" | "str.slice" | "str.split" | "str.toDate" | "str.toTimestamp" | "concatStr"
  | "dt.year" | "dt.month" | "dt.day" | "dt.hour" | "dt.minute" | "dt.second" | "dt.weekday"
  | "dt.floor" | "dt.offsetBy" | "dt.diff"
  | "when" | "isIn" | "abs" | "round" | "sqrt" | "log" | "exp" | "pow";

/** Literal parameters of a function (patterns, formats, units): plain JSON. */
export type FnOptions = Readonly<Record<string, Scalar | readonly Scalar[]>>;

/** A serializable expression over column names, as written by the user. */
export type ExprNode =
  | { kind: "col"; name: string; loc?: SourceLocation }
  | { kind: "lit"; value: Scalar; type?: DType }
  | { kind: "binary"; op: BinaryOp; left: ExprNode; right: ExprNode; loc?: SourceLocation }
  | { kind: "unary"; op: UnaryOp; arg: ExprNode; loc?: SourceLocation }
  | { kind: "fillNull"; arg: ExprNode; fill: ExprNode; loc?: SourceLocation }
  | { kind: "cast"; arg: ExprNode; to: DType; strict?: boolean; loc?: SourceLocation }
  | { kind: "alias"; arg: ExprNode; name: string }
  | { kind: "agg"; op: AggOp; arg: ExprNode | null; loc?: SourceLocation }
  /** when: args are [cond1, value1, cond2, value2, ..., otherwise]. */
  | { kind: "fn"; name: FnName; args: ExprNode[]; options?: FnOptions; loc?: SourceLocation };

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
    case "fn": return e.args.length === 0 ? undefined : outputName(e.name === "when" ? e.args[1] : e.args[0]);
  }
}

/** Every column name an expression reads. */
export function columnsOf(e: ExprNode, into: Set<string> = new Set()): Set<string> {
  switch (e.kind) {
    case "col": into.add(e.name); break;
    case "lit": break;
    case "binary": columnsOf(e.left, into); columnsOf(e.right, into); break;
    case "fillNull": columnsOf(e.arg, into); columnsOf(e.fill, into); break;
    case "agg": if (e.arg) columnsOf(e.arg, into); break;
    case "fn": for (const a of e.args) columnsOf(a, into); break;
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
    case "fn": return e.args.some(containsAgg);
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
    case "cast": return `cast(${exprToString(e.arg)} as ${e.to}${e.strict === false ? ", strict=false" : ""})`;
    case "alias": return `${exprToString(e.arg)} as ${JSON.stringify(e.name)}`;
    case "agg": return `${e.op}(${e.arg ? exprToString(e.arg) : "*"})`;
    case "fn": {
      const opts = Object.entries(e.options ?? {}).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
      return `${e.name}(${[...e.args.map(exprToString), ...opts].join(", ")})`;
    }
  }
}

const SYMBOLS: Record<BinaryOp, string> = {
  add: "+", sub: "-", mul: "*", div: "/", mod: "%", eq: "==", ne: "!=", lt: "<", le: "<=", gt: ">", ge: ">=", and: "and", or: "or",
};
