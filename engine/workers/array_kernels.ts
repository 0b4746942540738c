// Kernels on array chunks held as Float64Array in C order, in TypeScript: the
// reductions' partials and combines, assembling pieces, cumsum, masks, and the
// small matrix products of the linear algebra steps. The hot elementwise,
// generating, transposing and blocked-matmul kernels are native (native/src/array/array.cc).
import { sizeOf, stridesOf, type ArrayDType, type ReduceOp } from "../common/array_plan.js";
import { statCount, type Piece } from "../graph/array_steps.js";

/**
 * Calls `f` once per row (run along the last axis) of `shape` in C order, with the
 * row's start offset in each of the buffers whose strides are given.
 */
export function forEachRow(
  shape: readonly number[],
  strides: readonly (readonly number[])[],
  f: (offs: number[], len: number) => void,
): void {
  const nd = shape.length;
  const offs = strides.map(() => 0);
  if (nd === 0) return f(offs, 1);
  for (const d of shape) if (d === 0) return;
  const idx = new Array<number>(nd).fill(0);
  const len = shape[nd - 1];
  for (;;) {
    f(offs, len);
    let d = nd - 2;
    for (; d >= 0; d--) {
      idx[d]++;
      for (let j = 0; j < offs.length; j++) offs[j] += strides[j][d];
      if (idx[d] < shape[d]) break;
      for (let j = 0; j < offs.length; j++) offs[j] -= strides[j][d] * shape[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

/** Values rounded/wrapped to what `dtype` can hold (in place). */
export function narrow(v: Float64Array, dtype: ArrayDType): Float64Array {
  const n = v.length;
  if (dtype === "float32") for (let i = 0; i < n; i++) v[i] = Math.fround(v[i]);
  else if (dtype === "int32") for (let i = 0; i < n; i++) v[i] = v[i] | 0;
  else if (dtype === "bool") for (let i = 0; i < n; i++) v[i] = v[i] !== 0 ? 1 : 0;
  return v;
}

/** Copies strided boxes of the inputs into a new array of `shape` (every box has the output's rank). */
export function assemble(shape: number[], pieces: Piece[], inputs: Float64Array[]): Float64Array {
  const out = new Float64Array(sizeOf(shape));
  const os = stridesOf(shape);
  const dInner = os.length ? os[os.length - 1] : 0;
  for (const p of pieces) {
    const ps = stridesOf(p.shape);
    const ss = ps.map((s, d) => s * p.step[d]);
    let sBase = 0,
      dBase = 0;
    for (let d = 0; d < ps.length; d++) sBase += p.start[d] * ps[d];
    for (let d = 0; d < shape.length; d++) dBase += p.dst[d] * os[d];
    const src = inputs[p.input];
    const inner = ss.length ? ss[ss.length - 1] : 0;
    forEachRow(p.count, [ss, os], (o, len) => {
      const s0 = sBase + o[0],
        d0 = dBase + o[1];
      if (inner === 1 && dInner === 1) out.set(src.subarray(s0, s0 + len), d0);
      else for (let i = 0; i < len; i++) out[d0 + i * dInner] = src[s0 + i * inner];
    });
  }
  return out;
}

/** Whether (v, i) beats (bv, bi) for argmin (`min`) or argmax: NaN first, then the lower position on ties. */
function argBetter(v: number, i: number, bv: number, bi: number, min: boolean): boolean {
  if (bi < 0) return true;
  const vn = v !== v,
    bn = bv !== bv;
  if (vn || bn) return vn && (!bn || i < bi);
  if (v === bv) return i < bi;
  return min ? v < bv : v > bv;
}

/**
 * Per-chunk statistics of a reduction: `statCount(red)` blocks of the kept shape
 * (reduced axes of length 1), one after another.
 */
export function partial(
  red: ReduceOp,
  x: Float64Array,
  shape: number[],
  axes: number[],
  offset: number[],
  full: number[],
): Float64Array {
  const kept = shape.map((d, i) => (axes.includes(i) ? 1 : d));
  const m = sizeOf(kept);
  const ks = stridesOf(kept).map((s, i) => (axes.includes(i) ? 0 : s));
  const xs = stridesOf(shape);
  const last = shape.length - 1;
  const xin = last >= 0 ? xs[last] : 0;
  const kin = last >= 0 ? ks[last] : 0;
  let count = 1;
  for (const a of axes) count *= shape[a];
  const out = new Float64Array(statCount(red) * m);
  if (red === "sum" || red === "mean" || red === "var" || red === "std") {
    forEachRow(shape, [xs, ks], (o, len) => {
      const x0 = o[0],
        k0 = o[1];
      if (kin === 0) {
        let s = 0;
        for (let i = 0; i < len; i++) s += x[x0 + i * xin];
        out[k0] += s;
      } else for (let i = 0; i < len; i++) out[k0 + i] += x[x0 + i * xin];
    });
    if (red === "mean") out.fill(count, m);
    if (red === "var" || red === "std") {
      // [n, mean, M2]: two passes over the chunk (stabler than one).
      const sums = out.slice(0, m);
      out.fill(count, 0, m);
      for (let j = 0; j < m; j++) out[m + j] = sums[j] / count;
      forEachRow(shape, [xs, ks], (o, len) => {
        const x0 = o[0],
          k0 = o[1];
        for (let i = 0; i < len; i++) {
          const d = x[x0 + i * xin] - out[m + k0 + i * kin];
          out[2 * m + k0 + i * kin] += d * d;
        }
      });
    }
    return out;
  }
  if (red === "min" || red === "max") {
    out.fill(red === "min" ? Infinity : -Infinity);
    const isMin = red === "min";
    forEachRow(shape, [xs, ks], (o, len) => {
      const x0 = o[0],
        k0 = o[1];
      for (let i = 0; i < len; i++) {
        const v = x[x0 + i * xin],
          k = k0 + i * kin,
          acc = out[k];
        if (v !== v || (isMin ? v < acc : v > acc)) out[k] = acc !== acc ? acc : v;
      }
    });
    return out;
  }
  // argmin/argmax: [value, global position along the reduced axes]
  const reducedFull = axes.map((a) => full[a]);
  const rs = stridesOf(reducedFull);
  const gs = shape.map((_, d) => (axes.includes(d) ? rs[axes.indexOf(d)] : 0));
  let base = 0;
  for (let d = 0; d < shape.length; d++) base += offset[d] * gs[d];
  out.fill(-1, m);
  const isMin = red === "argmin";
  const gin = last >= 0 ? gs[last] : 0;
  forEachRow(shape, [xs, ks, gs], (o, len) => {
    const x0 = o[0],
      k0 = o[1],
      g0 = base + o[2];
    for (let i = 0; i < len; i++) {
      const k = k0 + i * kin,
        g = g0 + i * gin,
        v = x[x0 + i * xin];
      if (argBetter(v, g, out[k], out[m + k], isMin)) {
        out[k] = v;
        out[m + k] = g;
      }
    }
  });
  return out;
}

/** Combines partials of `size` output elements; with `final`, gives the reduction's values. */
export function combine(
  red: ReduceOp,
  size: number,
  parts: Float64Array[],
  final?: { ddof: number; dtype: ArrayDType },
): Float64Array {
  const m = size;
  const acc = parts[0].slice();
  for (const p of parts.slice(1)) {
    switch (red) {
      case "sum":
      case "mean":
        for (let i = 0; i < acc.length; i++) acc[i] += p[i];
        break;
      case "min":
      case "max": {
        const isMin = red === "min";
        for (let i = 0; i < m; i++) {
          const a = acc[i],
            v = p[i];
          if (a !== a) continue;
          if (v !== v || (isMin ? v < a : v > a)) acc[i] = v;
        }
        break;
      }
      case "var":
      case "std":
        for (let i = 0; i < m; i++) {
          const na = acc[i],
            nb = p[i];
          const n = na + nb;
          if (nb === 0) continue;
          // Nothing before (an empty chunk's mean is 0/0): this partial's count, mean and m2 as they are.
          if (na === 0) {
            acc[i] = nb;
            acc[m + i] = p[m + i];
            acc[2 * m + i] = p[2 * m + i];
            continue;
          }
          const delta = p[m + i] - acc[m + i];
          acc[2 * m + i] += p[2 * m + i] + (delta * delta * na * nb) / n;
          acc[m + i] += (delta * nb) / n;
          acc[i] = n;
        }
        break;
      case "argmin":
      case "argmax":
        for (let i = 0; i < m; i++)
          if (p[m + i] >= 0 && argBetter(p[i], p[m + i], acc[i], acc[m + i], red === "argmin")) {
            acc[i] = p[i];
            acc[m + i] = p[m + i];
          }
        break;
    }
  }
  if (!final) return acc;
  let out: Float64Array;
  switch (red) {
    case "sum":
    case "min":
    case "max":
      out = acc;
      break;
    case "mean":
      out = acc.subarray(0, m).map((s, i) => s / acc[m + i]);
      break;
    case "var":
    case "std":
      out = new Float64Array(m);
      for (let i = 0; i < m; i++) {
        const v = acc[2 * m + i] / Math.max(acc[i] - final.ddof, 0);
        out[i] = red === "std" ? Math.sqrt(v) : v;
      }
      break;
    case "argmin":
    case "argmax":
      out = acc.slice(m);
      break;
  }
  return narrow(out, final.dtype);
}

/** Σ_p A_p (m × ks[p]) @ B_p (ks[p] × n), row-major, i-k-j order (the linalg steps' small products; chunk matmuls are native). */
export function matmul(m: number, n: number, ks: number[], blocks: Float64Array[]): Float64Array {
  const c = new Float64Array(m * n);
  ks.forEach((k, p) => {
    const a = blocks[2 * p],
      b = blocks[2 * p + 1];
    for (let i = 0; i < m; i++) {
      const ci = i * n;
      for (let q = 0; q < k; q++) {
        const av = a[i * k + q];
        const bq = q * n;
        for (let j = 0; j < n; j++) c[ci + j] += av * b[bq + j];
      }
    }
  });
  return c;
}

/** Cumulative sum along `axis`, plus the last slice of the previous chunk's output when given. */
export function cumsum(
  x: Float64Array,
  shape: number[],
  axis: number,
  prev?: { values: Float64Array; shape: number[] },
): Float64Array {
  const out = x.slice();
  const len = shape[axis];
  let outer = 1,
    inner = 1;
  for (let d = 0; d < axis; d++) outer *= shape[d];
  for (let d = axis + 1; d < shape.length; d++) inner *= shape[d];
  for (let o = 0; o < outer; o++) {
    if (prev && len > 0) {
      const pl = prev.shape[axis];
      const pb = (o * pl + pl - 1) * inner,
        b = o * len * inner;
      for (let j = 0; j < inner; j++) out[b + j] += prev.values[pb + j];
    }
    for (let i = 1; i < len; i++) {
      const b = (o * len + i) * inner;
      for (let j = 0; j < inner; j++) out[b + j] += out[b - inner + j];
    }
  }
  return out;
}

/** The elements of `x` where `m` is non-zero. */
export function maskSelect(x: Float64Array, m: Float64Array): Float64Array {
  let n = 0;
  for (let i = 0; i < m.length; i++) if (m[i] !== 0) n++;
  const out = new Float64Array(n);
  for (let i = 0, j = 0; i < m.length; i++) if (m[i] !== 0) out[j++] = x[i];
  return out;
}
