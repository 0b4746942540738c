// How `basin run` prints an array result: its shape, dtype and a preview.
import type { ArrayResult } from "../run/run_plan.js";

/**
 * At most `max` leading elements of a computed array as text, row by row for 2-D.
 *
 * @example
 * formatArray({ data: new Float64Array([1, 2]), shape: [2], dtype: "float64" }) // "array shape (2,) dtype float64\n  1  2"
 */
export function formatArray(r: ArrayResult, max = 8): string {
  const v = (i: number) => String(r.dtype === "bool" ? r.data[i] !== 0 : r.data[i]);
  const head = `array shape (${r.shape.join(", ")}${r.shape.length === 1 ? "," : ""}) dtype ${r.dtype}`;
  if (r.shape.length === 2) {
    const [rows, cols] = r.shape;
    const lines: string[] = [];
    for (let i = 0; i < Math.min(rows, max); i++) {
      const cells = Array.from({ length: Math.min(cols, max) }, (_, j) => v(i * cols + j));
      lines.push(`  ${cells.join("  ")}${cols > max ? "  …" : ""}`);
    }
    if (rows > max) lines.push("  …");
    return [head, ...lines].join("\n");
  }
  const n = r.data.length;
  const cells = Array.from({ length: Math.min(n, max) }, (_, i) => v(i));
  return `${head}\n  ${cells.join("  ")}${n > max ? "  …" : ""}`;
}
