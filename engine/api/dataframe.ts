import { BasinError, type SourceLocation } from "../common/errors.js";
import { containsAgg, outputName, type AggOp } from "../common/expr.js";
import {
  PLAN_VERSION,
  type JoinHow,
  type JoinOutput,
  type NamedExpr,
  type Plan,
  type PlanNode,
} from "../common/plan.js";
import type { Field, Schema } from "../common/types.js";
import { aggParts, fieldIndex, resolveExpr } from "../plan/resolve.js";
import { explainPlan } from "../run/explain.js";
import { planWindows } from "../plan/windows.js";
import type { OptimizeOptions } from "../plan/passes/pass.js";
import type { ComputeOptions } from "../run/stored.js";
import { runPlan } from "../run/run_plan.js";
import { persistNode, type PersistOptions } from "../run/persist.js";
import { col, Expr, exprNode, type ExprLike } from "./expr.js";
import { splitAggregations } from "./agg_split.js";
import { callerLocation } from "./source_location.js";
import type { Table } from "../run/table.js";
import { describeNode, corrNode } from "./frame_stats.js";
import {
  dropNode,
  dropNullsNode,
  fillNullNode,
  renameNode,
  sampleNode,
  tailNode,
  topKNode,
  uniqueNode,
  valueCounts,
  type FillSpec,
  type SampleOptions,
  type SampleSize,
  type TopKOptions,
  type UniqueOptions,
  type ValueCountsOptions,
} from "./frame_rows.js";
import { writeFrame, type WriteParquetFrameOptions } from "../run/write_frame.js";
import type { WriteSummary } from "../io/write.js";
import { frameToArray, type FromDataFrameOptions } from "./array/from_frame.js";
import type { NDArray } from "./array/ndarray.js";

const AGG_OPS: readonly AggOp[] = [
  "sum",
  "mean",
  "min",
  "max",
  "count",
  "std",
  "var",
  "median",
  "nunique",
  "first",
  "last",
];

function plan(message: string, loc: SourceLocation | undefined): never {
  throw new BasinError("BASIN_PLAN", message, loc);
}

function toExpr(item: string | Expr, loc: SourceLocation | undefined): Expr {
  if (typeof item === "string") return col(item);
  if (item instanceof Expr) return item;
  return plan(`expected a column name or an expression, got ${typeof item}`, loc);
}

function named(items: (string | Expr)[], loc: SourceLocation | undefined): NamedExpr[] {
  const out = items.map((item) => {
    const expr = toExpr(item, loc).node;
    const name = outputName(expr);
    if (name === undefined) plan(`give the expression a name with .alias("...")`, loc);
    return { name, expr };
  });
  const seen = new Set<string>();
  for (const { name } of out) {
    if (seen.has(name)) plan(`two output columns are named "${name}"; rename one with .alias("...")`, loc);
    seen.add(name);
  }
  return out;
}

/**
 * A lazy, immutable, partitioned table. Methods build a plan and validate it at
 * once; nothing runs until `compute()`.
 *
 * @example
 * const out = await readCsv("trips/*.csv")
 *   .filter(col("fare").gt(0))
 *   .groupBy("vendor")
 *   .agg(col("fare").mean().alias("mean_fare"))
 *   .compute();
 */
export class DataFrame {
  /** Set on a frame persist() returned: frees its stored partitions. */
  private releaseStored?: () => void;

  /** @internal */
  constructor(readonly node: PlanNode) {}

  get schema(): Schema {
    return this.node.schema;
  }

  get columns(): string[] {
    return this.node.schema.map((f) => f.name);
  }

  /** Keeps the given columns or expressions; aggregations here reduce the whole frame to one row. */
  select(...items: (string | Expr)[]): DataFrame {
    const loc = callerLocation();
    if (items.length === 0) plan("select() needs at least one column", loc);
    const exprs = named(items, loc);
    const aggs = exprs.filter((e) => containsAgg(e.expr));
    if (aggs.length > 0 && aggs.length < exprs.length)
      plan("select() mixes aggregations and plain columns; use groupBy(...).agg(...) to aggregate per group", loc);
    if (aggs.length > 0) return this.aggregate([], exprs, loc);
    return this.project(exprs, loc);
  }

  /** Adds or replaces columns; existing columns keep their place. */
  withColumns(columns: Record<string, ExprLike>): DataFrame {
    const loc = callerLocation();
    if (typeof columns !== "object" || columns === null || columns instanceof Expr)
      plan(
        'withColumns() takes an object of name → expression, as in withColumns({ total: col("a").add(col("b")) })',
        loc,
      );
    const added = new Map(Object.entries(columns).map(([name, e]) => [name, exprNode(e)] as const));
    const exprs: NamedExpr[] = this.columns.map((name) => ({ name, expr: added.get(name) ?? { kind: "col", name } }));
    for (const [name, expr] of added) if (!this.columns.includes(name)) exprs.push({ name, expr });
    return this.project(exprs, loc);
  }

  /** Keeps the rows where `predicate` is true; null counts as false. */
  filter(predicate: Expr): DataFrame {
    const loc = callerLocation();
    if (!(predicate instanceof Expr)) plan('filter() takes a bool expression, as in filter(col("x").gt(0))', loc);
    const resolved = resolveExpr(predicate.node, this.schema, loc);
    if (resolved.type !== "bool") plan(`filter() needs a bool expression, but it is ${resolved.type}`, loc);
    return new DataFrame({
      kind: "filter",
      input: this.node,
      predicate: predicate.node,
      schema: this.node.schema,
      loc,
    });
  }

  /** Groups by columns or expressions; finish with `.agg(...)`. */
  groupBy(...keys: (string | Expr)[]): GroupBy {
    const loc = callerLocation();
    if (keys.length === 0) plan("groupBy() needs at least one key; to aggregate everything use agg() or select()", loc);
    const named_ = named(keys, loc);
    for (const k of named_) {
      if (containsAgg(k.expr)) plan(`a group key cannot be an aggregation: "${k.name}"`, loc);
      resolveExpr(k.expr, this.schema, loc);
    }
    return new GroupBy(this, named_);
  }

  /** Aggregates the whole frame to one row: `df.agg(col("x").sum())` or `df.agg({ x: "sum" })`. */
  agg(...aggs: AggSpec[]): DataFrame {
    const loc = callerLocation();
    return this.aggregate([], aggExprs(aggs, loc), loc);
  }

  /** The first `n` rows, in partition order. */
  head(n = 5): DataFrame {
    const loc = callerLocation();
    if (!Number.isInteger(n) || n < 0) plan(`head() needs a non-negative integer, got ${n}`, loc);
    return new DataFrame({ kind: "head", input: this.node, n, schema: this.node.schema, loc });
  }

  /**
   * Joins with another frame on key columns (null keys never match). Right
   * columns whose names clash with left ones get `suffix`; with `on`, the right
   * keys are not repeated (and outer/right joins coalesce them).
   */
  join(other: DataFrame, options: JoinOptions): DataFrame {
    const loc = callerLocation();
    if (!(other instanceof DataFrame)) plan("join() needs another frame as its first argument", loc);
    const how = options?.how ?? "inner";
    if (!JOIN_HOWS.includes(how))
      plan(`join how must be one of ${JOIN_HOWS.join(", ")}, got ${JSON.stringify(how)}`, loc);
    const list = (v: string | string[] | undefined) => (v === undefined ? undefined : Array.isArray(v) ? v : [v]);
    const on = list(options?.on);
    const leftOn = on ?? list(options?.leftOn);
    const rightOn = on ?? list(options?.rightOn);
    if (!leftOn || !rightOn || leftOn.length === 0)
      plan('join() needs keys: { on: "id" } or { leftOn: "a", rightOn: "b" }', loc);
    if (on && (options.leftOn || options.rightOn)) plan("join() takes either on or leftOn/rightOn, not both", loc);
    if (leftOn.length !== rightOn.length)
      plan(`join() needs as many leftOn keys (${leftOn.length}) as rightOn keys (${rightOn.length})`, loc);
    leftOn.forEach((l, i) => {
      const lt = this.schema[fieldIndex(this.schema, l, loc)].type;
      const rt = other.schema[fieldIndex(other.schema, rightOn[i], loc)].type;
      if (lt !== rt)
        plan(
          `join keys must have one type, but left "${l}" is ${lt} and right "${rightOn[i]}" is ${rt}; cast one with withColumns`,
          loc,
        );
    });
    const suffix = options?.suffix ?? "_right";
    const output: JoinOutput[] = this.columns.map((name) => {
      const k = on ? on.indexOf(name) : -1;
      return k >= 0 && (how === "right" || how === "outer")
        ? { side: "key" as const, source: k, name }
        : { side: "left" as const, source: name, name };
    });
    if (how !== "semi" && how !== "anti") {
      for (const name of other.columns) {
        if (on?.includes(name)) continue;
        const out = this.columns.includes(name) ? `${name}${suffix}` : name;
        if (output.some((o) => o.name === out))
          plan(`join output would have two columns named "${out}"; pass another suffix`, loc);
        output.push({ side: "right", source: name, name: out });
      }
    }
    const typeOf = (o: JoinOutput) =>
      (o.side === "right"
        ? other.schema[fieldIndex(other.schema, o.source)]
        : this.schema[fieldIndex(this.schema, o.side === "key" ? leftOn[o.source] : o.source)]
      ).type;
    const schema: Field[] = output.map((o) => ({ name: o.name, type: typeOf(o) }));
    return new DataFrame({
      kind: "join",
      left: this.node,
      right: other.node,
      how,
      leftOn,
      rightOn,
      output,
      schema,
      loc,
    });
  }

  /** Sorts by columns (stable); nulls last unless `nullsFirst`. */
  sort(by: string | string[], options: SortOptions = {}): DataFrame {
    const loc = callerLocation();
    const names = Array.isArray(by) ? by : [by];
    if (names.length === 0) plan("sort() needs at least one column", loc);
    const pick = (v: boolean | boolean[] | undefined, i: number, what: string): boolean => {
      if (Array.isArray(v)) {
        if (v.length !== names.length) plan(`sort() ${what} has ${v.length} values for ${names.length} columns`, loc);
        return v[i];
      }
      return v ?? false;
    };
    const keys = names.map((name, i) => {
      if (typeof name !== "string") plan("sort() takes column names; compute expressions with withColumns first", loc);
      fieldIndex(this.schema, name, loc);
      return {
        name,
        descending: pick(options.descending, i, "descending"),
        nullsFirst: pick(options.nullsFirst, i, "nullsFirst"),
      };
    });
    return new DataFrame({ kind: "sort", input: this.node, keys, schema: this.node.schema, loc });
  }

  sum(): DataFrame {
    return this.reduceAll("sum", callerLocation());
  }
  mean(): DataFrame {
    return this.reduceAll("mean", callerLocation());
  }
  min(): DataFrame {
    return this.reduceAll("min", callerLocation());
  }
  max(): DataFrame {
    return this.reduceAll("max", callerLocation());
  }
  /** Non-null values per column. */
  count(): DataFrame {
    return this.reduceAll("count", callerLocation());
  }
  std(): DataFrame {
    return this.reduceAll("std", callerLocation());
  }
  var(): DataFrame {
    return this.reduceAll("var", callerLocation());
  }
  median(): DataFrame {
    return this.reduceAll("median", callerLocation());
  }
  nUnique(): DataFrame {
    return this.reduceAll("nunique", callerLocation());
  }

  /**
   * One row per distinct value of `subset` (default: all columns). With keep "first"
   * (default) each key keeps its first row in frame order; "any" may keep another.
   * Rows come out grouped by key hash, not in frame order.
   *
   * @example
   * df.unique(["id1", "id2"])
   */
  unique(subset?: string | string[], options?: UniqueOptions): DataFrame {
    return new DataFrame(uniqueNode(this, subset, options, callerLocation()));
  }

  /**
   * The same as `unique()`.
   *
   * @example
   * df.dropDuplicates("email")
   */
  dropDuplicates(subset?: string | string[], options?: UniqueOptions): DataFrame {
    return new DataFrame(uniqueNode(this, subset, options, callerLocation()));
  }

  /**
   * The number of rows per distinct value of `columns`, in a column "count"; sorted by
   * count, largest first, ties by the values ascending (nulls last), unless `sort: false`.
   *
   * @example
   * df.valueCounts("city") // city, count
   */
  valueCounts(columns: string | string[], options?: ValueCountsOptions): DataFrame {
    return valueCounts(this, columns, options, callerLocation());
  }

  /**
   * Drops the rows with a null in any of `subset` (default: any column).
   *
   * @example
   * df.dropNulls(["fare", "tip"])
   */
  dropNulls(subset?: string | string[]): DataFrame {
    return new DataFrame(dropNullsNode(this, subset, callerLocation()));
  }

  /**
   * Replaces nulls: a number fills every numeric column, a string every string column,
   * a bool every bool column; `{ column: value }` fills just those columns (a value may
   * be an expression).
   *
   * @example
   * df.fillNull(0).fillNull({ city: "unknown" })
   */
  fillNull(value: FillSpec): DataFrame {
    return new DataFrame(fillNullNode(this, value, callerLocation()));
  }

  /**
   * Renames columns; renaming onto a name that stays in the frame is an error.
   *
   * @example
   * df.rename({ fare: "fare_usd" })
   */
  rename(mapping: Record<string, string>): DataFrame {
    return new DataFrame(renameNode(this, mapping, callerLocation()));
  }

  /**
   * Every column but these.
   *
   * @example
   * df.drop("tmp", "debug")
   */
  drop(...columns: (string | string[])[]): DataFrame {
    return new DataFrame(dropNode(this, columns, callerLocation()));
  }

  /**
   * The last `n` rows, in partition order.
   *
   * @example
   * df.tail(10)
   */
  tail(n = 5): DataFrame {
    return new DataFrame(tailNode(this, n, callerLocation()));
  }

  /**
   * A random sample without replacement, in frame order: exactly `n` rows (every row
   * when there are fewer), or each row independently with probability `fraction`.
   * Every row gets a pseudo-random key from the seed, its partition and its place in
   * it: the same seed over the same input (same files, blocksize or partitions) gives
   * the same rows on every run and any number of workers. The seed defaults to 0.
   *
   * @example
   * df.sample({ n: 1000 }, { seed: 42 })
   * df.sample({ fraction: 0.01 }, { seed: 7 })
   */
  sample(size: SampleSize, options?: SampleOptions): DataFrame {
    return new DataFrame(sampleNode(this, size, options, callerLocation()));
  }

  /**
   * The `k` rows with the largest `by` (smallest with `descending: false`), best
   * first; nulls never count, ties go to the earlier row.
   *
   * @example
   * df.topK(10, "fare")
   */
  topK(k: number, by: string, options?: TopKOptions): DataFrame {
    return new DataFrame(topKNode(this, [], k, by, options, callerLocation()));
  }

  /**
   * Summary statistics: one row per statistic (count, null_count, mean, std, min, 25%,
   * 50%, 75%, max) in a first column "statistic", one column per numeric column
   * (float64) and per date/timestamp column (ISO strings; std is null). Percentiles
   * interpolate linearly, as quantile().
   *
   * @example
   * await df.describe().compute()
   */
  describe(): DataFrame {
    return new DataFrame(describeNode(this, callerLocation()));
  }

  /**
   * Pearson's correlation of every pair of numeric columns: a first column "column"
   * naming the row's column, then one float64 column per numeric column.
   *
   * @example
   * await df.select("v1", "v2", "v3").corr().compute()
   */
  corr(): DataFrame {
    return new DataFrame(corrNode(this, callerLocation()));
  }

  /** The plan as plain, versioned JSON. */
  toPlan(): Plan {
    return { version: PLAN_VERSION, root: this.node };
  }

  /**
   * The optimized plan, as text; shuffles that run out of core under the cluster's
   * memory limit (default: the default cluster's) say how they are partitioned.
   */
  explain(options: { optimize?: OptimizeOptions; cluster?: ComputeOptions["cluster"] } = {}): string {
    return explainPlan(this.node, options);
  }

  /** Runs the pipeline on the cluster and returns the result in JS memory. */
  compute(options: ComputeOptions = {}): Promise<Table> {
    return runPlan({ kind: "frame", plan: this.toPlan() }, options);
  }

  /**
   * Runs the pipeline once and keeps the result in memory (the engine's store) as
   * `partitions` tables; pipelines over the returned frame start from there, and GPU
   * workers keep its columns on the device between them. Free it with `unpersist()`.
   *
   * @example
   * const x = await readCsv("G1_1e7.csv").persist({ partitions: 16 });
   * await x.groupBy("id1").agg(col("v1").sum()).compute();
   * x.unpersist();
   */
  async persist(options: PersistOptions = {}): Promise<DataFrame> {
    const p = await persistNode(this.node, options, callerLocation());
    const df = new DataFrame(p.node);
    df.releaseStored = p.release;
    return df;
  }

  /** Frees what persist() kept (only on the frame persist() returned; others do nothing). */
  unpersist(): void {
    this.releaseStored?.();
  }

  /**
   * Runs the pipeline and writes the result to one CSV file (header row; nulls as
   * empty fields, empty strings as ""), through a temporary file renamed when done.
   *
   * @example
   * const { rows, bytes } = await df.writeCsv("out/result.csv");
   */
  writeCsv(path: string, options: ComputeOptions = {}): Promise<WriteSummary> {
    return writeFrame(this.toPlan(), path, "csv", options, callerLocation());
  }

  /**
   * Runs the pipeline and writes the result to one Parquet file (snappy by default),
   * through a temporary file renamed when done.
   *
   * @example
   * await df.writeParquet("out/result.parquet", { compression: "zstd", rowGroupSize: 100_000 });
   */
  writeParquet(path: string, options: WriteParquetFrameOptions = {}): Promise<WriteSummary> {
    return writeFrame(this.toPlan(), path, "parquet", options, callerLocation());
  }

  /**
   * Runs the pipeline and writes the result to one Arrow IPC file (one record batch
   * per chunk), through a temporary file renamed when done.
   *
   * @example
   * await df.writeArrow("out/result.arrow");
   */
  writeArrow(path: string, options: ComputeOptions = {}): Promise<WriteSummary> {
    return writeFrame(this.toPlan(), path, "arrow", options, callerLocation());
  }

  /**
   * Runs the pipeline and returns its numeric columns as a 2-D float64 array, one
   * chunk of rows per partition; nulls become NaN (see array.fromDataFrame).
   *
   * @example
   * const x = await trips.toArray({ columns: ["distance", "fare"] });
   */
  toArray(options: FromDataFrameOptions = {}): Promise<NDArray> {
    return frameToArray(this, options, callerLocation());
  }

  private project(exprs: NamedExpr[], loc: SourceLocation | undefined): DataFrame {
    // Window functions run in window nodes below; the projection reads their columns.
    const { input, exprs: rest } = planWindows(this.node, exprs, loc);
    const schema: Field[] = rest.map(({ name, expr }) => ({ name, type: resolveExpr(expr, input.schema, loc).type }));
    return new DataFrame({ kind: "project", input, exprs: rest, schema, loc });
  }

  /** @internal */
  aggregate(keys: NamedExpr[], aggs: NamedExpr[], loc: SourceLocation | undefined): DataFrame {
    if (aggs.length === 0) plan('agg() needs at least one aggregation, as in agg(col("x").sum())', loc);
    const split = splitAggregations(keys, aggs, loc);
    if (split.outer) return this.aggregate(keys, split.inner, loc).project(split.outer, loc);
    const schema: Field[] = keys.map(({ name, expr }) => ({ name, type: resolveExpr(expr, this.schema, loc).type }));
    for (const a of aggs) {
      if (schema.some((f) => f.name === a.name))
        plan(`the aggregation "${a.name}" has the name of another output column; rename it with .alias("...")`, loc);
      schema.push({ name: a.name, type: aggParts(a.expr, a.name, this.schema, loc).type });
    }
    return new DataFrame({ kind: "aggregate", input: this.node, keys, aggs, schema, loc });
  }

  private reduceAll(op: AggOp, loc: SourceLocation | undefined): DataFrame {
    const numericOnly = op === "sum" || op === "mean" || op === "std" || op === "var" || op === "median";
    const fields = this.schema.filter((f) => !numericOnly || f.type === "int64" || f.type === "float64");
    if (fields.length === 0)
      plan(`${op}() needs at least one numeric column; the columns are ${this.columns.join(", ")}`, loc);
    const exprs: NamedExpr[] = fields.map((f) => ({
      name: f.name,
      expr: { kind: "agg", op, arg: { kind: "col", name: f.name } },
    }));
    return this.aggregate([], exprs, loc);
  }
}

const JOIN_HOWS: readonly JoinHow[] = ["inner", "left", "right", "outer", "semi", "anti"];

/** How to join: keys by `on` (same names) or `leftOn`/`rightOn`. */
export interface JoinOptions {
  on?: string | string[];
  leftOn?: string | string[];
  rightOn?: string | string[];
  /** Default "inner". */
  how?: JoinHow;
  /** Appended to right column names that clash with left ones (default "_right"). */
  suffix?: string;
}

export interface SortOptions {
  /** One flag for all keys, or one per key. */
  descending?: boolean | boolean[];
  nullsFirst?: boolean | boolean[];
}

/** An aggregation expression, or `{ column: "sum" | ["sum", "mean"] }`. */
export type AggSpec = Expr | Record<string, AggOp | AggOp[]>;

function aggExprs(specs: AggSpec[], loc: SourceLocation | undefined): NamedExpr[] {
  const out: (string | Expr)[] = [];
  for (const spec of specs) {
    if (spec instanceof Expr) {
      out.push(spec);
      continue;
    }
    if (typeof spec !== "object" || spec === null)
      plan('agg() takes expressions like col("x").sum() or an object like { x: "sum" }', loc);
    for (const [column, ops] of Object.entries(spec)) {
      const list = Array.isArray(ops) ? ops : [ops];
      for (const op of list) {
        if (!AGG_OPS.includes(op))
          plan(`unknown aggregation "${String(op)}" for column "${column}"; use one of ${AGG_OPS.join(", ")}`, loc);
        const e = new Expr({ kind: "agg", op, arg: { kind: "col", name: column, loc }, loc });
        out.push(list.length > 1 ? e.alias(`${column}_${op}`) : e.alias(column));
      }
    }
  }
  return named(out, loc);
}

/**
 * A grouped frame, waiting for its aggregations.
 *
 * @example
 * df.groupBy("id1", "id2").agg(col("v1").sum(), count().alias("n"))
 */
export class GroupBy {
  /** @internal */
  constructor(
    private readonly frame: DataFrame,
    private readonly keys: NamedExpr[],
  ) {}

  agg(...aggs: AggSpec[]): DataFrame {
    const loc = callerLocation();
    return this.frame.aggregate(this.keys, aggExprs(aggs, loc), loc);
  }

  /**
   * Per group, the `k` rows with the largest `by` (smallest with `descending: false`),
   * best first; nulls never count, ties go to the earlier row. Columns: the keys, then
   * the rest of the row.
   *
   * @example
   * df.groupBy("id6").topK(2, "v3") // db-benchmark q8
   */
  topK(k: number, by: string, options?: TopKOptions): DataFrame {
    return new DataFrame(topKNode(this.frame, this.keys, k, by, options, callerLocation()));
  }
}
