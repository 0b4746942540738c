// What expression resolution (resolve.ts) and function resolution (resolve_fn.ts)
// share: plan errors, null literals, literal coercion and how a typed expression is
// named in messages.
import { BasinError, type SourceLocation } from "../common/errors.js";
import { exprToString, type ExprNode } from "../common/expr.js";
import type { DType } from "../common/types.js";
import type { NativeExpr } from "../graph/kernel_args.js";

/** A plan error at `loc`. */
export function fail(message: string, loc: SourceLocation | undefined): never {
  throw new BasinError("BASIN_PLAN", message, loc);
}

/** A null literal (typed or not). */
export function isNullLit(e: NativeExpr): boolean {
  return e.kind === "lit" && e.value === null;
}

/** "x + 1 is string", for type errors. */
export function describe(e: ExprNode, t: DType): string {
  return `${exprToString(e)} is ${t}`;
}

/** Converts a string literal compared with a date/timestamp column into that type. */
export function coerceLiteral(e: NativeExpr, to: DType, loc: SourceLocation | undefined): NativeExpr {
  if (e.kind !== "lit") return e;
  if (e.value === null) return { ...e, type: to };
  if ((to === "date" || to === "timestamp") && typeof e.value === "string") {
    const ms = Date.parse(
      e.value.length === 10 ? `${e.value}T00:00:00Z` : e.value.endsWith("Z") ? e.value : `${e.value}Z`,
    );
    if (Number.isNaN(ms))
      fail(`"${e.value}" is not a valid ${to} (write it as YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS)`, loc);
    return { kind: "lit", type: to, value: to === "date" ? Math.floor(ms / 86_400_000) : ms * 1000 };
  }
  if (to === "float64" && e.type === "int64") return { ...e, type: "float64" };
  return e;
}
