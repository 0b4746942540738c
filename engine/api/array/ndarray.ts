// The lazy chunked n-dimensional array of the `array` namespace.
import {
  ARRAY_DTYPES,
  isFloat,
  promote,
  promoteScalar,
  reduceDType,
  sizeOf,
  type ArrayDType,
  type ArrayNode,
  type AxisIndex,
  type Chunks,
  type MapOp,
  type ReduceOp,
} from "../../common/array_plan.js";
import { BasinError, type SourceLocation } from "../../common/errors.js";
import { callerLocation } from "../source_location.js";
import { runPlan, type ArrayResult } from "../../run/run_plan.js";
import { broadcastShapes, fmtShape, normalizeChunks, normAxis, type ChunksSpec } from "./shape.js";
import type { ComputeOptions } from "../../run/stored.js";

/** An operand of elementwise operations: an array or a plain number. */
export type ArrayLike = NDArray | number;

export interface ReduceOptions {
  /** Axis or axes to reduce (default: all). Negative counts from the end. */
  axis?: number | number[];
  keepdims?: boolean;
}

export interface VarOptions extends ReduceOptions {
  /** Delta degrees of freedom: the divisor is n - ddof (default 0, as NumPy). */
  ddof?: number;
}

/** One index per axis: a position, "start:stop:step" (NumPy slice syntax), null or ":" for all, or { start, stop, step }. */
export type IndexItem = number | string | null | { start?: number; stop?: number; step?: number };

const COMPARISON = new Set<MapOp>([
  "equal",
  "not_equal",
  "less",
  "less_equal",
  "greater",
  "greater_equal",
  "logical_and",
  "logical_or",
  "logical_not",
  "isnan",
  "isinf",
]);
const FLOAT_MATH = new Set<MapOp>(["sqrt", "exp", "log", "sin", "cos", "tan"]);

/** The result dtype of an elementwise op, NumPy's rules. */
function mapDType(op: MapOp, args: ArrayLike[]): ArrayDType {
  if (COMPARISON.has(op)) return "bool";
  const arrays = args.filter((a): a is NDArray => a instanceof NDArray);
  let t = arrays.map((a) => a.dtype).reduce(promote);
  for (const a of args) if (typeof a === "number") t = promoteScalar(t, a);
  if (FLOAT_MATH.has(op) || op === "divide") return isFloat(t) ? t : "float64";
  if (t === "bool" && (op === "negative" || op === "subtract")) return "int64";
  return t;
}

/**
 * A lazy, chunked n-dimensional array. Operations build a plan; `compute()` runs it
 * on the cluster's workers, one task per chunk.
 *
 * @example
 * import { array } from "basin";
 * const x = array.random.random([1000, 1000], { seed: 1, chunks: 250 });
 * const y = x.add(x.T).sub(x.mean({ axis: 0 }));
 * const { data, shape } = await y.sum().compute();
 */
export class NDArray {
  /** @internal */
  constructor(readonly node: ArrayNode) {}

  get shape(): number[] {
    return [...this.node.shape];
  }
  get dtype(): ArrayDType {
    return this.node.dtype;
  }
  get chunks(): Chunks {
    return this.node.chunks.map((c) => [...c]);
  }
  get ndim(): number {
    return this.node.shape.length;
  }
  get size(): number {
    return sizeOf(this.node.shape);
  }

  /** @internal Builds an elementwise node (shapes broadcast, chunks from the first array that spans each axis). */
  static map(op: MapOp, args: ArrayLike[], loc: SourceLocation | undefined, dtype?: ArrayDType): NDArray {
    const arrays = args.filter((a): a is NDArray => a instanceof NDArray);
    for (const a of arrays) a.known(op, loc);
    const shape = broadcastShapes(
      arrays.map((a) => a.node.shape),
      op,
      loc,
    );
    const chunks = shape.map((d, j) => {
      for (const a of arrays) {
        const i = j - (shape.length - a.ndim);
        if (i >= 0 && a.node.shape[i] === d) return [...a.node.chunks[i]];
      }
      return [d];
    });
    const nodeArgs = args.map((a) => (a instanceof NDArray ? a.node : a));
    return new NDArray({ kind: "map", op, args: nodeArgs, shape, chunks, dtype: dtype ?? mapDType(op, args), loc });
  }

  /** A masked selection has a length known only after running: most operations need it computed first. */
  private known(what: string, loc: SourceLocation | undefined): void {
    if (this.node.kind === "mask")
      throw new BasinError(
        "BASIN_PLAN",
        `${what}: a boolean-mask selection has a length known only after it runs; compute() it first, then build a new array from the result`,
        loc,
      );
  }

  /** @example x.add(1) */
  add(o: ArrayLike): NDArray {
    return NDArray.map("add", [this, o], callerLocation());
  }
  /** @example x.sub(x.mean({ axis: 0 })) */
  sub(o: ArrayLike): NDArray {
    return NDArray.map("subtract", [this, o], callerLocation());
  }
  /** @example x.mul(2) */
  mul(o: ArrayLike): NDArray {
    return NDArray.map("multiply", [this, o], callerLocation());
  }
  /** True division (ints give float64). @example x.div(y) */
  div(o: ArrayLike): NDArray {
    return NDArray.map("divide", [this, o], callerLocation());
  }
  /** @example x.floorDiv(3) */
  floorDiv(o: ArrayLike): NDArray {
    return NDArray.map("floor_divide", [this, o], callerLocation());
  }
  /** Remainder with the sign of the divisor (NumPy's mod). @example x.mod(3) */
  mod(o: ArrayLike): NDArray {
    return NDArray.map("mod", [this, o], callerLocation());
  }
  /** @example x.pow(2) */
  pow(o: ArrayLike): NDArray {
    return NDArray.map("power", [this, o], callerLocation());
  }
  /** Elementwise maximum (NaN wins). @example x.maximum(0) */
  maximum(o: ArrayLike): NDArray {
    return NDArray.map("maximum", [this, o], callerLocation());
  }
  /** @example x.minimum(1) */
  minimum(o: ArrayLike): NDArray {
    return NDArray.map("minimum", [this, o], callerLocation());
  }
  /** @example x.eq(0) */
  eq(o: ArrayLike): NDArray {
    return NDArray.map("equal", [this, o], callerLocation());
  }
  /** @example x.ne(0) */
  ne(o: ArrayLike): NDArray {
    return NDArray.map("not_equal", [this, o], callerLocation());
  }
  /** @example x.lt(0.5) */
  lt(o: ArrayLike): NDArray {
    return NDArray.map("less", [this, o], callerLocation());
  }
  /** @example x.le(0.5) */
  le(o: ArrayLike): NDArray {
    return NDArray.map("less_equal", [this, o], callerLocation());
  }
  /** @example x.gt(0.5) */
  gt(o: ArrayLike): NDArray {
    return NDArray.map("greater", [this, o], callerLocation());
  }
  /** @example x.ge(0.5) */
  ge(o: ArrayLike): NDArray {
    return NDArray.map("greater_equal", [this, o], callerLocation());
  }
  /** @example x.gt(0).and(x.lt(1)) */
  and(o: ArrayLike): NDArray {
    return NDArray.map("logical_and", [this, o], callerLocation());
  }
  /** @example x.lt(0).or(x.gt(1)) */
  or(o: ArrayLike): NDArray {
    return NDArray.map("logical_or", [this, o], callerLocation());
  }
  /** @example x.gt(0).not() */
  not(): NDArray {
    return NDArray.map("logical_not", [this], callerLocation());
  }
  /** @example x.neg() */
  neg(): NDArray {
    return NDArray.map("negative", [this], callerLocation());
  }
  /** @example x.abs() */
  abs(): NDArray {
    return NDArray.map("abs", [this], callerLocation());
  }
  /** @example x.sqrt() */
  sqrt(): NDArray {
    return NDArray.map("sqrt", [this], callerLocation());
  }
  /** @example x.exp() */
  exp(): NDArray {
    return NDArray.map("exp", [this], callerLocation());
  }
  /** Natural logarithm. @example x.log() */
  log(): NDArray {
    return NDArray.map("log", [this], callerLocation());
  }
  /** @example x.sin() */
  sin(): NDArray {
    return NDArray.map("sin", [this], callerLocation());
  }
  /** @example x.cos() */
  cos(): NDArray {
    return NDArray.map("cos", [this], callerLocation());
  }
  /** @example x.tan() */
  tan(): NDArray {
    return NDArray.map("tan", [this], callerLocation());
  }
  /** @example x.floor() */
  floor(): NDArray {
    return NDArray.map("floor", [this], callerLocation());
  }
  /** @example x.ceil() */
  ceil(): NDArray {
    return NDArray.map("ceil", [this], callerLocation());
  }
  /** @example x.sign() */
  sign(): NDArray {
    return NDArray.map("sign", [this], callerLocation());
  }
  /** @example x.isnan() */
  isnan(): NDArray {
    return NDArray.map("isnan", [this], callerLocation());
  }
  /** @example x.isinf() */
  isinf(): NDArray {
    return NDArray.map("isinf", [this], callerLocation());
  }
  /** Converts the elements (float → int truncates toward zero). @example x.astype("int32") */
  astype(dtype: ArrayDType): NDArray {
    const loc = callerLocation();
    if (!(ARRAY_DTYPES as readonly string[]).includes(dtype))
      throw new BasinError("BASIN_PLAN", `unknown array dtype "${dtype}"; use one of ${ARRAY_DTYPES.join(", ")}`, loc);
    return NDArray.map("astype", [this], loc, dtype);
  }

  private reduce(op: ReduceOp, o: VarOptions, loc: SourceLocation | undefined): NDArray {
    this.known(op, loc);
    const nd = this.ndim;
    let axes: number[];
    if (o.axis === undefined) axes = [...Array(nd).keys()];
    else
      axes = [...new Set((Array.isArray(o.axis) ? o.axis : [o.axis]).map((a) => normAxis(a, nd, loc)))].sort(
        (a, b) => a - b,
      );
    if ((op === "argmin" || op === "argmax") && axes.length !== nd && axes.length !== 1)
      throw new BasinError("BASIN_PLAN", `${op} takes one axis or none, got [${axes.join(", ")}]`, loc);
    if (
      (op === "min" || op === "max" || op === "argmin" || op === "argmax") &&
      axes.some((a) => this.node.shape[a] === 0)
    )
      throw new BasinError(
        "BASIN_PLAN",
        `${op} of an empty axis (shape ${fmtShape(this.node.shape)}): there is no identity; filter or check the length first`,
        loc,
      );
    const ddof = o.ddof ?? 0;
    if (!Number.isFinite(ddof)) throw new BasinError("BASIN_PLAN", `ddof must be a number, got ${ddof}`, loc);
    const keepdims = o.keepdims ?? false;
    const shape = this.node.shape.flatMap((d, i) => (axes.includes(i) ? (keepdims ? [1] : []) : [d]));
    const chunks = this.node.chunks.flatMap((c, i) => (axes.includes(i) ? (keepdims ? [[1]] : []) : [[...c]]));
    return new NDArray({
      kind: "reduce",
      op,
      input: this.node,
      axes,
      keepdims,
      ddof,
      shape,
      chunks,
      dtype: reduceDType(op, this.dtype),
      loc,
    });
  }

  /** @example x.sum({ axis: 0 }) */
  sum(o: ReduceOptions = {}): NDArray {
    return this.reduce("sum", o, callerLocation());
  }
  /** @example x.mean({ axis: 0 }) */
  mean(o: ReduceOptions = {}): NDArray {
    return this.reduce("mean", o, callerLocation());
  }
  /** NaN if any element is NaN, as NumPy. @example x.min() */
  min(o: ReduceOptions = {}): NDArray {
    return this.reduce("min", o, callerLocation());
  }
  /** @example x.max({ axis: 1, keepdims: true }) */
  max(o: ReduceOptions = {}): NDArray {
    return this.reduce("max", o, callerLocation());
  }
  /** @example x.var({ ddof: 1 }) */
  var(o: VarOptions = {}): NDArray {
    return this.reduce("var", o, callerLocation());
  }
  /** @example x.std({ axis: 0, ddof: 1 }) */
  std(o: VarOptions = {}): NDArray {
    return this.reduce("std", o, callerLocation());
  }
  /** Position of the first minimum (flat without an axis). @example x.argmin({ axis: 1 }) */
  argmin(o: ReduceOptions = {}): NDArray {
    return this.reduce("argmin", o, callerLocation());
  }
  /** @example x.argmax() */
  argmax(o: ReduceOptions = {}): NDArray {
    return this.reduce("argmax", o, callerLocation());
  }

  /** Cumulative sum along an axis (the flattened array without one). @example x.cumsum({ axis: 0 }) */
  cumsum(o: { axis?: number } = {}): NDArray {
    const loc = callerLocation();
    this.known("cumsum", loc);
    const src = o.axis === undefined && this.ndim !== 1 ? this.reshapeAt([this.size], loc) : this;
    const axis = normAxis(o.axis ?? 0, src.ndim, loc);
    const dtype = isFloat(this.dtype) ? this.dtype : "int64";
    return new NDArray({ kind: "cumsum", input: src.node, axis, shape: src.shape, chunks: src.chunks, dtype, loc });
  }

  /** Axes permuted (reversed by default). @example x.transpose([1, 0, 2]) */
  transpose(axes?: number[]): NDArray {
    return this.transposeAt(axes, callerLocation());
  }

  /** The transpose. @example x.add(x.T) */
  get T(): NDArray {
    return this.transposeAt(undefined, callerLocation());
  }

  private transposeAt(axes: number[] | undefined, loc: SourceLocation | undefined): NDArray {
    this.known("transpose", loc);
    const nd = this.ndim;
    const ax = axes ? axes.map((a) => normAxis(a, nd, loc)) : [...Array(nd).keys()].reverse();
    if (ax.length !== nd || new Set(ax).size !== nd)
      throw new BasinError(
        "BASIN_PLAN",
        `transpose axes [${axes?.join(", ")}] must name each of the ${nd} axes once`,
        loc,
      );
    return new NDArray({
      kind: "transpose",
      input: this.node,
      axes: ax,
      shape: ax.map((a) => this.node.shape[a]),
      chunks: ax.map((a) => [...this.node.chunks[a]]),
      dtype: this.dtype,
      loc,
    });
  }

  /**
   * NumPy basic indexing, one item per leading axis; or a boolean mask of the same shape (gives 1-D).
   *
   * @example
   * x.get("1:10:2", 3)   // x[1:10:2, 3]
   * x.get(x.gt(0))       // x[x > 0]
   */
  get(...index: IndexItem[] | [NDArray]): NDArray {
    const loc = callerLocation();
    this.known("get", loc);
    if (index.length === 1 && index[0] instanceof NDArray) {
      const m = index[0];
      m.known("get", loc);
      if (m.dtype !== "bool")
        throw new BasinError(
          "BASIN_PLAN",
          `an array index must be a boolean mask, got dtype ${m.dtype}; compare first (x.gt(0))`,
          loc,
        );
      if (m.shape.join() !== this.node.shape.join())
        throw new BasinError(
          "BASIN_PLAN",
          `boolean mask of shape ${fmtShape(m.shape)} does not match the array's shape ${fmtShape(this.node.shape)}`,
          loc,
        );
      return new NDArray({
        kind: "mask",
        input: this.node,
        mask: m.node,
        shape: [NaN],
        chunks: [[NaN]],
        dtype: this.dtype,
        loc,
      });
    }
    const items = index as IndexItem[];
    if (items.length > this.ndim)
      throw new BasinError(
        "BASIN_PLAN",
        `too many indices: ${items.length} for an array of shape ${fmtShape(this.node.shape)}`,
        loc,
      );
    const idx: AxisIndex[] = this.node.shape.map((n, d) =>
      axisIndex(d < items.length ? items[d] : null, n, d, this.node.shape, loc),
    );
    const shape: number[] = [];
    idx.forEach((ix) => "count" in ix && shape.push(ix.count));
    return new NDArray({
      kind: "slice",
      input: this.node,
      index: idx,
      shape,
      chunks: sliceChunks(this.node.chunks, idx),
      dtype: this.dtype,
      loc,
    });
  }

  /** Same elements in C order, new shape (one -1 is inferred). @example x.reshape([-1, 4]) */
  reshape(shape: number[], o: { chunks?: ChunksSpec } = {}): NDArray {
    const loc = callerLocation();
    this.known("reshape", loc);
    return this.reshapeAt(shape, loc, o.chunks);
  }

  /** @internal */
  reshapeAt(shape: number[], loc: SourceLocation | undefined, chunks?: ChunksSpec): NDArray {
    const free = shape.filter((d) => d === -1).length;
    const known = sizeOf(shape.filter((d) => d !== -1));
    const out = shape.map((d) => (d === -1 ? (known === 0 ? 0 : this.size / known) : d));
    if (free > 1 || out.some((d) => !Number.isInteger(d) || d < 0) || sizeOf(out) !== this.size)
      throw new BasinError(
        "BASIN_PLAN",
        `cannot reshape an array of shape ${fmtShape(this.node.shape)} (${this.size} elements) into ${fmtShape(shape)}`,
        loc,
      );
    // Only length-1 axes added or removed: keep the chunks (a view); else the given or automatic chunks.
    const core = this.node.shape.filter((d) => d !== 1).join();
    let outChunks: Chunks;
    if (chunks === undefined && core === out.filter((d) => d !== 1).join()) {
      const kept = this.node.chunks.filter((_, d) => this.node.shape[d] !== 1);
      let k = 0;
      outChunks = out.map((d) => (d === 1 ? [1] : [...kept[k++]]));
    } else outChunks = normalizeChunks(out, chunks, loc);
    return new NDArray({ kind: "reshape", input: this.node, shape: out, chunks: outChunks, dtype: this.dtype, loc });
  }

  /** New chunk sizes (same values). @example x.rechunk([1000, -1]) */
  rechunk(chunks: ChunksSpec): NDArray {
    const loc = callerLocation();
    this.known("rechunk", loc);
    return new NDArray({
      kind: "rechunk",
      input: this.node,
      shape: this.shape,
      chunks: normalizeChunks(this.node.shape, chunks, loc),
      dtype: this.dtype,
      loc,
    });
  }

  /** Matrix product (1-D operands as vectors, NumPy's rules); blocked by chunks. @example a.matmul(b) */
  matmul(o: NDArray): NDArray {
    return matmulAt(this, o, callerLocation());
  }

  /** Same as matmul for 1-D and 2-D operands. @example a.dot(b) */
  dot(o: NDArray): NDArray {
    return matmulAt(this, o, callerLocation());
  }

  /**
   * Runs the plan; the result's data is a typed array of its dtype (int64: BigInt64Array, bool: Uint8Array).
   *
   * @example
   * const { data, shape, dtype } = await x.sum({ axis: 0 }).compute();
   */
  compute(options: ComputeOptions = {}): Promise<ArrayResult> {
    return runPlan({ kind: "array", node: this.node }, options);
  }
}

function parseSlice(
  item: string,
  d: number,
  loc: SourceLocation | undefined,
): { start?: number; stop?: number; step?: number } | number {
  const parts = item.split(":").map((s) => s.trim());
  const num = (s: string | undefined) => {
    if (s === undefined || s === "") return undefined;
    const n = Number(s);
    if (!Number.isInteger(n))
      throw new BasinError("BASIN_PLAN", `index "${item}" of axis ${d} is not "start:stop:step" with integers`, loc);
    return n;
  };
  if (parts.length === 1) return num(parts[0]) ?? NaN;
  if (parts.length > 3)
    throw new BasinError("BASIN_PLAN", `index "${item}" of axis ${d} has more than two colons`, loc);
  return { start: num(parts[0]), stop: num(parts[1]), step: num(parts[2]) };
}

/** NumPy's rules for one axis of basic indexing (slices clamp, positions must be in range). */
function axisIndex(item: IndexItem, n: number, d: number, shape: number[], loc: SourceLocation | undefined): AxisIndex {
  const it = typeof item === "string" ? parseSlice(item, d, loc) : item;
  if (typeof it === "number") {
    if (!Number.isInteger(it) || it < -n || it >= n)
      throw new BasinError(
        "BASIN_PLAN",
        `index ${typeof item === "string" ? `"${item}"` : item} is out of range for axis ${d} of length ${n} (array shape ${fmtShape(shape)})`,
        loc,
      );
    return { at: it < 0 ? it + n : it };
  }
  const step = it?.step ?? 1;
  if (step === 0 || !Number.isInteger(step))
    throw new BasinError("BASIN_PLAN", `slice step of axis ${d} must be a non-zero integer`, loc);
  const clamp = (v: number | undefined, dflt: number, lo: number, hi: number) => {
    if (v === undefined) return dflt;
    const x = v < 0 ? v + n : v;
    return Math.min(Math.max(x, lo), hi);
  };
  const start = step > 0 ? clamp(it?.start, 0, 0, n) : clamp(it?.start, n - 1, -1, n - 1);
  const stop = step > 0 ? clamp(it?.stop, n, 0, n) : clamp(it?.stop, -1, -1, n - 1);
  const count = Math.max(0, Math.ceil((stop - start) / step));
  return { start: count ? start : 0, step, count };
}

/** The chunks of a slice: selected positions grouped by the input chunk they fall in. */
function sliceChunks(chunks: Chunks, index: AxisIndex[]): Chunks {
  const out: Chunks = [];
  index.forEach((ix, d) => {
    if ("at" in ix) return;
    const bounds = [0];
    for (const c of chunks[d]) bounds.push(bounds[bounds.length - 1] + c);
    const chunkOf = (p: number) => bounds.findIndex((b, i) => p >= b && p < bounds[i + 1]);
    const sizes: number[] = [];
    let prev = -1;
    for (let k = 0; k < ix.count; k++) {
      const c = chunkOf(ix.start + k * ix.step);
      if (c === prev) sizes[sizes.length - 1]++;
      else sizes.push(1);
      prev = c;
    }
    out.push(sizes.length ? sizes : [0]);
  });
  return out;
}

function matmulAt(a: NDArray, b: NDArray, loc: SourceLocation | undefined): NDArray {
  if (a.ndim < 1 || a.ndim > 2 || b.ndim < 1 || b.ndim > 2)
    throw new BasinError(
      "BASIN_PLAN",
      `matmul takes 1-D or 2-D arrays, got shapes ${fmtShape(a.shape)} and ${fmtShape(b.shape)}`,
      loc,
    );
  const l = a.ndim === 1 ? a.reshapeAt([1, a.shape[0]], loc) : a;
  const r = b.ndim === 1 ? b.reshapeAt([b.shape[0], 1], loc) : b;
  if (l.shape[1] !== r.shape[0])
    throw new BasinError(
      "BASIN_PLAN",
      `matmul: shapes ${fmtShape(a.shape)} and ${fmtShape(b.shape)} are not aligned (${l.shape[1]} ≠ ${r.shape[0]}): the last axis of the left must equal the first of the right`,
      loc,
    );
  const dtype = promote(a.dtype, b.dtype);
  const node: ArrayNode = {
    kind: "matmul",
    left: l.node,
    right: r.node,
    shape: [l.shape[0], r.shape[1]],
    chunks: [[...l.chunks[0]], [...r.chunks[1]]],
    dtype,
    loc,
  };
  const out = new NDArray(node);
  const shape = [...(a.ndim === 2 ? [a.shape[0]] : []), ...(b.ndim === 2 ? [b.shape[1]] : [])];
  return shape.length === 2 ? out : out.reshapeAt(shape, loc);
}
