// How an array result is shown above its element table: a one-line description and
// the pixels of its heatmap (pure functions, so they are tested without a browser).
import type { ArrayHeatmap, ArrayInfo } from "../../engine/common/rpc.js";

/**
 * "int64 array (300, 7), chunks (64, 64, 64, 64, 44) × (3, 3, 1)".
 *
 * @example
 * describeArray({ shape: [4], dtype: "bool", chunks: [[4]] }) // "bool array (4,), chunks (4)"
 */
export function describeArray(a: ArrayInfo): string {
  const shape = `(${a.shape.join(", ")}${a.shape.length === 1 ? "," : ""})`;
  const chunks = a.chunks
    .map((c) => `(${c.length > 6 ? `${c.slice(0, 5).join(", ")}, … ${c.length} chunks` : c.join(", ")})`)
    .join(" × ");
  return `${a.dtype} array ${shape}${chunks ? `, chunks ${chunks}` : ""}`;
}

/** A dark-blue → teal → yellow ramp (viridis-like) at t in [0, 1]. */
function ramp(t: number): [number, number, number] {
  const stops: [number, number, number][] = [
    [68, 1, 84],
    [59, 82, 139],
    [33, 145, 140],
    [94, 201, 98],
    [253, 231, 37],
  ];
  const x = Math.min(Math.max(t, 0), 1) * (stops.length - 1);
  const i = Math.min(Math.floor(x), stops.length - 2),
    f = x - i;
  const [a, b] = [stops[i], stops[i + 1]];
  return [0, 1, 2].map((k) => Math.round(a[k] + (b[k] - a[k]) * f)) as [number, number, number];
}

/**
 * RGBA pixels of a heatmap, one per cell, row-major; cells without a value are
 * transparent; a constant array maps to the middle of the ramp.
 *
 * @example
 * new ImageData(heatmapRgba(h), h.cols, h.rows)
 */
export function heatmapRgba(h: ArrayHeatmap): Uint8ClampedArray<ArrayBuffer> {
  const px = new Uint8ClampedArray(h.rows * h.cols * 4);
  const span = h.max - h.min;
  h.values.forEach((v, i) => {
    if (v === null) return;
    const [r, g, b] = ramp(span > 0 ? (v - h.min) / span : 0.5);
    px.set([r, g, b, 255], i * 4);
  });
  return px;
}
