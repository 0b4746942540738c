// Steps of array chunk tasks. A chunk is a store table with one float64 column "v"
// holding the chunk's elements in C order; its shape is static, known from the
// plan, so it travels in the step rather than with the data. Why the store: the
// scheduler's references are store handles (release, locality, worker loss all
// work unchanged) and workers share it, so chunks never cross threads by copy.
// Why float64 for every dtype: one kernel per operation; int64/int32/bool are
// exact in float64 up to 2^53, and the logical dtype is applied (float32 rounding,
// int32 wrapping) by each step that makes values of that dtype.
import type { ArrayDType, Generator, MapOp, ReduceOp } from "../common/array_plan.js";

/** An elementwise expression over the task's inputs; leaves broadcast to the step's shape. */
export type ChunkExpr =
  | { k: "in"; input: number; shape: number[]; dtype: ArrayDType }
  | { k: "scalar"; value: number }
  | { k: "op"; op: MapOp; args: ChunkExpr[]; dtype: ArrayDType };

/** A strided box of task input `input` (shape `shape`) copied to `dst` in the output. */
export interface Piece {
  input: number;
  shape: number[];
  start: number[];
  step: number[];
  count: number[];
  dst: number[];
}

export type ArrayStep =
  /** Values of the chunk at `offset` of an array of shape `full`. */
  | { op: "generate"; gen: Generator; dtype: ArrayDType; shape: number[]; offset: number[]; full: number[] }
  | { op: "data"; values: Float64Array }
  | { op: "map"; expr: ChunkExpr; shape: number[] }
  /** Output of `shape` from pieces of the inputs (slicing, rechunking, the final result). */
  | { op: "assemble"; shape: number[]; pieces: Piece[] }
  /** Input of `shape`, axes permuted. */
  | { op: "transpose"; shape: number[]; axes: number[] }
  /**
   * Per-chunk statistics of a reduction over `axes` of an input of `shape`, at
   * `offset` of an array of shape `full` (for arg positions): [stats, ...kept].
   */
  | { op: "partial"; red: ReduceOp; shape: number[]; axes: number[]; offset: number[]; full: number[] }
  /** Combines same-shaped partials; with `final`, gives the values (ddof for var/std). */
  | { op: "combine"; red: ReduceOp; size: number; final?: { ddof: number; dtype: ArrayDType } }
  /** Sum over p of input 2p (m × ks[p]) @ input 2p+1 (ks[p] × n). */
  | { op: "matmul"; m: number; n: number; ks: number[]; dtype: ArrayDType }
  /** Cumulative sum along `axis`; with `carry`, input 1 is the previous chunk's output (its last slice is added). */
  | { op: "cumsum"; shape: number[]; axis: number; carry: boolean; prevShape?: number[]; dtype: ArrayDType }
  /** The elements of input 0 where input 1 is non-zero. */
  | { op: "mask" }
  /** Householder QR of one row block (m × n): packed [Q (m × k), R (k × n)], k = min(m, n). */
  | { op: "qr"; m: number; n: number }
  /**
   * TSQR's second stage: the R factors of the blocks' packed QRs (`blocks[i]` = [m, k] of block i)
   * stacked and factored. Packed [W (S × k), R (k × n)], S = Σ k_i; with `svd`, R = U s Vt is
   * split further: packed [W·U (S × k), s (k), Vt (k × n)].
   */
  | { op: "tsqr"; blocks: [number, number][]; n: number; svd: boolean }
  /** Block i's Q (input 0, packed m × ki first) times rows [offset, offset + ki) of W (input 1, packed first). */
  | { op: "tsqrApply"; m: number; ki: number; offset: number; k: number }
  /** Elements [start, start + count) of a packed chunk. */
  | { op: "extract"; start: number; count: number }
  /** X (n × k) with A X = B: A is input 0 (n × n), B input 1 (n × k). */
  | { op: "solve"; n: number; k: number };

/** Statistics a partial holds per output element. */
export function statCount(red: ReduceOp): number {
  switch (red) {
    case "sum":
    case "min":
    case "max":
      return 1;
    case "mean":
    case "argmin":
    case "argmax":
      return 2;
    case "var":
    case "std":
      return 3;
  }
}
