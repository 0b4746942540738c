// Type checking and resolution of expressions against a schema. The same code
// validates a pipeline when it is written and resolves it to native form when it
// runs, so what passes validation is exactly what the kernels receive.
import type { SourceLocation } from "../common/errors.js";
import {
  ARITHMETIC_OPS,
  COMPARISON_OPS,
  containsAgg,
  exprToString,
  type AggOp,
  type ExprNode,
  type WindowOp,
} from "../common/expr.js";
import type { PlanNode } from "../common/plan.js";
import { fitsInt64, isNumeric, type DType, type Field, type Schema } from "../common/types.js";
import type { NativeExpr, NativeWindowOp } from "../graph/kernel_args.js";
import { resolveFn } from "./resolve_fn.js";
import { coerceLiteral, describe, fail, isNullLit } from "./resolve_base.js";

/** Finds a column, or fails listing the columns that exist. */
export function fieldIndex(schema: Schema, name: string, loc?: SourceLocation): number {
  const i = schema.findIndex((f) => f.name === name);
  if (i < 0) {
    const names = schema.map((f) => f.name);
    fail(`column "${name}" does not exist; the columns are: ${names.join(", ") || "(none)"}`, loc);
  }
  return i;
}

/**
 * The columns a file scan reads (projection pushdown's choice, else every one), with
 * their types: what its pushed-down predicate is resolved against.
 *
 * @example
 * resolveExpr(scan.predicate, scannedFields(scan))
 */
export function scannedFields(node: PlanNode & { kind: "scanCsv" | "scanFile" }): Field[] {
  return (node.columns ?? node.fileSchema.map((f) => f.name)).map(
    (n) => node.fileSchema[fieldIndex(node.fileSchema, n, node.loc)],
  );
}

function literalType(value: unknown): DType {
  if (typeof value === "string") return "string";
  if (typeof value === "boolean") return "bool";
  if (typeof value === "number") return fitsInt64(value) ? "int64" : "float64";
  return "int64"; // an untyped null; binary operators retype it to the other side
}

/**
 * Resolves a scalar (non-aggregate) expression to its native form, checking types.
 *
 * @example
 * resolveExpr(col("a").add(1).node, [{ name: "a", type: "int64" }]).type // "int64"
 */
export function resolveExpr(e: ExprNode, schema: Schema, loc?: SourceLocation): NativeExpr {
  const at = ("loc" in e && e.loc) || loc;
  switch (e.kind) {
    case "col": {
      const index = fieldIndex(schema, e.name, at);
      return { kind: "col", index, type: schema[index].type };
    }
    case "lit":
      return typedLiteral(e, at);
    case "alias":
      return resolveExpr(e.arg, schema, at);
    case "agg":
      return fail(
        `${e.op}() is an aggregation; use it inside agg() or select(), not in ${"filter()/withColumns()"}`,
        at,
      );
    case "window":
      return fail(
        `${windowName(e)} is a window function; compute it with withColumns() or select() first, then filter, group or aggregate the new column`,
        at,
      );
    case "cast":
      return {
        kind: "cast",
        arg: resolveExpr(e.arg, schema, at),
        type: e.to,
        label: exprToString(e),
        ...(e.strict === false ? { strict: false } : {}),
      };
    case "fn":
      return resolveFn(
        e,
        e.args.map((a) => resolveExpr(a, schema, at)),
        at,
      );
    case "unary": {
      const arg = resolveExpr(e.arg, schema, at);
      if (e.op === "isNull" || e.op === "isNotNull") return { kind: "unary", op: e.op, arg, type: "bool" };
      if (e.op === "not") {
        if (arg.type !== "bool") fail(`not() needs a bool expression, but ${describe(e.arg, arg.type)}`, at);
        return { kind: "unary", op: "not", arg, type: "bool" };
      }
      if (!isNumeric(arg.type)) fail(`neg() needs a number, but ${describe(e.arg, arg.type)}`, at);
      return { kind: "unary", op: "neg", arg, type: arg.type };
    }
    case "fillNull": {
      const arg = resolveExpr(e.arg, schema, at);
      let fill = coerceLiteral(resolveExpr(e.fill, schema, at), arg.type, at);
      let type = arg.type;
      if (isNumeric(arg.type) && isNumeric(fill.type))
        type = arg.type === "float64" || fill.type === "float64" ? "float64" : "int64";
      else if (fill.type !== arg.type)
        fail(
          `fillNull() value must be ${arg.type} like ${exprToString(e.arg)}, but ${describe(e.fill, fill.type)}`,
          at,
        );
      fill = coerceLiteral(fill, type, at);
      return { kind: "fillNull", arg, fill, type };
    }
    case "binary": {
      let left = resolveExpr(e.left, schema, at);
      let right = resolveExpr(e.right, schema, at);
      if (isNullLit(left)) left = { ...left, type: right.type };
      if (isNullLit(right)) right = { ...right, type: left.type };
      right = coerceLiteral(right, left.type, at);
      left = coerceLiteral(left, right.type, at);
      if (ARITHMETIC_OPS.includes(e.op)) {
        for (const [side, r] of [
          [e.left, left],
          [e.right, right],
        ] as const)
          if (!isNumeric(r.type)) fail(`${e.op}() needs numbers, but ${describe(side, r.type)}`, at);
        const type: DType = e.op === "div" || left.type === "float64" || right.type === "float64" ? "float64" : "int64";
        return { kind: "binary", op: e.op, left, right, type };
      }
      if (COMPARISON_OPS.includes(e.op)) {
        const ok = left.type === right.type || (isNumeric(left.type) && isNumeric(right.type));
        if (!ok)
          fail(
            `${e.op}() compares like with like, but ${describe(e.left, left.type)} and ${describe(e.right, right.type)}`,
            at,
          );
        return { kind: "binary", op: e.op, left, right, type: "bool" };
      }
      for (const [side, r] of [
        [e.left, left],
        [e.right, right],
      ] as const)
        if (r.type !== "bool") fail(`${e.op}() needs bool expressions, but ${describe(side, r.type)}`, at);
      return { kind: "binary", op: e.op, left, right, type: "bool" };
    }
  }
}

/** The result type of an aggregation over an input of type `t`, or a plan error. */
export function aggType(op: AggOp, t: DType | null, e: ExprNode, loc?: SourceLocation): DType {
  if (op === "count" || op === "nunique") return "int64";
  if (t === null) return fail(`${op}() needs a column, as in col("x").${op}()`, loc);
  if (op === "min" || op === "max" || op === "first" || op === "last") return t;
  if (!isNumeric(t))
    fail(`${op}() needs a numeric column, but ${describe(e, t)}; cast it or pick a numeric column`, loc);
  return op === "sum" ? t : "float64";
}

/** An aggregation split into its parts: `op(arg) as name`. */
export interface AggParts {
  op: AggOp;
  arg: ExprNode | null;
  name: string;
  type: DType;
  /** corr: the second input. */
  arg2?: ExprNode;
  /** quantile: q. */
  q?: number;
}

/** Checks that `e` is an aggregation (optionally aliased) and returns its parts. */
export function aggParts(e: ExprNode, name: string, schema: Schema, loc?: SourceLocation): AggParts {
  const inner = e.kind === "alias" ? e.arg : e;
  const at = ("loc" in inner && inner.loc) || loc;
  if (inner.kind !== "agg")
    fail(
      `agg() takes aggregations such as col("x").sum() or arithmetic on them, but got ${exprToString(e)}, which aggregates nothing`,
      at,
    );
  if (inner.arg && containsAgg(inner.arg)) fail(`aggregations cannot be nested: ${exprToString(inner)}`, at);
  const argType = inner.arg ? resolveExpr(inner.arg, schema, at).type : null;
  const parts: AggParts = {
    op: inner.op,
    arg: inner.arg,
    name,
    type: aggType(inner.op, argType, inner.arg ?? inner, at),
  };
  if (inner.q !== undefined) parts.q = inner.q;
  if (inner.op === "corr") {
    if (!inner.arg2) return fail('corr() needs two columns, as in corr("x", "y")', at);
    if (containsAgg(inner.arg2)) fail(`aggregations cannot be nested: ${exprToString(inner)}`, at);
    parts.arg2 = inner.arg2;
    aggType(inner.op, resolveExpr(inner.arg2, schema, at).type, inner.arg2, at);
  }
  return parts;
}

/** A window function resolved against its input: the kernel's op, input and over keys, and the result type. */
export interface ResolvedWindow {
  op: NativeWindowOp;
  arg: NativeExpr;
  over: NativeExpr[];
  type: DType;
}

const WINDOW_TYPES: Record<WindowOp, { accepts: (t: DType) => boolean; needs: string }> = {
  cumSum: { accepts: isNumeric, needs: "a numeric column" },
  rollingSum: { accepts: isNumeric, needs: "a numeric column" },
  rollingMean: { accepts: isNumeric, needs: "a numeric column" },
  diff: { accepts: isNumeric, needs: "a numeric column" },
  cumMin: { accepts: isOrdered, needs: "a numeric, date or timestamp column" },
  cumMax: { accepts: isOrdered, needs: "a numeric, date or timestamp column" },
  rollingMin: { accepts: isOrdered, needs: "a numeric, date or timestamp column" },
  rollingMax: { accepts: isOrdered, needs: "a numeric, date or timestamp column" },
  cumCount: { accepts: () => true, needs: "a column" },
  shift: { accepts: () => true, needs: "a column" },
};

/** A window function as the user wrote it: "cumSum()", "rolling(3).mean()". */
function windowName(e: Extract<ExprNode, { kind: "window" }>): string {
  return e.op.startsWith("rolling") ? `rolling(${e.n}).${e.op.slice("rolling".length).toLowerCase()}()` : `${e.op}()`;
}

function isOrdered(t: DType): boolean {
  return isNumeric(t) || t === "date" || t === "timestamp";
}

/**
 * Type-checks a window function (not nested in another: the planner lifts inner ones
 * first). cumCount runs as a cumulative sum of isNotNull.
 *
 * @example
 * resolveWindow(col("x").cumSum().node, [{ name: "x", type: "int64" }]).type // "int64"
 */
export function resolveWindow(e: ExprNode, schema: Schema, loc?: SourceLocation): ResolvedWindow {
  if (e.kind !== "window") return fail(`expected a window function, got ${exprToString(e)}`, loc);
  const at = e.loc ?? loc;
  const arg = resolveExpr(e.arg, schema, at);
  const over = e.over.map((k) => resolveExpr(k, schema, at));
  const rule = WINDOW_TYPES[e.op];
  if (!rule.accepts(arg.type))
    fail(`${windowName(e)} needs ${rule.needs}, but ${describe(e.arg, arg.type)}; cast it or pick another column`, at);
  if (e.op === "cumCount") {
    const notNull: NativeExpr = {
      kind: "cast",
      arg: { kind: "unary", op: "isNotNull", arg, type: "bool" },
      type: "int64",
    };
    return { op: "cumSum", arg: notNull, over, type: "int64" };
  }
  return { op: e.op, arg, over, type: e.op === "rollingMean" ? "float64" : arg.type };
}

/**
 * A literal, in the type lit(value, type) gives it: a null or number takes the type as it
 * is (a date or timestamp number is days or microseconds since 1970), a date or
 * timestamp string is parsed here, and any other pairing becomes a strict cast (so
 * `lit("12", "int64")` is 12, not the bytes of "12" read as a number).
 */
function typedLiteral(e: Extract<ExprNode, { kind: "lit" }>, at: SourceLocation | undefined): NativeExpr {
  const own = literalType(e.value);
  const to = e.type ?? own;
  const written = `lit(${JSON.stringify(e.value)}, "${to}")`;
  if (e.value === null || to === own) return { kind: "lit", value: e.value, type: to };
  if (typeof e.value === "number" && to !== "string" && to !== "bool") {
    if (to === "float64") return { kind: "lit", value: e.value, type: to };
    if (!Number.isInteger(e.value) || !fitsInt64(e.value))
      fail(`${written}: ${e.value} is not a whole number an ${to} can hold`, at);
    return { kind: "lit", value: e.value, type: to };
  }
  if (typeof e.value === "string" && (to === "date" || to === "timestamp"))
    return coerceLiteral({ kind: "lit", value: e.value, type: "string" }, to, at);
  return { kind: "cast", arg: { kind: "lit", value: e.value, type: own }, type: to, label: written };
}
