import type { DType } from "./types.js";
import type { SourceLocation } from "./errors.js";

export type BinaryOp = "add" | "sub" | "mul" | "div" | "mod" | "eq" | "ne" | "lt" | "le" | "gt" | "ge" | "and" | "or";
export type UnaryOp = "neg" | "not" | "isNull" | "isNotNull";
export type AggOp =
  | "sum"
  | "mean"
  | "min"
  | "max"
  | "count"
  | "std"
  | "var"
  | "median"
  | "nunique"
  | "first"
  | "last"
  | "quantile"
  | "corr";

export const ARITHMETIC_OPS: readonly BinaryOp[] = ["add", "sub", "mul", "div", "mod"];
export const COMPARISON_OPS: readonly BinaryOp[] = ["eq", "ne", "lt", "le", "gt", "ge"];
/** Aggregations that cannot be combined from partial results: they need a shuffle. */
export const HOLISTIC_AGGS: readonly AggOp[] = ["median", "nunique", "quantile"];

export type Scalar = number | string | boolean | null;

/**
 * Scalar functions, one generic `fn` node for all of them (so optimizer passes and
 * explain need no case per function). Type rules: engine/plan/resolve_fn.ts.
 */
export type FnName =
  | "str.len"
  | "str.lower"
  | "str.upper"
  | "str.strip"
  | "str.contains"
  | "str.startsWith"
  | "str.endsWith"
  | "str.replace"
  | "str.slice"
  | "str.split"
  | "str.toDate"
  | "str.toTimestamp"
  | "concatStr"
  | "dt.year"
  | "dt.month"
  | "dt.day"
  | "dt.hour"
  | "dt.minute"
  | "dt.second"
  | "dt.weekday"
  | "dt.floor"
  | "dt.offsetBy"
  | "dt.diff"
  | "when"
  | "isIn"
  | "abs"
  | "round"
  | "sqrt"
  | "log"
  | "exp"
  | "pow";

/** Literal parameters of a function (patterns, formats, units): plain JSON. */
export type FnOptions = Readonly<Record<string, Scalar | readonly Scalar[]>>;

/** Window functions: computed over the frame's row order, optionally within groups (`over`). */
export type WindowOp =
  | "cumSum"
  | "cumMin"
  | "cumMax"
  | "cumCount"
  | "shift"
  | "diff"
  | "rollingSum"
  | "rollingMean"
  | "rollingMin"
  | "rollingMax";

/** A serializable expression over column names, as written by the user. */
export type ExprNode =
  | { kind: "col"; name: string; loc?: SourceLocation }
  | { kind: "lit"; value: Scalar; type?: DType }
  | { kind: "binary"; op: BinaryOp; left: ExprNode; right: ExprNode; loc?: SourceLocation }
  | { kind: "unary"; op: UnaryOp; arg: ExprNode; loc?: SourceLocation }
  | { kind: "fillNull"; arg: ExprNode; fill: ExprNode; loc?: SourceLocation }
  | { kind: "cast"; arg: ExprNode; to: DType; strict?: boolean; loc?: SourceLocation }
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
    }
  /** when: args are [cond1, value1, cond2, value2, ..., otherwise]. */
  | { kind: "fn"; name: FnName; args: ExprNode[]; options?: FnOptions; loc?: SourceLocation }
  /**
   * `n`: shift/diff offset (negative looks ahead) or rolling window size, else 0;
   * `minPeriods`: rolling only, else 0; `over`: group keys, [] for the whole frame.
   */
  | {
      kind: "window";
      op: WindowOp;
      arg: ExprNode;
      n: number;
      minPeriods: number;
      over: ExprNode[];
      loc?: SourceLocation;
    };

/** The output name of an expression: its alias, else the column it reads. */
export function outputName(e: ExprNode): string | undefined {
  switch (e.kind) {
    case "alias":
      return e.name;
    case "col":
      return e.name;
    case "lit":
      return "literal";
    case "agg":
      return e.arg ? outputName(e.arg) : "count";
    case "binary":
      return outputName(e.left);
    case "unary":
    case "fillNull":
    case "cast":
    case "window":
      return outputName(e.arg);
    case "fn":
      return e.args.length === 0 ? undefined : outputName(e.name === "when" ? e.args[1] : e.args[0]);
  }
}

/** The direct sub-expressions of an expression: the one walk every traversal shares. */
export function exprChildren(e: ExprNode): ExprNode[] {
  switch (e.kind) {
    case "col":
    case "lit":
      return [];
    case "binary":
      return [e.left, e.right];
    case "fillNull":
      return [e.arg, e.fill];
    case "agg":
      return [...(e.arg ? [e.arg] : []), ...(e.arg2 ? [e.arg2] : [])];
    case "fn":
      return e.args;
    case "window":
      return [e.arg, ...e.over];
    default:
      return [e.arg];
  }
}

/** The expression with `f` applied to each of its direct sub-expressions. */
export function mapChildren(e: ExprNode, f: (x: ExprNode) => ExprNode): ExprNode {
  switch (e.kind) {
    case "col":
    case "lit":
      return e;
    case "binary":
      return { ...e, left: f(e.left), right: f(e.right) };
    case "fillNull":
      return { ...e, arg: f(e.arg), fill: f(e.fill) };
    case "agg":
      return { ...e, arg: e.arg ? f(e.arg) : null, ...(e.arg2 ? { arg2: f(e.arg2) } : {}) };
    case "fn":
      return { ...e, args: e.args.map(f) };
    case "window":
      return { ...e, arg: f(e.arg), over: e.over.map(f) };
    default:
      return { ...e, arg: f(e.arg) };
  }
}

/** Every column name an expression reads. */
export function columnsOf(e: ExprNode, into: Set<string> = new Set()): Set<string> {
  if (e.kind === "col") into.add(e.name);
  for (const c of exprChildren(e)) columnsOf(c, into);
  return into;
}

export function containsAgg(e: ExprNode): boolean {
  return e.kind === "agg" || exprChildren(e).some(containsAgg);
}

/** Whether an expression holds a window function (cumSum, shift, rolling, ...). */
export function containsWindow(e: ExprNode): boolean {
  return e.kind === "window" || exprChildren(e).some(containsWindow);
}

/** Renders an expression the way explain() shows it. */
export function exprToString(e: ExprNode): string {
  switch (e.kind) {
    case "col":
      return `col(${JSON.stringify(e.name)})`;
    case "lit":
      return JSON.stringify(e.value);
    case "binary":
      return `(${exprToString(e.left)} ${SYMBOLS[e.op]} ${exprToString(e.right)})`;
    case "unary":
      return `${e.op}(${exprToString(e.arg)})`;
    case "fillNull":
      return `fillNull(${exprToString(e.arg)}, ${exprToString(e.fill)})`;
    case "cast":
      return `cast(${exprToString(e.arg)} as ${e.to}${e.strict === false ? ", strict=false" : ""})`;
    case "alias":
      return `${exprToString(e.arg)} as ${JSON.stringify(e.name)}`;
    case "agg": {
      const extra = (e.arg2 ? `, ${exprToString(e.arg2)}` : "") + (e.q !== undefined ? `, ${e.q}` : "");
      return `${e.op}(${e.arg ? exprToString(e.arg) : "*"}${extra})`;
    }
    case "fn": {
      const opts = Object.entries(e.options ?? {}).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
      return `${e.name}(${[...e.args.map(exprToString), ...opts].join(", ")})`;
    }
    case "window": {
      const params = e.op.startsWith("rolling")
        ? `, ${e.n}, minPeriods=${e.minPeriods}`
        : e.op === "shift" || e.op === "diff"
          ? `, ${e.n}`
          : "";
      const over = e.over.length > 0 ? ` over [${e.over.map(exprToString).join(", ")}]` : "";
      return `${e.op}(${exprToString(e.arg)}${params})${over}`;
    }
  }
}

const SYMBOLS: Record<BinaryOp, string> = {
  add: "+",
  sub: "-",
  mul: "*",
  div: "/",
  mod: "%",
  eq: "==",
  ne: "!=",
  lt: "<",
  le: "<=",
  gt: ">",
  ge: ">=",
  and: "and",
  or: "or",
};
