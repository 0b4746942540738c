// The logic of DataFrame's row operations (unique, dropNulls, fillNull, rename, drop,
// tail, sample, topK, valueCounts): validation, then a plan node. DataFrame's methods
// stay thin wrappers that capture the caller's location.
import { BasinError, type SourceLocation } from "../common/errors.js";
import type { ExprNode, Scalar } from "../common/expr.js";
import type { NamedExpr, PlanNode } from "../common/plan.js";
import { isNumeric, type DType, type Field, type Schema } from "../common/types.js";
import { fieldIndex, resolveExpr } from "../plan/resolve.js";
import type { DataFrame } from "./dataframe.js";
import { count, Expr, exprNode, type ExprLike } from "./expr.js";
import { own } from "../common/own.js";

function fail(message: string, loc: SourceLocation | undefined): never {
  throw new BasinError("BASIN_PLAN", message, loc);
}

/** Column names from `one` or `[one, ...]`, each checked to exist; duplicates dropped. */
export function columnList(
  schema: Schema,
  names: string | string[],
  what: string,
  loc: SourceLocation | undefined,
): string[] {
  const list = Array.isArray(names) ? names : [names];
  if (list.length === 0) fail(`${what}() needs at least one column`, loc);
  for (const n of list) {
    if (typeof n !== "string") fail(`${what}() takes column names, got ${typeof n}`, loc);
    fieldIndex(schema, n, loc);
  }
  return [...new Set(list)];
}

function colNode(name: string): ExprNode {
  return { kind: "col", name };
}

function project(df: DataFrame, exprs: NamedExpr[], loc: SourceLocation | undefined): PlanNode {
  const schema: Field[] = exprs.map(({ name, expr }) => ({ name, type: resolveExpr(expr, df.schema, loc).type }));
  return { kind: "project", input: df.node, exprs, schema, loc };
}

function checkCount(n: unknown, what: string, loc: SourceLocation | undefined): number {
  if (typeof n !== "number" || !Number.isInteger(n) || n < 0)
    fail(`${what}() needs a non-negative integer, got ${String(n)}`, loc);
  return n;
}

/** Options of `unique()`. */
export interface UniqueOptions {
  /** "first" (default): the first row of each key in frame order; "any": whichever is cheapest. */
  keep?: "first" | "any";
}

export function uniqueNode(
  df: DataFrame,
  subset: string | string[] | undefined,
  options: UniqueOptions | undefined,
  loc: SourceLocation | undefined,
): PlanNode {
  const keys = subset === undefined ? df.columns : columnList(df.schema, subset, "unique", loc);
  const keep = options?.keep ?? "first";
  if (keep !== "first" && keep !== "any")
    fail(`unique() keep must be "first" or "any", got ${JSON.stringify(keep)}`, loc);
  return { kind: "distinct", input: df.node, keys, keep, schema: df.node.schema, loc };
}

export function dropNullsNode(
  df: DataFrame,
  subset: string | string[] | undefined,
  loc: SourceLocation | undefined,
): PlanNode {
  const names = subset === undefined ? df.columns : columnList(df.schema, subset, "dropNulls", loc);
  const tests: ExprNode[] = names.map((name) => ({ kind: "unary", op: "isNotNull", arg: colNode(name), loc }));
  const predicate = tests.reduce((a, b) => ({ kind: "binary", op: "and", left: a, right: b, loc }));
  return { kind: "filter", input: df.node, predicate, schema: df.node.schema, loc };
}

/** A fill value for every column of its type, or fills by column name. */
export type FillSpec = Scalar | Record<string, ExprLike>;

function fillsType(value: Scalar, t: DType): boolean {
  if (typeof value === "number") return isNumeric(t);
  if (typeof value === "string") return t === "string";
  return typeof value === "boolean" && t === "bool";
}

export function fillNullNode(df: DataFrame, spec: FillSpec, loc: SourceLocation | undefined): PlanNode {
  const fills = new Map<string, ExprNode>();
  if (typeof spec === "object" && spec !== null && !(spec instanceof Expr)) {
    for (const [name, value] of Object.entries(spec)) {
      fieldIndex(df.schema, name, loc);
      fills.set(name, exprNode(value));
    }
  } else {
    if (spec === null || (typeof spec !== "number" && typeof spec !== "string" && typeof spec !== "boolean"))
      fail("fillNull() takes a number, string or bool (filling every column of that type) or { column: value }", loc);
    if (typeof spec === "number" && !Number.isFinite(spec))
      fail(`fillNull() value ${spec} is not a finite number`, loc);
    for (const f of df.schema) if (fillsType(spec, f.type)) fills.set(f.name, { kind: "lit", value: spec });
  }
  if (fills.size === 0) return df.node;
  const exprs: NamedExpr[] = df.columns.map((name) => {
    const fill = fills.get(name);
    return { name, expr: fill ? { kind: "fillNull", arg: colNode(name), fill, loc } : colNode(name) };
  });
  return project(df, exprs, loc);
}

export function renameNode(df: DataFrame, mapping: Record<string, string>, loc: SourceLocation | undefined): PlanNode {
  if (typeof mapping !== "object" || mapping === null || Array.isArray(mapping))
    fail('rename() takes an object of old → new names, as in rename({ fare: "fare_usd" })', loc);
  for (const [from, to] of Object.entries(mapping)) {
    fieldIndex(df.schema, from, loc);
    if (typeof to !== "string" || to === "") fail(`rename() needs a non-empty new name for "${from}"`, loc);
  }
  const names = df.columns.map((n) => own(mapping, n) ?? n);
  names.forEach((name, i) => {
    if (names.indexOf(name) !== i) {
      const renamed = df.columns[i] !== name ? df.columns[i] : df.columns[names.indexOf(name)];
      fail(
        `cannot rename "${renamed}" to "${name}": the frame would have two columns named "${name}"; drop or rename the other one first`,
        loc,
      );
    }
  });
  return project(
    df,
    df.columns.map((n, i) => ({ name: names[i], expr: colNode(n) })),
    loc,
  );
}

export function dropNode(df: DataFrame, columns: (string | string[])[], loc: SourceLocation | undefined): PlanNode {
  const gone = new Set(columnList(df.schema, columns.flat(), "drop", loc));
  const kept = df.columns.filter((n) => !gone.has(n));
  if (kept.length === 0) fail("drop() would leave no columns; keep at least one", loc);
  return project(
    df,
    kept.map((n) => ({ name: n, expr: colNode(n) })),
    loc,
  );
}

export function tailNode(df: DataFrame, n: number, loc: SourceLocation | undefined): PlanNode {
  return { kind: "tail", input: df.node, n: checkCount(n, "tail", loc), schema: df.node.schema, loc };
}

/** How many rows `sample()` takes: exactly `n` (all when fewer), or each with probability `fraction`. */
export type SampleSize = { n: number } | { fraction: number };

export interface SampleOptions {
  /** Same seed and same input (files, partitioning) → same rows. Default 0. */
  seed?: number;
}

export function sampleNode(
  df: DataFrame,
  size: SampleSize,
  options: SampleOptions | undefined,
  loc: SourceLocation | undefined,
): PlanNode {
  const seed = options?.seed ?? 0;
  if (!Number.isSafeInteger(seed) || seed < 0)
    fail(`sample() seed must be a non-negative integer, got ${String(seed)}`, loc);
  const base = { kind: "sample" as const, input: df.node, seed, schema: df.node.schema, loc };
  if (typeof size === "object" && size !== null && "n" in size)
    return { ...base, n: checkCount(size.n, "sample", loc) };
  if (typeof size === "object" && size !== null && "fraction" in size) {
    const f = size.fraction;
    if (typeof f !== "number" || !(f >= 0 && f <= 1))
      fail(`sample() fraction must be between 0 and 1, got ${String(f)}`, loc);
    return { ...base, fraction: f };
  }
  return fail("sample() takes { n: rows } or { fraction: 0..1 }", loc);
}

export interface TopKOptions {
  /** true (default): the largest values; false: the smallest. */
  descending?: boolean;
}

export function topKNode(
  df: DataFrame,
  keys: NamedExpr[],
  k: number,
  by: string,
  options: TopKOptions | undefined,
  loc: SourceLocation | undefined,
): PlanNode {
  if (typeof k !== "number" || !Number.isInteger(k) || k < 1)
    fail(`topK() needs k >= 1 rows per group, got ${String(k)}`, loc);
  if (typeof by !== "string") fail('topK() takes the column to rank by as a name, as in topK(2, "v3")', loc);
  fieldIndex(df.schema, by, loc);
  const schema: Field[] = keys.map((key) => ({ name: key.name, type: resolveExpr(key.expr, df.schema, loc).type }));
  for (const f of df.schema) if (!keys.some((key) => key.name === f.name)) schema.push(f);
  return { kind: "topK", input: df.node, keys, by, k, descending: options?.descending ?? true, schema, loc };
}

export interface ValueCountsOptions {
  /** Sort by count, largest first, ties by the columns ascending (default true). */
  sort?: boolean;
}

export function valueCounts(
  df: DataFrame,
  columns: string | string[],
  options: ValueCountsOptions | undefined,
  loc: SourceLocation | undefined,
): DataFrame {
  const names = columnList(df.schema, columns, "valueCounts", loc);
  if (names.includes("count"))
    fail(
      'valueCounts() names its result column "count", which is one of the counted columns; rename that column first',
      loc,
    );
  const counted = df.aggregate(
    names.map((name) => ({ name, expr: colNode(name) })),
    [{ name: "count", expr: count().node }],
    loc,
  );
  if (options?.sort === false) return counted;
  return counted.sort(["count", ...names], { descending: [true, ...names.map(() => false)] });
}
