import { BasinError } from "../common/errors.js";
import {
  containsWindow,
  mapChildren,
  type AggOp,
  type BinaryOp,
  type ExprNode,
  type FnName,
  type FnOptions,
  type Scalar,
  type UnaryOp,
  type WindowOp,
} from "../common/expr.js";
import { DTYPES, isDType, type DType } from "../common/types.js";
import { ExprDt } from "./expr_dt.js";
import { ExprStr } from "./expr_str.js";
import { callerLocation } from "./source_location.js";

/**
 * Anything an expression method accepts as an operand: another expression or a plain
 * value; a JS Date is a timestamp (its UTC time, as results give timestamps back); a
 * BigInt is an int64, exact past 2^53 (results give such values back as BigInts).
 */
export type ExprLike = Expr | Scalar | Date | bigint;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function toNode(v: ExprLike): ExprNode {
  if (v instanceof Expr) return v.node;
  if (typeof v === "bigint") {
    if (v < INT64_MIN || v > INT64_MAX)
      throw new BasinError("BASIN_PLAN", `${v}n is outside int64 (−2^63 … 2^63 − 1)`, callerLocation());
    // Past 2^53 a number would round: the digits, read as an int64.
    return Number.isSafeInteger(Number(v))
      ? { kind: "lit", value: Number(v), type: "int64" }
      : { kind: "lit", value: v.toString(), type: "int64" };
  }
  // NaN and ±Infinity are float64 values like any other (NaN equals NaN and sorts above every number).
  if (v === null || typeof v === "number" || typeof v === "string" || typeof v === "boolean")
    return { kind: "lit", value: v };
  if (v instanceof Date) {
    if (Number.isNaN(v.getTime()))
      throw new BasinError("BASIN_PLAN", "an Invalid Date given as a value; pass a valid Date", callerLocation());
    return { kind: "lit", value: v.toISOString().slice(0, 23).replace("T", " "), type: "timestamp" };
  }
  throw new BasinError(
    "BASIN_PLAN",
    `expected an expression or a number, BigInt, string, boolean, Date or null, got ${Array.isArray(v) ? "an array" : typeof v}`,
    callerLocation(),
  );
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

  add(o: ExprLike): Expr {
    return this.binary("add", o);
  }
  sub(o: ExprLike): Expr {
    return this.binary("sub", o);
  }
  mul(o: ExprLike): Expr {
    return this.binary("mul", o);
  }
  /** True division: always float64; division by zero gives null (as in DuckDB). */
  div(o: ExprLike): Expr {
    return this.binary("div", o);
  }
  mod(o: ExprLike): Expr {
    return this.binary("mod", o);
  }
  neg(): Expr {
    return this.unary("neg");
  }
  eq(o: ExprLike): Expr {
    return this.binary("eq", o);
  }
  ne(o: ExprLike): Expr {
    return this.binary("ne", o);
  }
  lt(o: ExprLike): Expr {
    return this.binary("lt", o);
  }
  le(o: ExprLike): Expr {
    return this.binary("le", o);
  }
  gt(o: ExprLike): Expr {
    return this.binary("gt", o);
  }
  ge(o: ExprLike): Expr {
    return this.binary("ge", o);
  }
  /** Three-valued logic: false AND null is false, true OR null is true. */
  and(o: ExprLike): Expr {
    return this.binary("and", o);
  }
  or(o: ExprLike): Expr {
    return this.binary("or", o);
  }
  not(): Expr {
    return this.unary("not");
  }
  isNull(): Expr {
    return this.unary("isNull");
  }
  isNotNull(): Expr {
    return this.unary("isNotNull");
  }
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
      throw new BasinError(
        "BASIN_PLAN",
        `cannot cast to "${String(to)}"; the types are ${DTYPES.join(", ")}`,
        callerLocation(),
      );
    return new Expr({
      kind: "cast",
      arg: this.node,
      to,
      ...(options.strict === false ? { strict: false } : {}),
      loc: callerLocation(),
    });
  }
  alias(name: string): Expr {
    if (typeof name !== "string" || name === "")
      throw new BasinError("BASIN_PLAN", "alias() needs a non-empty name", callerLocation());
    return new Expr({ kind: "alias", arg: this.node, name });
  }

  /** @internal A scalar function of this expression (and `more`); the .str and .dt namespaces build through it. */
  fn(name: FnName, options?: FnOptions, more: ExprLike[] = []): Expr {
    return new Expr({
      kind: "fn",
      name,
      args: [this.node, ...more.map(toNode)],
      ...(options ? { options } : {}),
      loc: callerLocation(),
    });
  }

  /**
   * String functions: `col("s").str.lower()`.
   *
   * @example
   * col("city").str.len()
   */
  get str(): ExprStr {
    return new ExprStr(this);
  }
  /**
   * Date and timestamp functions: `col("d").dt.year()`.
   *
   * @example
   * col("pickup").dt.hour()
   */
  get dt(): ExprDt {
    return new ExprDt(this);
  }

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
  abs(): Expr {
    return this.fn("abs");
  }
  /**
   * Rounds half away from zero to `decimals` places (negative: to tens, hundreds...), like
   * DuckDB round; integers stay integers.
   *
   * @example
   * col("fare").round(1)
   */
  round(decimals = 0): Expr {
    return this.fn("round", { decimals });
  }
  /**
   * Square root, float64. Math functions give null where the result is not a finite
   * number: sqrt of a negative, log of 0 or a negative, exp or pow overflowing (DuckDB
   * raises an error for sqrt and log there, and gives null for exp and pow).
   *
   * @example
   * col("area").sqrt()
   */
  sqrt(): Expr {
    return this.fn("sqrt");
  }
  /**
   * Natural logarithm, or to `base`; null for 0 and negatives (see sqrt).
   *
   * @example
   * col("v").log(10)
   */
  log(base?: number): Expr {
    return this.fn("log", { base: base ?? null });
  }
  /** e to the power of this; null on overflow. @example col("x").exp() */
  exp(): Expr {
    return this.fn("exp");
  }
  /**
   * This to the power `exponent`, float64; null where not a finite number (as in DuckDB).
   *
   * @example
   * col("x").pow(2)
   */
  pow(exponent: ExprLike): Expr {
    return this.fn("pow", undefined, [exponent]);
  }

  sum(): Expr {
    return this.agg("sum");
  }
  mean(): Expr {
    return this.agg("mean");
  }
  min(): Expr {
    return this.agg("min");
  }
  max(): Expr {
    return this.agg("max");
  }
  /** Number of non-null values. */
  count(): Expr {
    return this.agg("count");
  }
  /** Sample standard deviation (n − 1), like pandas and DuckDB. */
  std(): Expr {
    return this.agg("std");
  }
  /** Sample variance (n − 1). */
  var(): Expr {
    return this.agg("var");
  }
  median(): Expr {
    return this.agg("median");
  }
  nUnique(): Expr {
    return this.agg("nunique");
  }
  /** First non-null value in row order. */
  first(): Expr {
    return this.agg("first");
  }
  /** Last non-null value in row order. */
  last(): Expr {
    return this.agg("last");
  }

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
    if (typeof q !== "number" || !(q >= 0 && q <= 1))
      throw new BasinError("BASIN_PLAN", `quantile() needs q between 0 and 1, got ${String(q)}`, loc);
    const method = options?.method ?? "linear";
    if (method !== "linear")
      throw new BasinError("BASIN_PLAN", `quantile() method must be "linear", got ${JSON.stringify(method)}`, loc);
    return new Expr({ kind: "agg", op: "quantile", arg: this.node, q, loc });
  }

  private window(op: WindowOp, n = 0, minPeriods = 0): Expr {
    return new Expr({ kind: "window", op, arg: this.node, n, minPeriods, over: [], loc: callerLocation() });
  }

  /**
   * Running sum in the frame's row order (window functions follow the order rows have
   * at that point of the pipeline: partition order, or the order of a preceding sort).
   * Nulls are skipped: a null row gets the sum so far, and rows before the first
   * non-null value are null (DuckDB's `SUM(x) OVER (ROWS UNBOUNDED PRECEDING)`).
   *
   * @example
   * df.sort("day").withColumns({ total: col("sales").cumSum() })
   */
  cumSum(): Expr {
    return this.window("cumSum");
  }
  /**
   * Running minimum (numbers, dates, timestamps); nulls skipped as in cumSum().
   *
   * @example
   * df.withColumns({ low: col("price").cumMin() })
   */
  cumMin(): Expr {
    return this.window("cumMin");
  }
  /**
   * Running maximum (numbers, dates, timestamps); nulls skipped as in cumSum().
   *
   * @example
   * df.withColumns({ high: col("price").cumMax() })
   */
  cumMax(): Expr {
    return this.window("cumMax");
  }
  /**
   * Running count of non-null values (0 before the first one).
   *
   * @example
   * df.withColumns({ seen: col("x").cumCount() })
   */
  cumCount(): Expr {
    return this.window("cumCount");
  }
  /**
   * The value `n` rows earlier (a negative `n` looks `-n` rows ahead); null where that
   * row is outside the frame or the group. Like SQL LAG / LEAD.
   *
   * @example
   * df.withColumns({ prev: col("price").shift(), next: col("price").shift(-1) })
   */
  shift(n = 1): Expr {
    checkInteger("shift", n, -Infinity);
    return this.window("shift", n);
  }
  /**
   * This value minus the value `n` rows earlier (numbers): `x - x.shift(n)`.
   *
   * @example
   * df.withColumns({ change: col("price").diff() })
   */
  diff(n = 1): Expr {
    checkInteger("diff", n, -Infinity);
    return this.window("diff", n);
  }
  /**
   * A rolling window of the current row and the `n - 1` rows before it; finish with
   * `.sum() .mean() .min() .max()`. Nulls in the window are skipped; the result is null
   * until the window holds `minPeriods` non-null values (default `n`, like pandas and
   * Polars).
   *
   * @example
   * df.withColumns({ avg7: col("sales").rolling(7, { minPeriods: 1 }).mean() })
   */
  rolling(n: number, options: RollingOptions = {}): Rolling {
    checkInteger("rolling", n, 1);
    const minPeriods = options?.minPeriods ?? n;
    if (!Number.isInteger(minPeriods) || minPeriods < 1 || minPeriods > n)
      throw new BasinError(
        "BASIN_PLAN",
        `rolling() minPeriods must be an integer from 1 to the window size ${n}, got ${minPeriods}`,
        callerLocation(),
      );
    return new Rolling(this.node, n, minPeriods);
  }
  /**
   * Computes the window functions in this expression within groups of `keys` (rows
   * keep their order, and each group sees its rows in that order), like SQL
   * `OVER (PARTITION BY keys)`.
   *
   * @example
   * df.withColumns({ running: col("fare").cumSum().over("vendor") })
   */
  over(...keys: (string | Expr)[]): Expr {
    const loc = callerLocation();
    if (keys.length === 0)
      throw new BasinError("BASIN_PLAN", 'over() needs at least one key column, as in over("g")', loc);
    const nodes = keys.map((k): ExprNode => {
      if (typeof k === "string" && k !== "") return { kind: "col", name: k, loc };
      if (k instanceof Expr) return k.node;
      throw new BasinError("BASIN_PLAN", `over() takes column names or expressions, got ${JSON.stringify(k)}`, loc);
    });
    if (!containsWindow(this.node))
      throw new BasinError(
        "BASIN_PLAN",
        "over() applies to window functions (cumSum, cumMin, cumMax, cumCount, shift, diff, rolling); for a per-group aggregate use groupBy(...).agg(...)",
        loc,
      );
    // Every window inside without keys of its own, nested ones too, runs per group.
    const apply = (e: ExprNode): ExprNode =>
      e.kind === "window"
        ? { ...e, arg: apply(e.arg), over: e.over.length > 0 ? e.over : nodes }
        : mapChildren(e, apply);
    return new Expr(apply(this.node));
  }
}

export interface RollingOptions {
  /** Non-null values the window needs for a result; default the window size. */
  minPeriods?: number;
}

function checkInteger(fn: string, n: number, min: number): void {
  if (typeof n !== "number" || !Number.isInteger(n) || n < min)
    throw new BasinError(
      "BASIN_PLAN",
      `${fn}() needs ${min === 1 ? "a positive" : "an"} integer number of rows, got ${String(n)}`,
      callerLocation(),
    );
}

/**
 * A rolling window waiting for its aggregation.
 *
 * @example
 * col("x").rolling(3).mean()
 */
export class Rolling {
  /** @internal */
  constructor(
    private readonly arg: ExprNode,
    private readonly n: number,
    private readonly minPeriods: number,
  ) {}

  private agg(op: WindowOp): Expr {
    return new Expr({
      kind: "window",
      op,
      arg: this.arg,
      n: this.n,
      minPeriods: this.minPeriods,
      over: [],
      loc: callerLocation(),
    });
  }

  /** Sum of the window's non-null values. */
  sum(): Expr {
    return this.agg("rollingSum");
  }
  /** Mean of the window's non-null values (float64). */
  mean(): Expr {
    return this.agg("rollingMean");
  }
  /** Smallest non-null value in the window. */
  min(): Expr {
    return this.agg("rollingMin");
  }
  /** Largest non-null value in the window. */
  max(): Expr {
    return this.agg("rollingMax");
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
  if (typeof name !== "string" || name === "")
    throw new BasinError("BASIN_PLAN", "col() needs a column name", callerLocation());
  return new Expr({ kind: "col", name, loc: callerLocation() });
}

/**
 * A literal value. `type` fixes the type of a null or a number (a date or timestamp
 * number is days or microseconds since 1970), parses a date or timestamp string
 * (YYYY-MM-DD[ HH:MM[:SS[.ffffff]]], microseconds kept), and casts anything else.
 *
 * @example
 * df.withColumns({ one: lit(1), since: lit("2024-03-01 08:00:00.5", "timestamp") })
 */
export function lit(value: Scalar | Date | bigint, type?: DType): Expr {
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

/**
 * Concatenates strings (other types are cast to string); null when any part is null, like SQL `||`.
 *
 * @example
 * df.withColumns({ label: concatStr(col("city"), " #", col("id")) })
 */
export function concatStr(...parts: ExprLike[]): Expr {
  return new Expr({ kind: "fn", name: "concatStr", args: parts.map(exprNode), loc: callerLocation() });
}
