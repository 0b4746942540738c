// "Copy as code": the table's filters and sort as the Basin pipeline lines that make
// the same rows — the very calls the engine's view() makes (engine/server/results.ts),
// so pasting them after the frame in the pipeline gives what the table shows.
import { engineLower } from "../../engine/common/case_map.js";
import type { ResultFilter, ResultSort, WireValue } from "../../engine/common/rpc.js";
import type { DType, Field } from "../../engine/common/types.js";

const OP_METHOD = { eq: "eq", ne: "ne", lt: "lt", le: "le", gt: "gt", ge: "ge" } as const;

/**
 * A value as TypeScript source: numbers and booleans as they are, text quoted; of a
 * number column, digits past 2^53 as a BigInt and NaN / ±Infinity by name (the
 * filter row sends those as text).
 */
function literalOf(v: WireValue, type: DType | undefined): string {
  if (typeof v !== "string") return String(v);
  if (type === "int64" && /^-?\d+$/.test(v)) return `${BigInt(v)}n`;
  if (type === "float64" && /^(NaN|-?Infinity)$/.test(v)) return v;
  return JSON.stringify(v);
}

/** One filter as a Basin expression over `col(...)`; `type` is the column's. */
export function filterCode(f: ResultFilter, type?: DType): string {
  const literal = (v: WireValue) => literalOf(v, type);
  const c = `col(${JSON.stringify(f.column)})`;
  switch (f.kind) {
    case "isNull":
      return `${c}.isNull()`;
    case "notNull":
      return `${c}.isNotNull()`;
    case "compare":
      return `${c}.${OP_METHOD[f.op]}(${literal(f.value)})`;
    case "range": {
      const lo = f.min === undefined || f.min === null ? undefined : `${c}.ge(${literal(f.min)})`;
      const hi = f.max === undefined || f.max === null ? undefined : `${c}.le(${literal(f.max)})`;
      return lo && hi ? `${lo}.and(${hi})` : (lo ?? hi ?? `${c}.isNotNull()`);
    }
    case "contains":
    case "startsWith": {
      const s = f.ignoreCase ? `${c}.str.lower()` : c;
      const text = JSON.stringify(f.ignoreCase ? engineLower(f.text) : f.text);
      return f.kind === "contains" ? `${s}.str.contains(${text}, { literal: true })` : `${s}.str.startsWith(${text})`;
    }
  }
}

/**
 * The pipeline lines for a view: one `.filter(…)` per filter, then `.sort(…)`, to
 * chain after the frame (filters need `col` from "basin"). Empty when the table is
 * neither filtered nor sorted.
 *
 * @example
 * viewCode([{ column: "fare", kind: "compare", op: "gt", value: 54.5 }], { column: "fare", descending: true })
 * // '  .filter(col("fare").gt(54.5))\n  .sort("fare", { descending: true })'
 */
export function viewCode(
  filters: readonly ResultFilter[],
  sort: ResultSort | undefined,
  schema: readonly Field[] = [],
): string {
  const lines = filters.map((f) => `  .filter(${filterCode(f, schema.find((x) => x.name === f.column)?.type)})`);
  if (sort) lines.push(`  .sort(${JSON.stringify(sort.column)}${sort.descending ? ", { descending: true }" : ""})`);
  return lines.join("\n");
}
