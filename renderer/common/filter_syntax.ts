// The table's filter row: what a user types under a column header, as the
// engine's view() filters. "5..10", ">= 5", "< 2024-01-01", "= NYC", "null".
import type { DType } from "../../engine/common/types.js";
import type { ResultFilter, WireValue } from "../../engine/common/rpc.js";

function value(text: string, type: DType): WireValue {
  const t = text.trim();
  if (type === "int64" || type === "float64") {
    const n = Number(t);
    if (t === "" || !Number.isFinite(n)) throw new Error(`"${t}" is not a number`);
    return n;
  }
  if (type === "bool") {
    if (t !== "true" && t !== "false") throw new Error(`"${t}" is not true or false`);
    return t === "true";
  }
  if ((type === "date" || type === "timestamp") && Number.isNaN(Date.parse(t)))
    throw new Error(`"${t}" is not a date (use YYYY-MM-DD)`);
  return t;
}

/**
 * The filter a filter-row entry means, undefined for an empty entry; throws with a hint on nonsense.
 *
 * @example
 * parseFilter("fare", "float64", "5..10") // { column: "fare", kind: "range", min: 5, max: 10 }
 * parseFilter("city", "string", "= Zürich") // { column: "city", kind: "range", min: "Zürich", max: "Zürich" }
 */
export function parseFilter(column: string, type: DType, text: string): ResultFilter | undefined {
  const t = text.trim();
  if (t === "") return undefined;
  if (/^null$/i.test(t)) return { column, kind: "isNull" };
  const range = /^(.*?)\.\.(.*)$/.exec(t);
  if (range && type !== "string") {
    const [, lo, hi] = range;
    if (lo.trim() === "" && hi.trim() === "")
      throw new Error("a range needs a lower or an upper end: 5..10, 5.., ..10");
    return {
      column,
      kind: "range",
      ...(lo.trim() ? { min: value(lo, type) } : {}),
      ...(hi.trim() ? { max: value(hi, type) } : {}),
    };
  }
  const op = /^(>=|<=|=|>|<)?\s*(.*)$/.exec(t)!;
  const v = value(op[2], type);
  switch (op[1]) {
    case ">=":
    case ">":
      return { column, kind: "range", min: v };
    case "<=":
    case "<":
      return { column, kind: "range", max: v };
    default:
      return { column, kind: "range", min: v, max: v };
  }
}
