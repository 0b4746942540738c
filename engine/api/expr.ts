import { BasinError } from "../common/errors.js";
import type { AggOp, BinaryOp, ExprNode, Scalar, UnaryOp } from "../common/expr.js";
import { DTYPES, isDType, type DType } from "../common/types.js";
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
  cast(to: DType): Expr {
    if (typeof to !== "string" || !isDType(to))
      throw new BasinError("BASIN_PLAN", `cannot cast to "${String(to)}"; the types are ${DTYPES.join(", ")}`, callerLocation());
    return new Expr({ kind: "cast", arg: this.node, to, loc: callerLocation() });
  }
  alias(name: string): Expr {
    if (typeof name !== "string" || name === "") throw new BasinError("BASIN_PLAN", "alias() needs a non-empty name", callerLocation());
    return new Expr({ kind: "alias", arg: this.node, name });
  }

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

  /**
   * The q-quantile of the non-null values, interpolating linearly between the two
   * nearest ranks (DuckDB's quantile_cont); always float64. Like median(), it needs
   * all of a group's values in one place.
   *
   * @example
   * df.groupBy("city").agg(col("fare").quantile(0.9).alias("p90"))
   */
  quantile(q: number, options: QuantileOptions = {}): Expr {
    const loc = callerLocation();
    if (typeof q !== "number" || !(q >= 0 && q <= 1)) throw new BasinError("BASIN_PLAN", `quantile() needs q between 0 and 1, got ${String(q)}`, loc);
    const method = options?.method ?? "linear";
    if (method !== "linear") throw new BasinError("BASIN_PLAN", `quantile() method must be "linear", got ${JSON.stringify(method)}`, loc);
    return new Expr({ kind: "agg", op: "quantile", arg: this.node, q, loc });
  }
}

export interface QuantileOptions {
  /** How to pick between ranks: "linear" interpolation (the default and only one so far). */
  method?: "linear";
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

/**
 * Pearson's correlation of two columns, as an aggregation. Rows where either value is
 * null are skipped; null when no row has both, NaN when either column has no spread
 * there (a single row, or a constant), as DuckDB's corr.
 *
 * @example
 * df.groupBy("id2", "id4").agg(corr("v1", "v2").alias("r"))
 */
export function corr(a: string | Expr, b: string | Expr): Expr {
  const loc = callerLocation();
  const arg = (v: string | Expr): ExprNode => {
    if (typeof v === "string" && v !== "") return { kind: "col", name: v, loc };
    if (v instanceof Expr) return v.node;
    throw new BasinError("BASIN_PLAN", 'corr() takes two columns, as in corr("x", "y")', loc);
  };
  return new Expr({ kind: "agg", op: "corr", arg: arg(a), arg2: arg(b), loc });
}

/** @internal */
export function exprNode(v: ExprLike): ExprNode {
  return toNode(v);
}
