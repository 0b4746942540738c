// Making arrays: constants, ranges, seeded random values, caller data; and the
// functions of several arrays (where, concatenate, stack).
import { ARRAY_DTYPES, promote, sizeOf, type ArrayDType, type Generator } from "../../common/array_plan.js";
import { BasinError, type SourceLocation } from "../../common/errors.js";
import { callerLocation } from "../source_location.js";
import { NDArray, type ArrayLike } from "./ndarray.js";
import { checkShape, fmtShape, normalizeChunks, normAxis, type ChunksSpec } from "./shape.js";

export interface CreateOptions {
  dtype?: ArrayDType;
  chunks?: ChunksSpec;
}

function checkDType(t: string, loc: SourceLocation | undefined): ArrayDType {
  if (!(ARRAY_DTYPES as readonly string[]).includes(t))
    throw new BasinError("BASIN_PLAN", `unknown array dtype "${t}"; use one of ${ARRAY_DTYPES.join(", ")}`, loc);
  return t as ArrayDType;
}

function generated(
  gen: Generator,
  shape: number[],
  o: CreateOptions,
  dflt: ArrayDType,
  loc: SourceLocation | undefined,
): NDArray {
  const s = checkShape(shape, loc);
  const dtype = checkDType(o.dtype ?? dflt, loc);
  return new NDArray({ kind: "generate", gen, shape: s, chunks: normalizeChunks(s, o.chunks, loc), dtype, loc });
}

/** @example array.zeros([1000, 1000], { chunks: 250 }) */
export function zeros(shape: number[], o: CreateOptions = {}): NDArray {
  return generated({ kind: "fill", value: 0 }, shape, o, "float64", callerLocation());
}

/** @example array.ones([3, 4], { dtype: "int32" }) */
export function ones(shape: number[], o: CreateOptions = {}): NDArray {
  return generated({ kind: "fill", value: 1 }, shape, o, "float64", callerLocation());
}

/** An array of one value (dtype from the value: int64 for integers). @example array.full([2, 2], 7) */
export function full(shape: number[], value: number | boolean, o: CreateOptions = {}): NDArray {
  const v = Number(value);
  const dflt: ArrayDType = typeof value === "boolean" ? "bool" : Number.isInteger(v) ? "int64" : "float64";
  return generated({ kind: "fill", value: v }, shape, o, dflt, callerLocation());
}

/**
 * Evenly spaced values in [start, stop), like NumPy (`arange(n)` is 0..n-1).
 *
 * @example
 * array.arange(10); array.arange(1, 2, 0.25, { chunks: 2 })
 */
export function arange(start: number, stop?: number, step = 1, o: CreateOptions = {}): NDArray {
  const loc = callerLocation();
  if (stop === undefined) [start, stop] = [0, start];
  if (!Number.isFinite(start) || !Number.isFinite(stop) || !Number.isFinite(step) || step === 0)
    throw new BasinError(
      "BASIN_PLAN",
      `arange(${start}, ${stop}, ${step}) needs finite numbers and a non-zero step`,
      loc,
    );
  const n = Math.max(0, Math.ceil((stop - start) / step));
  const ints = [start, stop, step].every(Number.isInteger);
  return generated({ kind: "arange", start, step }, [n], o, ints ? "int64" : "float64", loc);
}

/** `num` evenly spaced values from start to stop (inclusive unless endpoint: false). @example array.linspace(0, 1, 11) */
export function linspace(
  start: number,
  stop: number,
  num = 50,
  o: CreateOptions & { endpoint?: boolean } = {},
): NDArray {
  const loc = callerLocation();
  if (!Number.isInteger(num) || num < 0)
    throw new BasinError("BASIN_PLAN", `linspace needs a non-negative integer num, got ${num}`, loc);
  const endpoint = o.endpoint ?? true;
  const div = endpoint ? num - 1 : num;
  const step = div > 0 ? (stop - start) / div : 0;
  return generated({ kind: "linspace", start, stop, step, endpoint }, [num], o, "float64", loc);
}

export interface RandomOptions {
  /** The same seed gives the same values for any chunking (default 0). */
  seed?: number;
  chunks?: ChunksSpec;
}

function seedOf(o: RandomOptions, loc: SourceLocation | undefined): number {
  const seed = o.seed ?? 0;
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff)
    throw new BasinError("BASIN_PLAN", `seed must be an integer in [0, 2^32), got ${seed}`, loc);
  return seed;
}

/** Seeded random arrays, reproducible for any chunking (counter-based: each value depends on its position). */
export const random = {
  /** Uniform in [0, 1). @example array.random.random([100, 100], { seed: 42 }) */
  random(shape: number[], o: RandomOptions = {}): NDArray {
    const loc = callerLocation();
    return generated(
      { kind: "random", dist: "uniform", seed: seedOf(o, loc), a: 0, b: 1 },
      shape,
      { chunks: o.chunks },
      "float64",
      loc,
    );
  },
  /** Normal with mean `loc` and standard deviation `scale`. @example array.random.normal([1000], { seed: 1, scale: 2 }) */
  normal(shape: number[], o: RandomOptions & { loc?: number; scale?: number } = {}): NDArray {
    const loc = callerLocation();
    return generated(
      { kind: "random", dist: "normal", seed: seedOf(o, loc), a: o.loc ?? 0, b: o.scale ?? 1 },
      shape,
      { chunks: o.chunks },
      "float64",
      loc,
    );
  },
  /** Integers in [low, high). @example array.random.integers(0, 10, [5, 5], { seed: 3 }) */
  integers(low: number, high: number, shape: number[], o: RandomOptions = {}): NDArray {
    const loc = callerLocation();
    if (!Number.isInteger(low) || !Number.isInteger(high) || high <= low)
      throw new BasinError("BASIN_PLAN", `random.integers needs integers low < high, got ${low} and ${high}`, loc);
    return generated(
      { kind: "random", dist: "integers", seed: seedOf(o, loc), a: low, b: high },
      shape,
      { chunks: o.chunks },
      "int64",
      loc,
    );
  },
};

/** Typed arrays accepted as data (dtype from the type unless given). */
export type TypedInput = Float64Array | Float32Array | BigInt64Array | Int32Array | Uint8Array | number[];

function dtypeOf(data: TypedInput): ArrayDType {
  if (data instanceof Float32Array) return "float32";
  if (data instanceof BigInt64Array) return "int64";
  if (data instanceof Int32Array) return "int32";
  if (data instanceof Uint8Array) return "bool";
  return "float64";
}

/**
 * The values as `dtype` holds them, in place (NumPy's astype): bool is "not 0" (200 is
 * true), integers drop the fraction, float32 rounds; a value an integer type cannot
 * hold (NaN, ±inf) is BASIN_PLAN.
 */
function asDType(values: Float64Array, dtype: ArrayDType, loc: SourceLocation | undefined): void {
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (dtype === "bool") values[i] = v !== 0 ? 1 : 0;
    else if (dtype === "float32") values[i] = Math.fround(v);
    else if (dtype === "int64" || dtype === "int32") {
      if (!Number.isFinite(v))
        throw new BasinError(
          "BASIN_PLAN",
          `element ${i} is ${v}, which ${dtype} cannot hold; give dtype "float64"`,
          loc,
        );
      values[i] = Math.trunc(v);
    }
  }
}

/**
 * int64 values as the float64 arrays compute them: an integer dtype must hold each
 * exactly (within ±2^53) rather than round silently; a float dtype accepts rounding.
 */
function bigIntsAsDoubles(data: BigInt64Array, dtype: ArrayDType, loc: SourceLocation | undefined): Float64Array {
  const out = new Float64Array(data.length);
  const exact = dtype === "int64" || dtype === "int32";
  for (let i = 0; i < data.length; i++) {
    const v = data[i]!;
    out[i] = Number(v);
    if (exact && (out[i]! > Number.MAX_SAFE_INTEGER || out[i]! < Number.MIN_SAFE_INTEGER))
      throw new BasinError(
        "BASIN_PLAN",
        `element ${i} is ${v}, past ±2^53: Basin's ${dtype} arrays compute in float64, exact only within ±2^53; give dtype "float64" to accept rounding`,
        loc,
      );
  }
  return out;
}

/**
 * An array of the caller's values, C order.
 *
 * @example
 * array.fromTypedArray(new Float64Array([1, 2, 3, 4]), { shape: [2, 2] })
 */
export function fromTypedArray(data: TypedInput, o: CreateOptions & { shape?: number[] } = {}): NDArray {
  const loc = callerLocation();
  const shape = checkShape(o.shape ?? [data.length], loc);
  if (sizeOf(shape) !== data.length)
    throw new BasinError(
      "BASIN_PLAN",
      `shape ${fmtShape(shape)} holds ${sizeOf(shape)} elements but the data has ${data.length}`,
      loc,
    );
  const dtype = checkDType(o.dtype ?? dtypeOf(data), loc);
  const values =
    data instanceof BigInt64Array
      ? bigIntsAsDoubles(data, dtype, loc)
      : Float64Array.from(data as globalThis.ArrayLike<number>);
  asDType(values, dtype, loc);
  return new NDArray({ kind: "data", values, shape, chunks: normalizeChunks(shape, o.chunks, loc), dtype, loc });
}

/** Elements of `a` where `cond` is true, else of `b` (all three broadcast). @example array.where(x.gt(0), x, 0) */
export function where(cond: ArrayLike, a: ArrayLike, b: ArrayLike): NDArray {
  const loc = callerLocation();
  const arrays = [a, b].filter((v): v is NDArray => v instanceof NDArray);
  let dtype: ArrayDType = arrays.length ? arrays.map((v) => v.dtype).reduce(promote) : "float64";
  if (arrays.length < 2)
    for (const v of [a, b])
      if (typeof v === "number" && !Number.isInteger(v) && (dtype === "int64" || dtype === "int32" || dtype === "bool"))
        dtype = "float64";
  if (!(cond instanceof NDArray) && !arrays.length)
    throw new BasinError("BASIN_PLAN", "where needs at least one array", loc);
  return NDArray.map("where", [cond, a, b], loc, dtype);
}

/** Joins arrays along an existing axis. @example array.concatenate([a, b], { axis: 0 }) */
export function concatenate(arrays: NDArray[], o: { axis?: number } = {}): NDArray {
  return concatAt(arrays, o.axis ?? 0, callerLocation());
}

function concatAt(arrays: NDArray[], axisIn: number, loc: SourceLocation | undefined): NDArray {
  if (arrays.length === 0) throw new BasinError("BASIN_PLAN", "concatenate needs at least one array", loc);
  const first = arrays[0];
  if (first.ndim === 0) throw new BasinError("BASIN_PLAN", "concatenate cannot join 0-d arrays; use stack", loc);
  const axis = normAxis(axisIn, first.ndim, loc);
  for (const a of arrays)
    if (a.ndim !== first.ndim || a.shape.some((d, i) => i !== axis && d !== first.shape[i]))
      throw new BasinError(
        "BASIN_PLAN",
        `concatenate along axis ${axis}: shapes ${arrays.map((x) => fmtShape(x.shape)).join(", ")} differ on another axis`,
        loc,
      );
  const shape = first.shape.map((d, i) => (i === axis ? arrays.reduce((n, a) => n + a.shape[i], 0) : d));
  const chunks = first.chunks.map((c, i) => (i === axis ? arrays.flatMap((a) => a.chunks[i]) : c));
  const dtype = arrays.map((a) => a.dtype).reduce(promote);
  const inputs = arrays.map((a) => (a.dtype === dtype ? a : NDArray.map("astype", [a], loc, dtype)).node);
  return new NDArray({ kind: "concatenate", inputs, axis, shape, chunks, dtype, loc });
}

/** Joins same-shaped arrays along a new axis. @example array.stack([a, b], { axis: 1 }) */
export function stack(arrays: NDArray[], o: { axis?: number } = {}): NDArray {
  const loc = callerLocation();
  if (arrays.length === 0) throw new BasinError("BASIN_PLAN", "stack needs at least one array", loc);
  const shape = arrays[0].shape;
  for (const a of arrays)
    if (a.shape.join() !== shape.join())
      throw new BasinError(
        "BASIN_PLAN",
        `stack needs equal shapes, got ${arrays.map((x) => fmtShape(x.shape)).join(", ")}`,
        loc,
      );
  const axis = normAxis(o.axis ?? 0, shape.length + 1, loc);
  const expanded = arrays.map((a) => a.reshapeAt([...shape.slice(0, axis), 1, ...shape.slice(axis)], loc));
  return concatAt(expanded, axis, loc);
}
