/**
 * Cross-checking of query answers between systems: rows are normalised (bigint →
 * number, NaN → null), sorted by the key columns then all columns, and compared:
 * keys and strings exactly, numbers with a relative tolerance.
 */

/** A normalised cell. */
export type Cell = number | string | null;
/** A normalised result row. */
export type Row = Record<string, Cell>;

/** Converts one raw value from any system to a {@link Cell}. */
export function normalizeCell(v: unknown): Cell {
  if (v === null || v === undefined) return null;
  if (typeof v === "number") return Number.isNaN(v) ? null : v;
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "string") return v;
  if (typeof v === "boolean") return v ? 1 : 0;
  // Dates as YYYY-MM-DD (every system hands DATE over as a Date at midnight UTC), timestamps in full.
  if (v instanceof Date) {
    const iso = v.toISOString();
    return iso.endsWith("T00:00:00.000Z") ? iso.slice(0, 10) : iso;
  }
  // DuckDB values with valueOf/toDouble (e.g. decimals, hugeints wrapped in objects).
  if (typeof v === "object") {
    const o = v as { toDouble?: () => number; valueOf: () => unknown };
    if (typeof o.toDouble === "function") return o.toDouble();
    const p = o.valueOf();
    if (typeof p === "number" || typeof p === "bigint") return normalizeCell(p);
  }
  return String(v);
}

/** Normalises raw row objects to {@link Row}s. */
export function normalizeRows(rows: readonly Record<string, unknown>[]): Row[] {
  return rows.map((r) => {
    const out: Row = {};
    for (const k of Object.keys(r)) out[k] = normalizeCell(r[k]);
    return out;
  });
}

/** Orders cells: null first, numbers numerically, the rest as text. */
export function compareCells(a: Cell, b: Cell): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  if (typeof a === "number" && typeof b === "number") return a - b;
  const sa = String(a);
  const sb = String(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

/** Sorts rows by `keys`, then by the remaining `columns` (for duplicate keys, e.g. top-k). */
export function sortRows(rows: Row[], keys: readonly string[], columns: readonly string[]): Row[] {
  const order = [...keys, ...columns.filter((c) => !keys.includes(c))];
  return [...rows].sort((x, y) => {
    for (const k of order) {
      const d = compareCells(x[k] ?? null, y[k] ?? null);
      if (d !== 0) return d;
    }
    return 0;
  });
}

/** Whether two numbers agree within `rtol` relative (or 1e-12 absolute). */
export function sameNumber(a: number, b: number, rtol: number): boolean {
  if (a === b) return true;
  const scale = Math.max(Math.abs(a), Math.abs(b));
  return Math.abs(a - b) <= rtol * scale || Math.abs(a - b) <= 1e-12;
}

function show(rows: Row[], i: number, cols: readonly string[]): string {
  return cols.map((c) => `${c}=${JSON.stringify(rows[i]?.[c] ?? null)}`).join(" ");
}

/**
 * Compares `actual` against `expected`. Returns null when they agree, otherwise a
 * one-line description of the first difference.
 */
export function compareResults(expected: Row[], actual: Row[], keys: readonly string[], rtol = 1e-6): string | null {
  const cols = Object.keys(expected[0] ?? actual[0] ?? {});
  if (expected.length > 0 && actual.length > 0) {
    const ac = Object.keys(actual[0]!);
    const missing = cols.filter((c) => !ac.includes(c));
    const extra = ac.filter((c) => !cols.includes(c));
    if (missing.length || extra.length) {
      return `columns differ: missing [${missing.join(",")}] extra [${extra.join(",")}]`;
    }
  }
  if (expected.length !== actual.length) return `row count ${actual.length}, expected ${expected.length}`;
  const e = sortRows(expected, keys, cols);
  const a = sortRows(actual, keys, cols);
  for (let i = 0; i < e.length; i++) {
    for (const c of cols) {
      const x = e[i]![c] ?? null;
      const y = a[i]![c] ?? null;
      const ok = keys.includes(c) || typeof x !== "number" || typeof y !== "number" ? x === y : sameNumber(x, y, rtol);
      if (!ok) {
        return `row ${i} col ${c}: got ${JSON.stringify(y)}, expected ${JSON.stringify(x)} (${show(e, i, keys)})`;
      }
    }
  }
  return null;
}
