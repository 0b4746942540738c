// Plans window functions in select()/withColumns(). They are not row-local, so they
// cannot run inside a projection: each one is lifted into a `window` plan node that
// appends it as a hidden column, and the projection reads that column instead.
// Windows nested in a window's input (col("x").diff().cumSum()) are lifted first, into
// a lower window node; windows with different `over` keys get separate nodes.
import type { SourceLocation } from "../common/errors.js";
import { containsWindow, exprToString, mapChildren, type ExprNode } from "../common/expr.js";
import type { NamedExpr, PlanNode } from "../common/plan.js";
import { resolveWindow } from "./resolve.js";

/**
 * Window nodes on top of `input` computing every window function of `exprs`, and the
 * expressions rewritten to read the windows' (hidden) output columns.
 *
 * @example
 * const { input, exprs } = planWindows(df.node, [{ name: "cs", expr: col("x").cumSum().node }]);
 * // input: Window [cumSum(col("x")) as __window0] over df.node; exprs: col("__window0") as cs
 */
export function planWindows(
  input: PlanNode,
  exprs: NamedExpr[],
  loc: SourceLocation | undefined,
): { input: PlanNode; exprs: NamedExpr[] } {
  const taken = new Set([...input.schema.map((f) => f.name), ...exprs.map((e) => e.name)]);
  let counter = 0;
  const fresh = (): string => {
    let name: string;
    do name = `__window${counter++}`;
    while (taken.has(name));
    taken.add(name);
    return name;
  };
  let node = input;
  let current = exprs;
  while (current.some((e) => containsWindow(e.expr))) {
    // Lift the innermost windows: those whose input and keys hold no other window.
    const lifted: NamedExpr[] = [];
    const lift = (e: ExprNode): ExprNode => {
      if (e.kind === "window" && !containsWindow(e.arg) && !e.over.some(containsWindow)) {
        const name = fresh();
        lifted.push({ name, expr: e });
        return { kind: "col", name, loc: e.loc };
      }
      return mapChildren(e, lift);
    };
    current = current.map((e) => ({ name: e.name, expr: lift(e.expr) }));
    const byKeys = new Map<string, NamedExpr[]>();
    for (const w of lifted) {
      const key = w.expr.kind === "window" ? w.expr.over.map(exprToString).join("\u0000") : "";
      byKeys.set(key, [...(byKeys.get(key) ?? []), w]);
    }
    for (const windows of byKeys.values()) {
      const below = node;
      const fields = windows.map((w) => ({ name: w.name, type: resolveWindow(w.expr, below.schema, loc).type }));
      node = { kind: "window", input: below, windows, schema: [...below.schema, ...fields], loc };
    }
  }
  return { input: node, exprs: current };
}
