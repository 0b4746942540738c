// The TSQR stages and solves on array chunks; the dense factorizations themselves
// are native (native/src/array/linalg.cc). Packed chunks hold several matrices one after
// another, their shapes known from the step (engine/graph/array_steps.ts).
import { BasinError } from "../common/errors.js";
import { native } from "../native/addon.js";
import { matmul } from "./array_kernels.js";

function packed(...parts: Float64Array[]): Float64Array {
  const out = new Float64Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** One row block's QR, packed [Q (m × k), R (k × n)]. */
export function qrBlock(a: Float64Array, m: number, n: number): Float64Array {
  const { q, r } = native().linalgQr(a, m, n);
  return packed(q, r);
}

/**
 * TSQR's second stage over the blocks' packed QRs (`blocks[i]` = [rows, rows of R_i]):
 * packed [W, R] or, with `svd`, [W·U, s, Vt] (see the "tsqr" step).
 */
export function tsqrStack(blocks: [number, number][], n: number, svd: boolean, parts: Float64Array[]): Float64Array {
  const rows = blocks.reduce((s, [, k]) => s + k, 0);
  const stacked = new Float64Array(rows * n);
  let at = 0;
  blocks.forEach(([m, k], i) => {
    stacked.set(parts[i].subarray(m * k, m * k + k * n), at);
    at += k * n;
  });
  const { q, r } = native().linalgQr(stacked, rows, n);
  if (!svd) return packed(q, r);
  const k = Math.min(rows, n);
  const { u, s, vt } = native().linalgSvd(r, k, n);
  return packed(matmul(rows, k, [k], [q, u]), s, vt);
}

/** Block Q_i (first m·ki elements of `block`) times rows [offset, offset + ki) of W (first elements of `stage2`, k columns). */
export function tsqrApply(
  block: Float64Array,
  stage2: Float64Array,
  m: number,
  ki: number,
  offset: number,
  k: number,
): Float64Array {
  return matmul(m, k, [ki], [block.subarray(0, m * ki), stage2.subarray(offset * k, (offset + ki) * k)]);
}

/** X with A X = B (A n × n); a singular A is the caller's data problem, named as such. */
export function solve(a: Float64Array, b: Float64Array, n: number, k: number): Float64Array {
  const x = native().linalgSolve(a, n, b, k);
  if (typeof x === "number")
    throw new BasinError(
      "BASIN_PLAN",
      `linalg.solve: the ${n}×${n} matrix is singular (no usable pivot in column ${x}); check the system for dependent rows, or use a least-squares method`,
    );
  return x;
}
