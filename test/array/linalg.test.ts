// Linear algebra against NumPy: TSQR's Q and R, SVD (tall, short-wide, rank
// deficient), randomized truncated SVD and small solves, on odd chunkings (a chunk
// of one row, an empty chunk, column chunks to join) and 1- and 4-worker clusters.
// Factors are checked by what makes them right (reconstruction, orthogonality,
// singular values vs numpy.linalg.svd), not by signs, which LAPACK leaves free.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { array, BasinError, LocalCluster } from "../../engine/api/index.js";
import type { ArrayResult, ChunksSpec, NDArray } from "../../engine/api/array/index.js";
import { seededRandom } from "../../engine/common/random.js";
import type { NpyArray } from "../../engine/io/npy.js";
import { numpy } from "../helpers/numpy.js";

const THIS = "test/array/linalg.test.ts";

function floats(shape: number[], seed: number): NpyArray {
  const r = seededRandom(seed);
  const n = shape.reduce((a, b) => a * b, 1);
  return { data: Float64Array.from({ length: n }, () => r() * 2 - 1), shape, dtype: "float64" };
}

/** m × n of rank `rank` (a product of random factors), plus `noise`. */
function lowRank(m: number, n: number, rank: number, seed: number, noise = 0): NpyArray {
  const b = floats([m, rank], seed).data as Float64Array,
    c = floats([rank, n], seed + 1).data as Float64Array;
  const e = floats([m, n], seed + 2).data as Float64Array;
  const out = new Float64Array(m * n);
  for (let i = 0; i < m; i++)
    for (let j = 0; j < n; j++) {
      let s = noise * e[i * n + j];
      for (let p = 0; p < rank; p++) s += b[i * rank + p] * c[p * n + j];
      out[i * n + j] = s;
    }
  return { data: out, shape: [m, n], dtype: "float64" };
}

const of = (x: NpyArray, chunks: ChunksSpec): NDArray => array.fromTypedArray(x.data, { shape: x.shape, chunks });

const A = floats([37, 5], 1);
const WIDE = floats([4, 23], 2);
const DEFICIENT = lowRank(30, 6, 3, 3);
const LOW = lowRank(120, 40, 6, 4, 1e-9);
const M = floats([6, 6], 5);
const B = floats([6, 3], 6);
const V = floats([6], 7);
for (let i = 0; i < 6; i++) (M.data as Float64Array)[i * 7] += 3; // well conditioned

const CHUNKINGS: [string, ChunksSpec, ChunksSpec][] = [
  [
    "odd row chunks, columns split",
    [
      [1, 7, 0, 16, 13],
      [2, 3],
    ],
    [
      [2, 2],
      [5, 18],
    ],
  ],
  ["chunks of 1 row", [1, -1], [1, 1]],
  ["one chunk", -1, -1],
];

const clusters: [string, LocalCluster][] = [];
beforeAll(() => {
  clusters.push(["1 worker", new LocalCluster({ workers: 1 })], ["4 workers", new LocalCluster({ workers: 4 })]);
});
afterAll(async () => {
  for (const [, c] of clusters) await c.close();
});

/** Asserts every entry of NumPy's answer to `code` (over `inputs`) is at most `tol`. */
function expectSmall(inputs: Record<string, NpyArray>, code: string, tol: number, label: string): void {
  const errs = numpy([{ name: label, inputs, code }]).get(label)!;
  const vals = Array.from(errs.data as Float64Array);
  for (const [i, v] of vals.entries()) expect(v, `${label}: check ${i} of ${code}`).toBeLessThanOrEqual(tol);
}

const all = (xs: NDArray[], cluster: LocalCluster): Promise<ArrayResult[]> =>
  Promise.all(xs.map((x) => x.compute({ cluster })));

describe("linalg.qr (TSQR)", () => {
  for (const [label, chunks] of CHUNKINGS)
    it(`Q R = A, Qᵀ Q = I, |R| as NumPy's (${label})`, async () => {
      for (const [where, cluster] of clusters) {
        const { q, r } = array.linalg.qr(of(A, chunks));
        expect(q.shape).toEqual([37, 5]);
        expect(r.shape).toEqual([5, 5]);
        const [qv, rv] = await all([q, r], cluster);
        expectSmall(
          { a: A, q: qv, r: rv },
          "np.array([np.abs(q @ r - a).max(), np.abs(q.T @ q - np.eye(5)).max(), np.abs(np.tril(r, -1)).max(), np.abs(np.abs(r) - np.abs(np.linalg.qr(a)[1])).max()])",
          1e-12,
          `qr ${label} ${where}`,
        );
      }
    });

  it("of a short-wide matrix gives square Q and wide R", async () => {
    const { q, r } = array.linalg.qr(of(WIDE, [[1, 3], 5]));
    const [qv, rv] = await all([q, r], clusters[1][1]);
    expect([qv.shape, rv.shape]).toEqual([
      [4, 4],
      [4, 23],
    ]);
    expectSmall(
      { a: WIDE, q: qv, r: rv },
      "np.array([np.abs(q @ r - a).max(), np.abs(q.T @ q - np.eye(4)).max(), np.abs(np.tril(r, -1)).max()])",
      1e-12,
      "qr wide",
    );
  });
});

describe("linalg.svd (TSQR + Jacobi)", () => {
  const CHECK = (k: number) =>
    `np.array([np.abs(u @ np.diag(s) @ vt - a).max(), np.abs(u.T @ u - np.eye(${k})).max(), np.abs(vt @ vt.T - np.eye(${k})).max(), np.abs(s - np.linalg.svd(a, compute_uv=False)).max(), float(np.any(np.diff(s) > 0))])`;
  for (const [label, chunks, wideChunks] of CHUNKINGS)
    it(`tall, short-wide and rank-deficient match numpy.linalg.svd (${label})`, async () => {
      for (const [where, cluster] of clusters) {
        for (const [name, x, ch, k] of [
          ["tall", A, chunks, 5],
          ["wide", WIDE, wideChunks, 4],
          ["rank 3", DEFICIENT, chunks === -1 ? -1 : [[1, 0, 12, 17], 4], 6],
        ] as const) {
          const { u, s, vt } = array.linalg.svd(of(x, ch));
          const [uv, sv, vtv] = await all([u, s, vt], cluster);
          expectSmall({ a: x, u: uv, s: sv, vt: vtv }, CHECK(k), 1e-12, `svd ${name} ${label} ${where}`);
        }
      }
    });

  it("keeps float32 inputs float32", async () => {
    const x = array.fromTypedArray(Float32Array.from(A.data as Float64Array), { shape: A.shape, chunks: [10, 5] });
    const { s } = array.linalg.svd(x);
    const sv = await s.compute({ cluster: clusters[0][1] });
    expect(sv.dtype).toBe("float32");
    expectSmall(
      { a: A, s: sv },
      "np.abs(s - np.linalg.svd(a.astype(np.float32), compute_uv=False))",
      1e-5,
      "svd float32",
    );
  });
});

describe("linalg.svdCompressed (randomized)", () => {
  it("recovers a low-rank matrix's leading triplets, for any chunking and worker count", async () => {
    const ref: number[][] = [];
    for (const chunks of [
      [
        [1, 50, 0, 69],
        [13, 27],
      ],
      17,
    ] as ChunksSpec[])
      for (const [where, cluster] of clusters) {
        const { u, s, vt } = array.linalg.svdCompressed(of(LOW, chunks), 6, { nPowerIter: 1, seed: 3 });
        expect([u.shape, s.shape, vt.shape]).toEqual([[120, 6], [6], [6, 40]]);
        const [uv, sv, vtv] = await all([u, s, vt], cluster);
        expectSmall(
          { a: LOW, u: uv, s: sv, vt: vtv },
          "np.array([np.abs(u @ np.diag(s) @ vt - a).max(), np.abs(u.T @ u - np.eye(6)).max(), np.abs(vt @ vt.T - np.eye(6)).max(), np.abs(s - np.linalg.svd(a, compute_uv=False)[:6]).max()])",
          1e-7,
          `svdCompressed ${JSON.stringify(chunks)} ${where}`,
        );
        ref.push(Array.from(sv.data as Float64Array));
      }
    for (const r of ref) for (const [i, v] of r.entries()) expect(v).toBeCloseTo(ref[0][i], 10);
  });

  it("approximates the top of a full-rank spectrum with power iterations", async () => {
    const x = array.random.random([300, 60], { seed: 9, chunks: [70, 25] });
    const { s } = array.linalg.svdCompressed(x, 3, { nPowerIter: 3, seed: 1 });
    const [xv, sv] = await all([x, s], clusters[1][1]);
    expectSmall(
      { a: xv, s: sv },
      "np.abs(s - np.linalg.svd(a, compute_uv=False)[:3]) / np.linalg.svd(a, compute_uv=False)[:3]",
      2e-2,
      "svdCompressed power",
    );
  });
});

describe("linalg.solve (LU)", () => {
  it("matches numpy.linalg.solve for matrix and vector right-hand sides", async () => {
    for (const [where, cluster] of clusters) {
      const a = of(M, [
        [1, 5],
        [4, 2],
      ]);
      const [x, xv] = await all([array.linalg.solve(a, of(B, [[3, 3], 1])), array.linalg.solve(a, of(V, 4))], cluster);
      expect([x.shape, xv.shape]).toEqual([[6, 3], [6]]);
      expectSmall(
        { a: M, b: B, v: V, x, y: xv },
        "np.array([np.abs(x - np.linalg.solve(a, b)).max(), np.abs(a @ x - b).max(), np.abs(y - np.linalg.solve(a, v)).max()])",
        1e-12,
        `solve ${where}`,
      );
    }
  });

  it("of a singular matrix fails the compute naming the problem and the line", async () => {
    const a = array.fromTypedArray(new Float64Array([1, 2, 2, 4]), { shape: [2, 2] });
    const err = await array.linalg
      .solve(a, array.ones([2]))
      .compute({ cluster: clusters[1][1] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BasinError);
    expect((err as BasinError).detail).toContain("singular");
    expect((err as BasinError).location).toMatch(new RegExp(`^${THIS}:\\d+:`));
  });
});

describe("linalg errors", () => {
  const thrown = (fn: () => unknown): BasinError => {
    try {
      fn();
    } catch (e) {
      expect(e).toBeInstanceOf(BasinError);
      expect((e as BasinError).code).toBe("BASIN_PLAN");
      expect((e as BasinError).location).toMatch(new RegExp(`^${THIS}:\\d+:`));
      return e as BasinError;
    }
    throw new Error("expected an error");
  };
  it("names the shapes and what to do", () => {
    expect(thrown(() => array.linalg.qr(array.ones([3]))).detail).toContain("2-D array, got shape (3,)");
    expect(thrown(() => array.linalg.svd(array.ones([6000, 6000]))).detail).toContain("svdCompressed");
    expect(thrown(() => array.linalg.svdCompressed(array.ones([10, 4]), 5)).detail).toContain("from 1 to 4");
    expect(thrown(() => array.linalg.solve(array.ones([3, 2]), array.ones([3]))).detail).toContain("square");
    expect(thrown(() => array.linalg.solve(array.ones([3, 3]), array.ones([4, 2]))).detail).toContain("b needs 3 rows");
  });
});
