import { BasinError } from "../common/errors.js";
import type { AggOp, BinaryOp, ExprNode, FnName, FnOptions, Scalar, UnaryOp } from "../common/expr.js";
import { DTYPES, isDType, type DType } from "../common/types.js";
import { ExprDt } from "./expr_dt.js";
import { ExprStr } from "./expr_str.js";
import { callerLocation } from "./source_location.js";

/** Anything an expression method accepts as an operand: another expression or a plain value. */
export type ExprLike = Expr | Scalar;

function toNode(v: ExprLike): ExprNode {
  if (v instanceof Expr) return v.node;
  if (v === null || typeof v === "number" || typeof v === "string" || typeof v === "boolean") {
    if (typeof v === "number" && !Number.isFinite(v)) throw new BasinError("BASIN_PLAN", `literal ${v} is not a finite number`, callerLocation());
    return { kind: "lit", value: v };
  }
  throw new BasinError("BASIN_PLAN", `expected an expression or a number/string/bool/null, got ${typeof v}`, callerLocation());
}

/**
 * A lazy column expression. Immutable: every method returns a new Expr.
 *
 * @example
 * col("tip").div(col("fare")).alias("tip_fraction")
 */
export class Expr {
  /** @internal */
  constructor(readonly node: ExprNode) {}

  private binary(op: BinaryOp, other: ExprLike): Expr {
    return new Expr({ kind: "binary", op, left: this.node, right: toNode(other), loc: callerLocation() });
  }
  private unary(op: UnaryOp): Expr {
    return new Expr({ kind: "unary", op, arg: this.node, loc: callerLocation() });
  }
  private agg(op: AggOp): Expr {
    return new Expr({ kind: "agg", op, arg: this.node, loc: callerLocation() });
  }

  add(o: ExprLike): Expr { return this.binary("add", o); }
  sub(o: ExprLike): Expr { return this.binary("sub", o); }
  mul(o: ExprLike): Expr { return this.binary("mul", o); }
  /** True division: always float64; division by zero gives null (as in DuckDB). */
  div(o: ExprLike): Expr { return this.binary("div", o); }
  mod(o: ExprLike): Expr { return this.binary("mod", o); }
  neg(): Expr { return this.unary("neg"); }
  eq(o: ExprLike): Expr { return this.binary("eq", o); }
  ne(o: ExprLike): Expr { return this.binary("ne", o); }
  lt(o: ExprLike): Expr { return this.binary("lt", o); }
  le(o: ExprLike): Expr { return this.binary("le", o); }
  gt(o: ExprLike): Expr { return this.binary("gt", o); }
  ge(o: ExprLike): Expr { return this.binary("ge", o); }
  /** Three-valued logic: false AND null is false, true OR null is true. */
  and(o: ExprLike): Expr { return this.binary("and", o); }
  or(o: ExprLike): Expr { return this.binary("or", o); }
  not(): Expr { return this.unary("not"); }
  isNull(): Expr { return this.unary("isNull"); }
  isNotNull(): Expr { return this.unary("isNotNull"); }
  fillNull(value: ExprLike): Expr {
    return new Expr({ kind: "fillNull", arg: this.node, fill: toNode(value), loc: callerLocation() });
  }
  /**
   * Converts to another type. A string that does not parse fails the compute with
   * BASIN_CAST naming the value; with `{ strict: false }` it becomes null instead.
   *
   * @example
   * col("amount").cast("float64", { strict: false })
   */
  cast(to: DType, options: { strict?: boolean } = {}): Expr {
    if (typeof to !== "string" || !isDType(to))
      throw new BasinError("BASIN_PLAN", `cannot cast to "${String(to)}"; the types are ${DTYPES.join(", ")}`, callerLocation());
    return new Expr({ kind: "cast", arg: this.node, to, ...(options.strict === false ? { strict: false } : {}), loc: callerLocation() });
  }
  alias(name: string): Expr {
    if (typeof name !== "string" || name === "") throw new BasinError("BASIN_PLAN", "alias() needs a non-empty name", callerLocation());
    return new Expr({ kind: "alias", arg: this.node, name });
  }

  private fn(name: FnName, options?: FnOptions, more: ExprLike[] = []): Expr {
    return new Expr({ kind: "fn", name, args: [this.node, ...more.map(toNode)], ...(options ? { options } : {}), loc: callerLocation() });
  }

  /**
   * String functions: `col("s").str.lower()`.
   *
   * @example
   * col("city").str.len()
   */
  get str(): ExprStr { return new ExprStr(this); }
  /**
   * Date and timestamp functions: `col("d").dt.year()`.
   *
   * @example
   * col("pickup").dt.hour()
   */
  get dt(): ExprDt { return new ExprDt(this); }

  /**
   * lo <= this <= hi, like SQL BETWEEN (null when a side is null and the other does not decide).
   *
   * @example
   * col("fare").between(10, 20)
   */
  between(lo: ExprLike, hi: ExprLike): Expr {
    const loc = callerLocation();
    const ge: ExprNode = { kind: "binary", op: "ge", left: this.node, right: toNode(lo), loc };
    const le: ExprNode = { kind: "binary", op: "le", left: this.node, right: toNode(hi), loc };
    return new Expr({ kind: "binary", op: "and", left: ge, right: le, loc });
  }
  /**
   * Membership in a list of literals (numbers, strings, bools, dates as "YYYY-MM-DD"). As
   * in SQL, a value not found is null (not false) when the list holds a null, and a null is null.
   *
   * @example
   * col("city").isIn(["Zürich", "東京"])
   */
  isIn(values: readonly Scalar[]): Expr {
    if (!Array.isArray(values)) throw new BasinError("BASIN_PLAN", "isIn() needs an array of values", callerLocation());
    for (const v of values) toNode(v);
    return this.fn("isIn", { values: [...values] });
  }
  /** @example col("v").abs() */
  abs(): Expr { return this.fn("abs"); }
  /**
   * Rounds half away from zero to `decimals` places (negative: to tens, hundreds...), like
   * DuckDB round; integers stay integers.
   *
   * @example
   * col("fare").round(1)
   */
  round(decimals = 0): Expr { return this.fn("round", { decimals }); }
  /**
   * Square root, float64. Math functions give null where the result is not a finite
   * number: sqrt of a negative, log of 0 or a negative, exp or pow overflowing (DuckDB
   * raises an error for sqrt and log there, and gives null for exp and pow).
   *
   * @example
   * col("area").sqrt()
   */
  sqrt(): Expr { return this.fn("sqrt"); }
  /**
   * Natural logarithm, or to `base`; null for 0 and negatives (see sqrt).
   *
   * @example
   * col("v").log(10)
   */
  log(base?: number): Expr { return this.fn("log", { base: base ?? null }); }
  /** e to the power of this; null on overflow. @example col("x").exp() */
  exp(): Expr { return this.fn("exp"); }
  /**
   * This to the power `exponent`, float64; null where not a finite number (as in DuckDB).
   *
   * @example
   * col("x").pow(2)
   */
  pow(exponent: ExprLike): Expr { return this.fn("pow", undefined, [exponent]); }

  sum(): Expr { return this.agg("sum"); }
  mean(): Expr { return this.agg("mean"); }
  min(): Expr { return this.agg("min"); }
  max(): Expr { return this.agg("max"); }
  /** Number of non-null values. */
  count(): Expr { return this.agg("count"); }
  /** Sample standard deviation (n − 1), like pandas and DuckDB. */
  std(): Expr { return this.agg("std"); }
  /** Sample variance (n − 1). */
  var(): Expr { return this.agg("var"); }
  median(): Expr { return this.agg("median"); }
  nUnique(): Expr { return this.agg("nunique"); }
  /** First non-null value in row order. */
  first(): Expr { return this.agg("first"); }
  /** Last non-null value in row order. */
  last(): Expr { return this.agg("last"); }
}

/**
 * A column by name.
 *
 * @example
 * df.filter(col("fare").gt(0))
 */
export function col(name: string): Expr {
  if (typeof name !== "string" || name === "") throw new BasinError("BASIN_PLAN", "col() needs a column name", callerLocation());
  return new Expr({ kind: "col", name, loc: callerLocation() });
}

/**
 * A literal value; `type` fixes the type of a null or a number.
 *
 * @example
 * df.withColumns({ one: lit(1) })
 */
export function lit(value: Scalar, type?: DType): Expr {
  const node = toNode(value);
  return new Expr(type && node.kind === "lit" ? { ...node, type } : node);
}

/** The number of rows, as an aggregation: `df.groupBy("k").agg(count())`. */
export function count(): Expr {
  return new Expr({ kind: "agg", op: "count", arg: null, loc: callerLocation() });
}

/** @internal */
export function exprNode(v: ExprLike): ExprNode {
  return toNode(v);
}
