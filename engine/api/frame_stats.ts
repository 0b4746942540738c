// DataFrame.describe() and DataFrame.corr(): one aggregation over the whole frame,
// whose single row is then stacked into one row per statistic (or per column).
import { BasinError, type SourceLocation } from "../common/errors.js";
import type { AggOp, ExprNode } from "../common/expr.js";
import type { NamedExpr, PlanNode } from "../common/plan.js";
import { isNumeric, type DType, type Field } from "../common/types.js";
import { resolveExpr } from "../plan/resolve.js";
import type { DataFrame } from "./dataframe.js";

const col = (name: string): ExprNode => ({ kind: "col", name });
const lit = (value: string | null, type: DType = "string"): ExprNode => ({ kind: "lit", value, type });
const cast = (arg: ExprNode, to: DType): ExprNode => ({ kind: "cast", arg, to });
const agg = (op: AggOp, arg: ExprNode | null, extra: { q?: number; arg2?: ExprNode } = {}): ExprNode => ({
  kind: "agg",
  op,
  arg,
  ...extra,
});

/** Stacks blocks of expressions over the one-row aggregate `input`. */
function stack(input: DataFrame, blocks: NamedExpr[][], loc: SourceLocation | undefined): PlanNode {
  const schema: Field[] = blocks[0].map(({ name, expr }) => ({
    name,
    type: resolveExpr(expr, input.schema, loc).type,
  }));
  return { kind: "stack", input: input.node, blocks, schema, loc };
}

/** The statistics of describe(), in row order. */
export const DESCRIBE_STATISTICS = ["count", "null_count", "mean", "std", "min", "25%", "50%", "75%", "max"] as const;

export function describeNode(df: DataFrame, loc: SourceLocation | undefined): PlanNode {
  const fields = df.schema.filter((f) => isNumeric(f.type) || f.type === "date" || f.type === "timestamp");
  if (fields.length === 0)
    throw new BasinError(
      "BASIN_PLAN",
      `describe() needs a numeric or date column; the columns are ${df.columns.join(", ")}`,
      loc,
    );
  if (fields.some((f) => f.name === "statistic"))
    throw new BasinError(
      "BASIN_PLAN",
      'describe() names its first column "statistic", like a column of this frame; rename that column first',
      loc,
    );
  const rows = "__describe_rows";
  const aggs: NamedExpr[] = [{ name: rows, expr: agg("count", null) }];
  const stat = (i: number, s: string) => `__describe_${i}_${s}`;
  fields.forEach((f, i) => {
    // Dates and timestamps are averaged and ranked as day / microsecond numbers.
    const x = isNumeric(f.type) ? col(f.name) : cast(col(f.name), "int64");
    aggs.push(
      { name: stat(i, "count"), expr: agg("count", col(f.name)) },
      { name: stat(i, "mean"), expr: agg("mean", x) },
      { name: stat(i, "std"), expr: agg("std", x) },
      { name: stat(i, "min"), expr: agg("min", col(f.name)) },
      { name: stat(i, "25%"), expr: agg("quantile", x, { q: 0.25 }) },
      { name: stat(i, "50%"), expr: agg("quantile", x, { q: 0.5 }) },
      { name: stat(i, "75%"), expr: agg("quantile", x, { q: 0.75 }) },
      { name: stat(i, "max"), expr: agg("max", col(f.name)) },
    );
  });
  const reduced = df.aggregate([], aggs, loc);
  // Numeric columns come out as float64; date and timestamp columns as ISO strings.
  const cell = (f: Field, i: number, s: (typeof DESCRIBE_STATISTICS)[number]): ExprNode => {
    const v =
      s === "null_count"
        ? ({ kind: "binary", op: "sub", left: col(rows), right: col(stat(i, "count")) } as ExprNode)
        : col(stat(i, s));
    if (isNumeric(f.type)) return cast(v, "float64");
    if (s === "std") return lit(null);
    if (s === "count" || s === "null_count" || s === "min" || s === "max") return cast(v, "string");
    return cast(cast(v, f.type), "string");
  };
  const blocks = DESCRIBE_STATISTICS.map((s): NamedExpr[] => [
    { name: "statistic", expr: lit(s) },
    ...fields.map((f, i) => ({ name: f.name, expr: cell(f, i, s) })),
  ]);
  return stack(reduced, blocks, loc);
}

export function corrNode(df: DataFrame, loc: SourceLocation | undefined): PlanNode {
  const fields = df.schema.filter((f) => isNumeric(f.type));
  if (fields.length === 0)
    throw new BasinError("BASIN_PLAN", `corr() needs a numeric column; the columns are ${df.columns.join(", ")}`, loc);
  if (fields.some((f) => f.name === "column"))
    throw new BasinError(
      "BASIN_PLAN",
      'corr() names its first column "column", like a numeric column of this frame; rename that column first',
      loc,
    );
  const pair = (i: number, j: number) => `__corr_${Math.min(i, j)}_${Math.max(i, j)}`;
  const aggs: NamedExpr[] = [];
  fields.forEach((a, i) =>
    fields.forEach((b, j) => {
      if (j >= i) aggs.push({ name: pair(i, j), expr: agg("corr", col(a.name), { arg2: col(b.name) }) });
    }),
  );
  const reduced = df.aggregate([], aggs, loc);
  const blocks = fields.map((a, i): NamedExpr[] => [
    { name: "column", expr: lit(a.name) },
    ...fields.map((b, j) => ({ name: b.name, expr: col(pair(i, j)) })),
  ]);
  return stack(reduced, blocks, loc);
}
