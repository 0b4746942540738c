// Shape rules checked when an array pipeline is built: chunk specs, broadcasting,
// axes. Each failure is a BasinError naming the shapes and the pipeline line.
import type { Chunks } from "../../common/array_plan.js";
import { BasinError, type SourceLocation } from "../../common/errors.js";

/** Chunk sizes: one size for every axis, one per axis (-1: the whole axis), explicit sizes per axis, or "auto". */
export type ChunksSpec = number | (number | number[])[] | "auto";

/** Elements per chunk that "auto" aims for (32 MiB of float64). */
const AUTO_ELEMENTS = 1 << 22;

export const fmtShape = (s: readonly number[]) => `(${s.join(", ")}${s.length === 1 ? "," : ""})`;

export function checkShape(shape: readonly number[], loc: SourceLocation | undefined): number[] {
  for (const d of shape)
    if (!Number.isInteger(d) || d < 0)
      throw new BasinError("BASIN_PLAN", `shape ${fmtShape(shape)} must hold non-negative integers`, loc);
  return [...shape];
}

function split(n: number, size: number): number[] {
  if (n === 0) return [0];
  const out: number[] = [];
  for (let s = 0; s < n; s += size) out.push(Math.min(size, n - s));
  return out;
}

/**
 * Chunk sizes per axis for `shape`.
 *
 * @example
 * normalizeChunks([10, 4], 3) // [[3, 3, 3, 1], [3, 1]]
 */
export function normalizeChunks(
  shape: readonly number[],
  spec: ChunksSpec | undefined,
  loc: SourceLocation | undefined,
): Chunks {
  if (spec === undefined || spec === "auto") {
    const side = Math.max(1, Math.floor(Math.pow(AUTO_ELEMENTS, 1 / Math.max(1, shape.length))));
    return shape.map((d) => split(d, Math.max(1, Math.min(d, side))));
  }
  if (typeof spec === "number") spec = shape.map(() => spec as number);
  if (spec.length !== shape.length)
    throw new BasinError(
      "BASIN_PLAN",
      `chunks give ${spec.length} axes but the shape ${fmtShape(shape)} has ${shape.length}`,
      loc,
    );
  return shape.map((d, i) => {
    const c = spec[i];
    if (Array.isArray(c)) {
      if (c.some((x) => !Number.isInteger(x) || x < 0) || c.reduce((a, b) => a + b, 0) !== d)
        throw new BasinError(
          "BASIN_PLAN",
          `chunks [${c.join(", ")}] of axis ${i} must be non-negative integers summing to its length ${d}`,
          loc,
        );
      return c.length ? [...c] : [0];
    }
    if (c === -1) return [d];
    if (!Number.isInteger(c) || c < 1)
      throw new BasinError(
        "BASIN_PLAN",
        `chunk size ${c} of axis ${i} must be a positive integer (or -1 for the whole axis)`,
        loc,
      );
    return split(d, c);
  });
}

/**
 * NumPy broadcasting of several shapes.
 *
 * @example
 * broadcastShapes([[3, 1], [4]], "add", loc) // [3, 4]
 */
export function broadcastShapes(shapes: number[][], what: string, loc: SourceLocation | undefined): number[] {
  const nd = Math.max(0, ...shapes.map((s) => s.length));
  const out = new Array<number>(nd).fill(1);
  for (const s of shapes)
    s.forEach((d, i) => {
      const j = i + nd - s.length;
      if (d === out[j] || d === 1) return;
      if (out[j] !== 1)
        throw new BasinError(
          "BASIN_PLAN",
          `${what}: shapes ${shapes.map(fmtShape).join(" and ")} cannot be broadcast together (axis ${j}: ${out[j]} vs ${d}); make the lengths equal or 1`,
          loc,
        );
      out[j] = d;
    });
  return out;
}

/** An axis in [0, ndim), negative counting from the end. */
export function normAxis(axis: number, ndim: number, loc: SourceLocation | undefined): number {
  if (!Number.isInteger(axis) || axis < -ndim || axis >= ndim)
    throw new BasinError(
      "BASIN_PLAN",
      `axis ${axis} is out of range for an array with ${ndim} dimension${ndim === 1 ? "" : "s"}`,
      loc,
    );
  return axis < 0 ? axis + ndim : axis;
}
