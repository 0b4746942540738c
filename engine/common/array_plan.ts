// The plan of a chunked n-dimensional array: a DAG of nodes, each with its
// shape, chunking and dtype fixed when it is built (the API checks shapes then,
// so lowering never meets a mismatch). Pure data: no Node, no native code.
import type { SourceLocation } from "./errors.js";

/** Element types of arrays (NumPy's names). */
export type ArrayDType = "float64" | "float32" | "int64" | "int32" | "bool";

export const ARRAY_DTYPES: readonly ArrayDType[] = ["float64", "float32", "int64", "int32", "bool"];

/** Chunk sizes per axis: `chunks[d]` sums to `shape[d]`. */
export type Chunks = number[][];

/** Elementwise operations (NumPy ufunc names where one exists). */
export type MapOp =
  | "add"
  | "subtract"
  | "multiply"
  | "divide"
  | "floor_divide"
  | "mod"
  | "power"
  | "maximum"
  | "minimum"
  | "equal"
  | "not_equal"
  | "less"
  | "less_equal"
  | "greater"
  | "greater_equal"
  | "logical_and"
  | "logical_or"
  | "negative"
  | "abs"
  | "sqrt"
  | "exp"
  | "log"
  | "sin"
  | "cos"
  | "tan"
  | "floor"
  | "ceil"
  | "sign"
  | "isnan"
  | "isinf"
  | "logical_not"
  | "where"
  | "astype";

/**
 * Linear algebra outputs: the parts of a tall-skinny QR (TSQR) or SVD of a 2-D
 * input, and `solve` (inputs [a, b], a square). Nodes with the same op family and
 * input share one factorization when lowered.
 */
export type LinalgOp = "qr_q" | "qr_r" | "svd_u" | "svd_s" | "svd_vt" | "solve";

export type ReduceOp = "sum" | "mean" | "min" | "max" | "var" | "std" | "argmin" | "argmax";

/** How one input axis is indexed: a range with a step (kept), or one position (dropped). */
export type AxisIndex = { start: number; step: number; count: number } | { at: number };

/** Values made from positions alone, so any chunking gives the same array. */
export type Generator =
  | { kind: "fill"; value: number }
  /** 1-D: start + i * step. */
  | { kind: "arange"; start: number; step: number }
  /** 1-D: start + i * step; with `endpoint` the last value is exactly `stop`. */
  | { kind: "linspace"; start: number; step: number; stop: number; endpoint: boolean }
  /** Counter-based: the value at flat position i depends on (seed, i) only. a, b: low/high or loc/scale. */
  | { kind: "random"; dist: "uniform" | "normal" | "integers"; seed: number; a: number; b: number };

interface NodeBase {
  shape: number[];
  chunks: Chunks;
  dtype: ArrayDType;
  loc?: SourceLocation;
}

/** A node of an array plan. Nodes are shared by reference: `x.add(x.T)` uses `x` twice. */
export type ArrayNode = NodeBase &
  (
    | { kind: "generate"; gen: Generator }
    /** Values given by the caller, C order (float64 holds every dtype: see lower_array.ts). */
    | { kind: "data"; values: Float64Array }
    /** Elementwise with NumPy broadcasting; a number is a scalar operand. */
    | { kind: "map"; op: MapOp; args: (ArrayNode | number)[] }
    | { kind: "reduce"; op: ReduceOp; input: ArrayNode; axes: number[]; keepdims: boolean; ddof: number }
    | { kind: "transpose"; input: ArrayNode; axes: number[] }
    /** One AxisIndex per input axis. */
    | { kind: "slice"; input: ArrayNode; index: AxisIndex[] }
    /** New shape, same elements in C order. */
    | { kind: "reshape"; input: ArrayNode }
    | { kind: "rechunk"; input: ArrayNode }
    | { kind: "concatenate"; inputs: ArrayNode[]; axis: number }
    /** 2-D @ 2-D (the API turns vectors into 1-row/1-column matrices). */
    | { kind: "matmul"; left: ArrayNode; right: ArrayNode }
    | { kind: "cumsum"; input: ArrayNode; axis: number }
    /** The elements where the same-shaped boolean mask is true, in C order: 1-D, its length known after running. */
    | { kind: "mask"; input: ArrayNode; mask: ArrayNode }
    | { kind: "linalg"; op: LinalgOp; inputs: ArrayNode[] }
  );

/** Elements of a shape (1 for a 0-d array). */
export function sizeOf(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** C-order strides, in elements. */
export function stridesOf(shape: readonly number[]): number[] {
  const s = new Array<number>(shape.length);
  let acc = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    s[d] = acc;
    acc *= shape[d];
  }
  return s;
}

const RANK: Record<ArrayDType, number> = { bool: 0, int32: 1, int64: 2, float32: 3, float64: 4 };

export function isFloat(t: ArrayDType): boolean {
  return t === "float64" || t === "float32";
}

/** NumPy's result type of two arrays. */
export function promote(a: ArrayDType, b: ArrayDType): ArrayDType {
  // int + float32 needs float64 to hold every int exactly, as NumPy decides.
  if ((a === "float32" && (b === "int64" || b === "int32")) || (b === "float32" && (a === "int64" || a === "int32")))
    return "float64";
  return RANK[a] >= RANK[b] ? a : b;
}

/** NumPy 2's (NEP 50) result type of an array and a plain number: the array's kind wins unless the number needs more. */
export function promoteScalar(a: ArrayDType, v: number): ArrayDType {
  if (!Number.isInteger(v) || !Number.isFinite(v)) return isFloat(a) ? a : "float64";
  return a === "bool" ? "int64" : a;
}

/** The dtype a reduction gives (NumPy's, on a 64-bit Linux). */
export function reduceDType(op: ReduceOp, t: ArrayDType): ArrayDType {
  switch (op) {
    case "sum":
      return isFloat(t) ? t : "int64";
    case "min":
    case "max":
      return t;
    case "argmin":
    case "argmax":
      return "int64";
    default:
      return t === "float32" ? "float32" : "float64";
  }
}
