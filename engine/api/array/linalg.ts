// Linear algebra on chunked arrays (dask.array.linalg-like): QR and SVD of
// tall-skinny matrices by TSQR (one small R per row block travels, never the
// matrix), a randomized truncated SVD built from those, and solves of small
// systems. Dense kernels: native/src/array/linalg.cc (Householder QR, one-sided Jacobi
// SVD, LU with partial pivoting). Results are float64 (float32 for float32 inputs).
import { type ArrayDType, type Chunks, type LinalgOp } from "../../common/array_plan.js";
import { BasinError, type SourceLocation } from "../../common/errors.js";
import { callerLocation } from "../source_location.js";
import { random } from "./create.js";
import { NDArray } from "./ndarray.js";
import { fmtShape } from "./shape.js";

/** The largest short side a factorization takes: an n × n R (or system) lives in one chunk. */
const MAX_SMALL_SIDE = 5000;

export interface QrResult {
  /** m × k with orthonormal columns, k = min(m, n); chunked by rows like the input. */
  q: NDArray;
  /** k × n upper triangular, one chunk. */
  r: NDArray;
}

export interface SvdResult {
  /** m × k with orthonormal columns. */
  u: NDArray;
  /** k singular values, descending. */
  s: NDArray;
  /** k × n with orthonormal rows (NumPy's Vh). */
  vt: NDArray;
}

export interface SvdCompressedOptions {
  /** Power iterations (each re-orthonormalized by QR): sharper for slowly decaying spectra (default 0). */
  nPowerIter?: number;
  /** Seed of the random projection (default 0). */
  seed?: number;
  /** Extra columns of the projection beyond k (default 10). */
  nOversamples?: number;
}

function floatDType(ts: ArrayDType[]): ArrayDType {
  return ts.every((t) => t === "float32") ? "float32" : "float64";
}

/** A 2-D input whose short side a factorization can hold in one chunk. */
function matrix(a: NDArray, what: string, loc: SourceLocation | undefined): [number, number] {
  if (!(a instanceof NDArray) || a.ndim !== 2 || a.shape.some((d) => !Number.isInteger(d)))
    throw new BasinError(
      "BASIN_PLAN",
      `${what} takes a 2-D array, got ${a instanceof NDArray ? `shape ${fmtShape(a.shape)}` : typeof a}`,
      loc,
    );
  const [m, n] = a.shape;
  if (Math.min(m, n) > MAX_SMALL_SIDE)
    throw new BasinError(
      "BASIN_PLAN",
      `${what} of a ${fmtShape(a.shape)} matrix: TSQR needs a tall-skinny matrix (one side at most ${MAX_SMALL_SIDE}); use linalg.svdCompressed(a, k) for a truncated SVD`,
      loc,
    );
  return [m, n];
}

/** A part of a factorization, cast back to float32 when the inputs were float32. */
function part(
  op: LinalgOp,
  inputs: NDArray[],
  shape: number[],
  chunks: Chunks,
  loc: SourceLocation | undefined,
): NDArray {
  const out = new NDArray({
    kind: "linalg",
    op,
    inputs: inputs.map((x) => x.node),
    shape,
    chunks,
    dtype: "float64",
    loc,
  });
  return floatDType(inputs.map((x) => x.dtype)) === "float32" ? NDArray.map("astype", [out], loc, "float32") : out;
}

function qrAt(a: NDArray, loc: SourceLocation | undefined): QrResult {
  const [m, n] = matrix(a, "linalg.qr", loc);
  const k = Math.min(m, n);
  return {
    q: part("qr_q", [a], [m, k], [a.chunks[0], [k]], loc),
    r: part("qr_r", [a], [k, n], [[k], [n]], loc),
  };
}

function svdAt(a: NDArray, loc: SourceLocation | undefined): SvdResult {
  const [m, n] = matrix(a, "linalg.svd", loc);
  if (m < n) {
    // Short-wide: A = (Aᵀ)ᵀ = (U S Vt)ᵀ = Vtᵀ S Uᵀ.
    const t = svdAt(a.T, loc);
    return { u: t.vt.T, s: t.s, vt: t.u.T };
  }
  return {
    u: part("svd_u", [a], [m, n], [a.chunks[0], [n]], loc),
    s: part("svd_s", [a], [n], [[n]], loc),
    vt: part("svd_vt", [a], [n, n], [[n], [n]], loc),
  };
}

/**
 * QR factorization of a tall-skinny matrix (TSQR): `a = q @ r`. Any row chunking;
 * column chunks are joined (the short side must be at most 5000).
 *
 * @example
 * const { q, r } = array.linalg.qr(array.random.random([100000, 20], { chunks: [10000, 20] }));
 */
export function qr(a: NDArray): QrResult {
  return qrAt(a, callerLocation());
}

/**
 * Economy SVD of a tall-skinny (or short-wide) matrix by TSQR and a Jacobi SVD of
 * the small R: `a = u @ diag(s) @ vt`, s descending. Signs of singular vectors
 * may differ from NumPy's, as between any two LAPACK builds.
 *
 * @example
 * const { u, s, vt } = array.linalg.svd(x);
 */
export function svd(a: NDArray): SvdResult {
  return svdAt(a, callerLocation());
}

/**
 * The k leading singular triplets by randomized projection (Halko et al.; dask's
 * svd_compressed): any matrix size, one pass over `a` per power iteration plus two.
 * Seeded, so reproducible for any chunking.
 *
 * @example
 * const { u, s, vt } = array.linalg.svdCompressed(x, 10, { nPowerIter: 2, seed: 1 });
 */
export function svdCompressed(a: NDArray, k: number, o: SvdCompressedOptions = {}): SvdResult {
  const loc = callerLocation();
  if (!(a instanceof NDArray) || a.ndim !== 2)
    throw new BasinError(
      "BASIN_PLAN",
      `linalg.svdCompressed takes a 2-D array, got ${a instanceof NDArray ? `shape ${fmtShape(a.shape)}` : typeof a}`,
      loc,
    );
  const [m, n] = a.shape;
  if (!Number.isInteger(k) || k < 1 || k > Math.min(m, n))
    throw new BasinError(
      "BASIN_PLAN",
      `linalg.svdCompressed: k must be an integer from 1 to ${Math.min(m, n)} (the short side of ${fmtShape(a.shape)}), got ${k}`,
      loc,
    );
  const iters = o.nPowerIter ?? 0;
  const over = o.nOversamples ?? 10;
  if (!Number.isInteger(iters) || iters < 0 || !Number.isInteger(over) || over < 0)
    throw new BasinError(
      "BASIN_PLAN",
      `linalg.svdCompressed: nPowerIter and nOversamples must be non-negative integers, got ${iters} and ${over}`,
      loc,
    );
  const l = Math.min(n, m, k + over);
  if (l > MAX_SMALL_SIDE)
    throw new BasinError(
      "BASIN_PLAN",
      `linalg.svdCompressed: k + nOversamples = ${k + over} is more than ${MAX_SMALL_SIDE}; ask for fewer components`,
      loc,
    );
  const x = a.dtype === "float64" || a.dtype === "float32" ? a : a.astype("float64");
  const omega = random.normal([n, l], { seed: o.seed ?? 0, chunks: [x.chunks[1], [l]] });
  // The range of `a`, sharpened by power iterations (re-orthonormalized, as dask does).
  let y = x.matmul(omega);
  for (let i = 0; i < iters; i++) y = x.matmul(qrAt(x.T.matmul(qrAt(y, loc).q), loc).q);
  const q = qrAt(y, loc).q;
  // a ≈ q (qᵀ a); the SVD of the small l × n matrix qᵀ a, as that of its tall transpose.
  const t = svdAt(q.T.matmul(x).T, loc);
  const first = `:${k}`;
  return { u: q.matmul(t.vt.T).get(":", first), s: t.s.get(first), vt: t.u.T.get(first) };
}

/**
 * X with `a @ x = b` for a small square `a` (at most 5000 × 5000; LU with partial
 * pivoting); b is a vector or a matrix of right-hand sides. A singular `a` fails
 * the compute with a message saying so.
 *
 * @example
 * const x = array.linalg.solve(a, b);
 */
export function solve(a: NDArray, b: NDArray): NDArray {
  const loc = callerLocation();
  if (!(a instanceof NDArray) || a.ndim !== 2 || a.shape[0] !== a.shape[1])
    throw new BasinError(
      "BASIN_PLAN",
      `linalg.solve needs a square 2-D matrix, got ${a instanceof NDArray ? `shape ${fmtShape(a.shape)}` : typeof a}`,
      loc,
    );
  const n = a.shape[0];
  if (n > MAX_SMALL_SIDE)
    throw new BasinError(
      "BASIN_PLAN",
      `linalg.solve is for small systems (at most ${MAX_SMALL_SIDE} unknowns), got ${n}`,
      loc,
    );
  if (!(b instanceof NDArray) || b.ndim < 1 || b.ndim > 2 || b.shape[0] !== n)
    throw new BasinError(
      "BASIN_PLAN",
      `linalg.solve: b of shape ${b instanceof NDArray ? fmtShape(b.shape) : typeof b} does not fit a of shape ${fmtShape(a.shape)}: b needs ${n} rows`,
      loc,
    );
  return part(
    "solve",
    [a, b],
    b.shape,
    b.shape.map((d) => [d]),
    loc,
  );
}
