// Arithmetic over aggregations in agg(): `col("x").sum().div(7)` or
// `col("a").sum().div(col("b").sum())` becomes an aggregation of the plain
// aggregates under hidden names, then a projection that computes on them: the
// engine's aggregate step only ever sees one aggregation per output column.
import type { NamedExpr } from "../common/plan.js";
import { columnsOf, containsAgg, mapChildren, type ExprNode } from "../common/expr.js";
import { BasinError, type SourceLocation } from "../common/errors.js";

/** The aggregations to compute and, when some outputs compute on them, the projection after. */
export interface SplitAggregations {
  inner: NamedExpr[];
  /** Null when every output is a plain aggregation. */
  outer: NamedExpr[] | null;
}

function isPlainAgg(e: ExprNode): boolean {
  return (e.kind === "alias" ? e.arg : e).kind === "agg";
}

/** An expression without source locations, to find the same aggregation written twice. */
function shape(e: ExprNode): string {
  return JSON.stringify(e, (k, v: unknown) => (k === "loc" ? undefined : v));
}

/**
 * Splits `aggs` (over groups keyed by `keys`) into plain aggregations and the
 * projection that computes the outputs from them.
 *
 * @example
 * splitAggregations([], [{ name: "avg_yearly", expr: sum(x) / 7 }], loc)
 * // inner: [__agg0 = sum(x)], outer: [avg_yearly = __agg0 / 7]
 */
export function splitAggregations(
  keys: readonly NamedExpr[],
  aggs: readonly NamedExpr[],
  loc: SourceLocation | undefined,
): SplitAggregations {
  if (aggs.every((a) => isPlainAgg(a.expr) || !containsAgg(a.expr))) return { inner: [...aggs], outer: null };
  const keyNames = new Set(keys.map((k) => k.name));
  const taken = new Set([...keyNames, ...aggs.map((a) => a.name)]);
  const hidden = new Map<string, NamedExpr>();
  const hide = (e: ExprNode): ExprNode => {
    if (e.kind !== "agg") return mapChildren(e, hide);
    const s = shape(e);
    let h = hidden.get(s);
    if (!h) {
      let name = `__agg${hidden.size}`;
      while (taken.has(name)) name = `_${name}`;
      taken.add(name);
      h = { name, expr: e };
      hidden.set(s, h);
    }
    return { kind: "col", name: h.name };
  };
  const inner: NamedExpr[] = [];
  const outer: NamedExpr[] = keys.map((k) => ({ name: k.name, expr: { kind: "col", name: k.name } }));
  for (const a of aggs) {
    if (isPlainAgg(a.expr)) {
      inner.push(a);
      outer.push({ name: a.name, expr: { kind: "col", name: a.name } });
      continue;
    }
    const computed = hide(a.expr);
    for (const c of columnsOf(computed))
      if (!keyNames.has(c) && ![...hidden.values()].some((h) => h.name === c))
        throw new BasinError(
          "BASIN_PLAN",
          `the aggregation "${a.name}" reads column "${c}" outside an aggregation; aggregate it (e.g. col("${c}").first()) or group by it`,
          loc,
        );
    outer.push({ name: a.name, expr: computed });
  }
  return { inner: [...inner, ...hidden.values()], outer };
}
