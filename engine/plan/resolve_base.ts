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

/**
 * Microseconds since 1970 (UTC) of "YYYY-MM-DD", "YYYY-MM-DD HH:MM[:SS[.ffffff]]" or the
 * same with "T" and an optional "Z" or ±HH:MM offset; undefined when it is none of
 * those. Microseconds are kept (Date.parse stops at milliseconds, so a timestamp
 * copied from the grid matched nothing).
 *
 * @example
 * timestampMicros("1969-12-31T23:59:59.999999Z") // -1
 */
export function timestampMicros(text: string): number | undefined {
  const m =
    /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i.exec(
      text.trim(),
    );
  if (!m) return undefined;
  const [, y, mo, d, h = "0", mi = "0", sec = "0", frac = "", zone] = m;
  // setUTCFullYear, not Date.UTC: that reads years 0–99 as 1900–1999.
  const day = new Date(0);
  day.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  const ms = day.getTime() + ((Number(h) * 60 + Number(mi)) * 60 + Number(sec)) * 1000;
  if (day.getUTCDate() !== Number(d) || day.getUTCMonth() !== Number(mo) - 1) return undefined;
  if (Number(h) > 23 || Number(mi) > 59 || Number(sec) > 59) return undefined;
  let offsetMin = 0;
  if (zone && zone.toUpperCase() !== "Z") {
    const z = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
    offsetMin = (z[1] === "-" ? -1 : 1) * (Number(z[2]) * 60 + Number(z[3]));
  }
  return (ms - offsetMin * 60_000) * 1000 + Number(frac.padEnd(6, "0").slice(0, 6));
}

/** Converts a string literal compared with a date/timestamp column into that type. */
export function coerceLiteral(e: NativeExpr, to: DType, loc: SourceLocation | undefined): NativeExpr {
  if (e.kind !== "lit") return e;
  if (e.value === null) return { ...e, type: to };
  if ((to === "date" || to === "timestamp") && typeof e.value === "string") {
    const us = timestampMicros(e.value);
    if (us === undefined)
      fail(`"${e.value}" is not a valid ${to} (write it as YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS[.ffffff])`, loc);
    return { kind: "lit", type: to, value: to === "date" ? Math.floor(us / 86_400_000_000) : us };
  }
  if (to === "float64" && e.type === "int64") return { ...e, type: "float64" };
  return e;
}
