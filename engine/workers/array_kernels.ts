// Kernels on array chunks held as Float64Array in C order. First cut in plain
// TypeScript (typed-array loops, one pass per operation, no per-element
// allocation); the same signatures are meant to move to native/src/array*.cc.
import { sizeOf, stridesOf, type ArrayDType, type Generator, type MapOp, type ReduceOp } from "../common/array_plan.js";
import { statCount, type ChunkExpr, type Piece } from "../lower/array_tasks.js";

/**
 * Calls `f` once per row (run along the last axis) of `shape` in C order, with the
 * row's start offset in each of the buffers whose strides are given.
 */
export function forEachRow(shape: readonly number[], strides: readonly (readonly number[])[], f: (offs: number[], len: number) => void): void {
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

/** `src` (shape `from`) broadcast to `to` (NumPy rules; the caller checked they fit). */
export function broadcastTo(src: Float64Array, from: readonly number[], to: readonly number[]): Float64Array {
  if (from.length === to.length && from.every((d, i) => d === to[i])) return src;
  const off = to.length - from.length;
  const fs = stridesOf(from);
  const srcStrides = to.map((d, i) => (i < off || from[i - off] === 1 ? 0 : fs[i - off]));
  const out = new Float64Array(sizeOf(to));
  const last = to.length - 1;
  const inner = last >= 0 ? srcStrides[last] : 0;
  forEachRow(to, [stridesOf(to), srcStrides], (o, len) => {
    const d0 = o[0], s0 = o[1];
    for (let i = 0; i < len; i++) out[d0 + i] = src[s0 + i * inner];
  });
  return out;
}

type Operand = Float64Array | number;

const UNARY: Partial<Record<MapOp, (a: number) => number>> = {
  negative: (a) => -a, abs: Math.abs, sqrt: Math.sqrt, exp: Math.exp, log: Math.log, sin: Math.sin, cos: Math.cos, tan: Math.tan,
  floor: Math.floor, ceil: Math.ceil, sign: Math.sign, isnan: (a) => (a !== a ? 1 : 0),
  isinf: (a) => (a === Infinity || a === -Infinity ? 1 : 0), logical_not: (a) => (a === 0 ? 1 : 0),
};

function floorDiv(a: number, b: number, ints: boolean): number {
  if (ints) return b === 0 ? 0 : Math.floor(a / b);
  return Math.floor(a / b);
}

function mod(a: number, b: number, ints: boolean): number {
  if (ints && b === 0) return 0;
  const r = a % b;
  return r !== 0 && r < 0 !== b < 0 ? r + b : r;
}

function binaryFn(op: MapOp, ints: boolean): (a: number, b: number) => number {
  switch (op) {
    case "add": return (a, b) => a + b;
    case "subtract": return (a, b) => a - b;
    case "multiply": return (a, b) => a * b;
    case "divide": return (a, b) => a / b;
    case "floor_divide": return (a, b) => floorDiv(a, b, ints);
    case "mod": return (a, b) => mod(a, b, ints);
    case "power": return Math.pow;
    case "maximum": return (a, b) => (a !== a || b !== b ? NaN : a > b ? a : b);
    case "minimum": return (a, b) => (a !== a || b !== b ? NaN : a < b ? a : b);
    case "equal": return (a, b) => (a === b ? 1 : 0);
    case "not_equal": return (a, b) => (a !== b ? 1 : 0);
    case "less": return (a, b) => (a < b ? 1 : 0);
    case "less_equal": return (a, b) => (a <= b ? 1 : 0);
    case "greater": return (a, b) => (a > b ? 1 : 0);
    case "greater_equal": return (a, b) => (a >= b ? 1 : 0);
    case "logical_and": return (a, b) => (a !== 0 && b !== 0 ? 1 : 0);
    case "logical_or": return (a, b) => (a !== 0 || b !== 0 ? 1 : 0);
    default: throw new Error(`not a binary op: ${op}`);
  }
}

/** a op b over n elements; the hot arithmetic ops get their own loops (no call per element). */
function binary(op: MapOp, a: Operand, b: Operand, n: number, ints: boolean): Float64Array {
  const out = new Float64Array(n);
  const av = typeof a === "number" ? undefined : a;
  const bv = typeof b === "number" ? undefined : b;
  const as = typeof a === "number" ? a : 0;
  const bs = typeof b === "number" ? b : 0;
  if (op === "add" || op === "subtract" || op === "multiply" || (op === "divide" && !ints)) {
    const sign = op === "subtract" ? -1 : 1;
    if (op === "multiply") {
      if (av && bv) for (let i = 0; i < n; i++) out[i] = av[i] * bv[i];
      else if (av) for (let i = 0; i < n; i++) out[i] = av[i] * bs;
      else if (bv) for (let i = 0; i < n; i++) out[i] = as * bv[i];
      else out.fill(as * bs);
    } else if (op === "divide") {
      if (av && bv) for (let i = 0; i < n; i++) out[i] = av[i] / bv[i];
      else if (av) for (let i = 0; i < n; i++) out[i] = av[i] / bs;
      else if (bv) for (let i = 0; i < n; i++) out[i] = as / bv[i];
      else out.fill(as / bs);
    } else if (av && bv) {
      if (sign > 0) for (let i = 0; i < n; i++) out[i] = av[i] + bv[i];
      else for (let i = 0; i < n; i++) out[i] = av[i] - bv[i];
    } else if (av) for (let i = 0; i < n; i++) out[i] = av[i] + sign * bs;
    else if (bv) {
      if (sign > 0) for (let i = 0; i < n; i++) out[i] = as + bv[i];
      else for (let i = 0; i < n; i++) out[i] = as - bv[i];
    } else out.fill(as + sign * bs);
    return out;
  }
  const f = binaryFn(op, ints);
  if (av && bv) for (let i = 0; i < n; i++) out[i] = f(av[i], bv[i]);
  else if (av) for (let i = 0; i < n; i++) out[i] = f(av[i], bs);
  else if (bv) for (let i = 0; i < n; i++) out[i] = f(as, bv[i]);
  else out.fill(f(as, bs));
  return out;
}

function castTo(v: number, dtype: ArrayDType): number {
  switch (dtype) {
    case "bool": return v !== 0 ? 1 : 0;
    case "int64": return Math.trunc(v);
    case "int32": return Math.trunc(v) | 0;
    case "float32": return Math.fround(v);
    case "float64": return v;
  }
}

/** Whether an expression's values are integers (for integer division by zero). */
function isIntExpr(e: ChunkExpr): boolean {
  if (e.k === "scalar") return Number.isInteger(e.value);
  return e.dtype !== "float64" && e.dtype !== "float32";
}

/**
 * Evaluates an elementwise expression to a new array of `shape`.
 *
 * @example
 * evalExpr({ k: "op", op: "add", args: [{ k: "in", input: 0, shape: [2], dtype: "float64" }, { k: "scalar", value: 1 }], dtype: "float64" }, [x], [2])
 */
export function evalExpr(e: ChunkExpr, inputs: Float64Array[], shape: number[]): Float64Array {
  const n = sizeOf(shape);
  const go = (x: ChunkExpr): Operand => {
    if (x.k === "scalar") return x.value;
    if (x.k === "in") return broadcastTo(inputs[x.input], x.shape, shape);
    const args = x.args.map(go);
    let out: Float64Array;
    if (x.op === "where") {
      const [c, a, b] = args;
      out = new Float64Array(n);
      const at = (o: Operand, i: number) => (typeof o === "number" ? o : o[i]);
      for (let i = 0; i < n; i++) out[i] = at(c, i) !== 0 ? at(a, i) : at(b, i);
    } else if (x.op === "astype") {
      const a = args[0];
      out = typeof a === "number" ? new Float64Array(n).fill(castTo(a, x.dtype)) : Float64Array.from(a, (v) => castTo(v, x.dtype));
      return out;
    } else if (args.length === 1) {
      const f = UNARY[x.op]!;
      const a = args[0];
      out = new Float64Array(n);
      if (typeof a === "number") out.fill(f(a));
      else for (let i = 0; i < n; i++) out[i] = f(a[i]);
    } else {
      const ints = x.args.every(isIntExpr);
      out = binary(x.op, args[0], args[1], n, ints);
    }
    return narrow(out, x.dtype);
  };
  const r = go(e);
  return typeof r === "number" ? new Float64Array(n).fill(r) : r;
}

function mix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A 32-bit hash of (seed, flat position g, stream): counter-based, so chunking cannot change it. */
function hash(seed: number, g: number, stream: number): number {
  let h = mix32((seed ^ Math.imul(stream + 1, 0x9e3779b9)) >>> 0);
  h = mix32((h ^ (g >>> 0)) >>> 0);
  return mix32((h + Math.imul(Math.floor(g / 4294967296), 0x27d4eb2f)) ^ 0x165667b1);
}

/** A uniform double in [0, 1) with 53 random bits. */
function uniform(seed: number, g: number, stream: number): number {
  return ((hash(seed, g, 2 * stream) >>> 5) * 67108864 + (hash(seed, g, 2 * stream + 1) >>> 6)) / 9007199254740992;
}

/**
 * The values of the chunk at `offset` (shape `shape`) of a generated array of shape `full`.
 *
 * @example
 * generate({ kind: "arange", start: 0, step: 1 }, "int64", [3], [5], [10]) // 5, 6, 7
 */
export function generate(gen: Generator, dtype: ArrayDType, shape: number[], offset: number[], full: number[]): Float64Array {
  const out = new Float64Array(sizeOf(shape));
  if (gen.kind === "fill") return out.fill(castTo(gen.value, dtype));
  if (gen.kind === "arange" || gen.kind === "linspace") {
    const n = out.length;
    for (let i = 0; i < n; i++) out[i] = gen.start + (offset[0] + i) * gen.step;
    if (gen.kind === "linspace" && gen.endpoint && n > 0 && offset[0] + n === full[0] && full[0] > 1) out[n - 1] = gen.stop;
    return narrow(out, dtype);
  }
  const fs = stridesOf(full);
  let base = 0;
  for (let d = 0; d < full.length; d++) base += offset[d] * fs[d];
  const seed = gen.seed >>> 0;
  const { a, b } = gen;
  forEachRow(shape, [stridesOf(shape), fs], (o, len) => {
    const d0 = o[0], g0 = base + o[1];
    if (gen.dist === "uniform") for (let i = 0; i < len; i++) out[d0 + i] = a + (b - a) * uniform(seed, g0 + i, 0);
    else if (gen.dist === "integers") for (let i = 0; i < len; i++) out[d0 + i] = a + Math.floor(uniform(seed, g0 + i, 0) * (b - a));
    else
      for (let i = 0; i < len; i++) {
        const u1 = 1 - uniform(seed, g0 + i, 0), u2 = uniform(seed, g0 + i, 1);
        out[d0 + i] = a + b * Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
      }
  });
  return narrow(out, dtype);
}

/** Copies strided boxes of the inputs into a new array of `shape` (every box has the output's rank). */
export function assemble(shape: number[], pieces: Piece[], inputs: Float64Array[]): Float64Array {
  const out = new Float64Array(sizeOf(shape));
  const os = stridesOf(shape);
  const dInner = os.length ? os[os.length - 1] : 0;
  for (const p of pieces) {
    const ps = stridesOf(p.shape);
    const ss = ps.map((s, d) => s * p.step[d]);
    let sBase = 0, dBase = 0;
    for (let d = 0; d < ps.length; d++) sBase += p.start[d] * ps[d];
    for (let d = 0; d < shape.length; d++) dBase += p.dst[d] * os[d];
    const src = inputs[p.input];
    const inner = ss.length ? ss[ss.length - 1] : 0;
    forEachRow(p.count, [ss, os], (o, len) => {
      const s0 = sBase + o[0], d0 = dBase + o[1];
      if (inner === 1 && dInner === 1) out.set(src.subarray(s0, s0 + len), d0);
      else for (let i = 0; i < len; i++) out[d0 + i * dInner] = src[s0 + i * inner];
    });
  }
  return out;
}

export function transpose(x: Float64Array, shape: number[], axes: number[]): Float64Array {
  const outShape = axes.map((a) => shape[a]);
  const is = stridesOf(shape);
  const perm = axes.map((a) => is[a]);
  const out = new Float64Array(x.length);
  const inner = perm.length ? perm[perm.length - 1] : 0;
  forEachRow(outShape, [stridesOf(outShape), perm], (o, len) => {
    const d0 = o[0], s0 = o[1];
    for (let i = 0; i < len; i++) out[d0 + i] = x[s0 + i * inner];
  });
  return out;
}

/** Whether (v, i) beats (bv, bi) for argmin (`min`) or argmax: NaN first, then the lower position on ties. */
function argBetter(v: number, i: number, bv: number, bi: number, min: boolean): boolean {
  if (bi < 0) return true;
  const vn = v !== v, bn = bv !== bv;
  if (vn || bn) return vn && (!bn || i < bi);
  if (v === bv) return i < bi;
  return min ? v < bv : v > bv;
}

/**
 * Per-chunk statistics of a reduction: `statCount(red)` blocks of the kept shape
 * (reduced axes of length 1), one after another.
 */
export function partial(red: ReduceOp, x: Float64Array, shape: number[], axes: number[], offset: number[], full: number[]): Float64Array {
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
      const x0 = o[0], k0 = o[1];
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
        const x0 = o[0], k0 = o[1];
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
      const x0 = o[0], k0 = o[1];
      for (let i = 0; i < len; i++) {
        const v = x[x0 + i * xin], k = k0 + i * kin, acc = out[k];
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
    const x0 = o[0], k0 = o[1], g0 = base + o[2];
    for (let i = 0; i < len; i++) {
      const k = k0 + i * kin, g = g0 + i * gin, v = x[x0 + i * xin];
      if (argBetter(v, g, out[k], out[m + k], isMin)) {
        out[k] = v;
        out[m + k] = g;
      }
    }
  });
  return out;
}

/** Combines partials of `size` output elements; with `final`, gives the reduction's values. */
export function combine(red: ReduceOp, size: number, parts: Float64Array[], final?: { ddof: number; dtype: ArrayDType }): Float64Array {
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
          const a = acc[i], v = p[i];
          if (a !== a) continue;
          if (v !== v || (isMin ? v < a : v > a)) acc[i] = v;
        }
        break;
      }
      case "var":
      case "std":
        for (let i = 0; i < m; i++) {
          const na = acc[i], nb = p[i];
          const n = na + nb;
          if (nb === 0) continue;
          const delta = p[m + i] - acc[m + i];
          acc[2 * m + i] += p[2 * m + i] + (na === 0 ? 0 : (delta * delta * na * nb) / n);
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
    case "max": out = acc; break;
    case "mean": out = acc.subarray(0, m).map((s, i) => s / acc[m + i]); break;
    case "var":
    case "std":
      out = new Float64Array(m);
      for (let i = 0; i < m; i++) {
        const v = acc[2 * m + i] / Math.max(acc[i] - final.ddof, 0);
        out[i] = red === "std" ? Math.sqrt(v) : v;
      }
      break;
    case "argmin":
    case "argmax": out = acc.slice(m); break;
  }
  return narrow(out, final.dtype);
}

/** Σ_p A_p (m × ks[p]) @ B_p (ks[p] × n), row-major, i-k-j order for unit-stride inner loops. */
export function matmul(m: number, n: number, ks: number[], blocks: Float64Array[]): Float64Array {
  const c = new Float64Array(m * n);
  ks.forEach((k, p) => {
    const a = blocks[2 * p], b = blocks[2 * p + 1];
    for (let i = 0; i < m; i++) {
      const ci = i * n;
      for (let q = 0; q < k; q++) {
        const av = a[i * k + q];
        if (av === 0) continue;
        const bq = q * n;
        for (let j = 0; j < n; j++) c[ci + j] += av * b[bq + j];
      }
    }
  });
  return c;
}

/** Cumulative sum along `axis`, plus the last slice of the previous chunk's output when given. */
export function cumsum(x: Float64Array, shape: number[], axis: number, prev?: { values: Float64Array; shape: number[] }): Float64Array {
  const out = x.slice();
  const len = shape[axis];
  let outer = 1, inner = 1;
  for (let d = 0; d < axis; d++) outer *= shape[d];
  for (let d = axis + 1; d < shape.length; d++) inner *= shape[d];
  for (let o = 0; o < outer; o++) {
    if (prev && len > 0) {
      const pl = prev.shape[axis];
      const pb = (o * pl + pl - 1) * inner, b = o * len * inner;
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
