// The table's filter row: what a user types under a column header, as the
// engine's view() filters. Comparisons "= v", "!= v" (or ≠, <>), "< v", "<= v" (≤),
// "> v", ">= v" (≥); ranges "5..10", "between 5 and 10" (ends included); for text,
// a plain word keeps the values containing it in any case, "^abc" or "starts with abc"
// those starting with it; "null" and "not null" for missing values.
import type { DType } from "../../engine/common/types.js";
import type { CompareOp, ResultFilter, WireValue } from "../../engine/common/rpc.js";

function value(text: string, type: DType): WireValue {
  const t = text.trim();
  if (type === "float64") {
    // The table shows them so: NaN and ±Infinity go by name (JSON has no such numbers).
    const special = /^([+-]?)(nan|inf|infinity)$/i.exec(t);
    if (special) return special[2]!.toLowerCase() === "nan" ? "NaN" : `${special[1] === "-" ? "-" : ""}Infinity`;
  }
  if (type === "int64" || type === "float64") {
    const n = Number(t);
    if (t === "" || !Number.isFinite(n)) throw new Error(`"${t}" is not a number`);
    // An int64 past 2^53 would round as a JS number: its digits go as text.
    if (type === "int64" && /^-?\d+$/.test(t) && !Number.isSafeInteger(n)) return t;
    return n;
  }
  if (type === "bool") {
    if (t !== "true" && t !== "false") throw new Error(`"${t}" is not true or false`);
    return t === "true";
  }
  if ((type === "date" || type === "timestamp") && Number.isNaN(Date.parse(t)))
    throw new Error(`"${t}" is not a date (use YYYY-MM-DD)`);
  // A quoted value keeps its spaces (and may look like an operator).
  const quoted = /^"(.*)"$|^'(.*)'$/.exec(t);
  return quoted ? (quoted[1] ?? quoted[2]) : t;
}

const OPS: Record<string, CompareOp> = {
  "=": "eq",
  "==": "eq",
  "!=": "ne",
  "<>": "ne",
  "≠": "ne",
  "<": "lt",
  "<=": "le",
  "≤": "le",
  ">": "gt",
  ">=": "ge",
  "≥": "ge",
};

/**
 * The filter a filter-row entry means, undefined for an empty entry; throws with a hint on nonsense.
 *
 * @example
 * parseFilter("fare", "float64", "> 54.5") // { column: "fare", kind: "compare", op: "gt", value: 54.5 }
 * parseFilter("fare", "float64", "5..10") // { column: "fare", kind: "range", min: 5, max: 10 }
 * parseFilter("city", "string", "zür") // { column: "city", kind: "contains", text: "zür", ignoreCase: true }
 */
export function parseFilter(column: string, type: DType, text: string): ResultFilter | undefined {
  const t = text.trim();
  if (t === "") return undefined;
  if (/^(is\s+)?null$/i.test(t)) return { column, kind: "isNull" };
  if (/^(is\s+)?not\s+null$|^!null$/i.test(t)) return { column, kind: "notNull" };
  const between = /^between\s+(.+?)\s+and\s+(.+)$/i.exec(t);
  if (between) return { column, kind: "range", min: value(between[1], type), max: value(between[2], type) };
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
  const op = /^(==|!=|<>|<=|>=|=|<|>|≠|≤|≥)\s*(.*)$/.exec(t);
  if (op) {
    if (op[2].trim() === "") throw new Error(`"${op[1]}" needs a value after it, e.g. ${op[1]} 5`);
    return { column, kind: "compare", op: OPS[op[1]], value: value(op[2], type) };
  }
  if (type === "string") {
    const starts = /^(?:\^|starts\s+with\s+)(.+)$/i.exec(t);
    if (starts) return { column, kind: "startsWith", text: String(value(starts[1], type)), ignoreCase: true };
    const contains = /^contains\s+(.+)$/i.exec(t);
    return { column, kind: "contains", text: String(value(contains ? contains[1] : t, type)), ignoreCase: true };
  }
  return { column, kind: "compare", op: "eq", value: value(t, type) };
}
