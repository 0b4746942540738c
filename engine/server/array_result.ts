// An array result as the workbench shows it: a table of its elements (one row per
// index of the leading axes, one column per index of the last axis) that pages like
// any result, plus a small heatmap of a 2-D array computed once in the engine.
import type { ArrayResult } from "../run/run_plan.js";
import type { ArrayHeatmap } from "../common/rpc.js";
import type { JsColumn, JsTable } from "../native/addon.js";

/** Cells per side of a heatmap at most: bigger arrays are averaged in blocks. */
export const HEATMAP_SIDE = 128;

/**
 * The elements as a table: 0-D and 1-D arrays are one column "value"; N-D arrays
 * have prod(shape[:-1]) rows and columns "0" … "n-1" for the last axis.
 *
 * @example
 * arrayTable({ data: new Float64Array([1, 2, 3, 4]), shape: [2, 2], dtype: "float64" }).names // ["0", "1"]
 */
export function arrayTable(r: ArrayResult): JsTable {
  const cols = r.shape.length < 2 ? 1 : r.shape[r.shape.length - 1];
  const rows = cols === 0 ? 0 : r.data.length / cols;
  const names = r.shape.length < 2 ? ["value"] : Array.from({ length: cols }, (_, j) => String(j));
  const columns: JsColumn[] = names.map((_, j) => {
    const at = (i: number) => Number(r.data[i * cols + j]);
    if (r.dtype === "bool")
      return { type: "bool", values: Uint8Array.from({ length: rows }, (_, i) => (at(i) ? 1 : 0)), validity: null };
    if (r.dtype === "int64" || r.dtype === "int32")
      return { type: "int64", values: BigInt64Array.from({ length: rows }, (_, i) => BigInt(at(i))), validity: null };
    return { type: "float64", values: Float64Array.from({ length: rows }, (_, i) => at(i)), validity: null };
  });
  return { rows, names, columns };
}

/** Block means of a 2-D array (NaN skipped), at most HEATMAP_SIDE cells a side; other ranks have none. */
export function arrayHeatmap(r: ArrayResult): ArrayHeatmap | undefined {
  if (r.shape.length !== 2 || r.data.length === 0) return undefined;
  const [n, m] = r.shape;
  const rows = Math.min(n, HEATMAP_SIDE),
    cols = Math.min(m, HEATMAP_SIDE);
  const sums = new Float64Array(rows * cols),
    counts = new Float64Array(rows * cols);
  for (let i = 0; i < n; i++) {
    const bi = Math.floor((i * rows) / n);
    for (let j = 0; j < m; j++) {
      const v = Number(r.data[i * m + j]);
      if (!Number.isFinite(v)) continue;
      const c = bi * cols + Math.floor((j * cols) / m);
      sums[c] += v;
      counts[c]++;
    }
  }
  const values = Array.from(sums, (s, c) => (counts[c] > 0 ? s / counts[c] : null));
  const finite = values.filter((v): v is number => v !== null);
  return {
    rows,
    cols,
    values,
    min: finite.length ? Math.min(...finite) : 0,
    max: finite.length ? Math.max(...finite) : 0,
  };
}
