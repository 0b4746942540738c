// Arrays against NumPy: every operation on inputs with NaN and ±inf, chunked in
// single elements, raggedly (last chunk shorter) and automatically, on a 1-worker
// and a 4-worker cluster. One python3 process answers every case.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { array, LocalCluster } from "../../engine/api/index.js";
import type { NDArray } from "../../engine/api/array/index.js";
import type { ChunksSpec } from "../../engine/api/array/index.js";
import { seededRandom } from "../../engine/common/random.js";
import type { NpyArray } from "../../engine/io/npy.js";
import { expectSameArray, numpy } from "../helpers/numpy.js";

/** Random floats, some NaN and ±inf when `special`. */
function floats(shape: number[], seed: number, special = false): NpyArray {
  const r = seededRandom(seed);
  const n = shape.reduce((a, b) => a * b, 1);
  const data = Float64Array.from({ length: n }, () => {
    const u = r();
    if (special && u < 0.05) return NaN;
    if (special && u < 0.08) return u < 0.065 ? Infinity : -Infinity;
    return Math.round((r() * 20 - 10) * 1000) / 1000;
  });
  return { data, shape, dtype: "float64" };
}

function ints(shape: number[], seed: number, lo = -5, hi = 6): NpyArray {
  const r = seededRandom(seed);
  const n = shape.reduce((a, b) => a * b, 1);
  return {
    data: BigInt64Array.from({ length: n }, () => BigInt(lo + Math.floor(r() * (hi - lo)))),
    shape,
    dtype: "int64",
  };
}

const IN = {
  a: floats([7, 5], 1),
  n: floats([7, 5], 2, true), // with NaN and infinities
  b: floats([5], 3),
  c: floats([7, 1], 4),
  m: floats([6, 6], 5),
  d: floats([3, 4, 5], 6),
  i: ints([7, 5], 7),
  j: ints([7, 5], 8, -3, 4), // zeros: integer division by zero
  k: floats([5, 4], 9),
  v: floats([5], 10),
  w: floats([7], 11),
};
type Name = keyof typeof IN;
type Xs = Record<Name, NDArray>;

interface Case {
  name: string;
  code: string;
  build: (x: Xs) => NDArray;
  rtol?: number;
}

const CASES: Case[] = [
  { name: "seed example", code: "m + m.T - m.mean(axis=0)", build: ({ m }) => m.add(m.T).sub(m.mean({ axis: 0 })) },
  { name: "broadcast row", code: "a + b", build: ({ a, b }) => a.add(b) },
  { name: "broadcast column", code: "a - c", build: ({ a, c }) => a.sub(c) },
  { name: "outer broadcast", code: "c * b", build: ({ c, b }) => c.mul(b) },
  { name: "scalar ops", code: "(a * 2.5 - 1) / 3", build: ({ a }) => a.mul(2.5).sub(1).div(3) },
  { name: "nan arithmetic", code: "n * a + n", build: ({ n, a }) => n.mul(a).add(n) },
  { name: "float / int with zeros", code: "a / j", build: ({ a, j }) => a.div(j) },
  { name: "int floor_divide", code: "i // j", build: ({ i, j }) => i.floorDiv(j) },
  { name: "int mod", code: "i % j", build: ({ i, j }) => i.mod(j) },
  { name: "float mod", code: "a % 3", build: ({ a }) => a.mod(3) },
  { name: "int + int scalar", code: "i + 1", build: ({ i }) => i.add(1) },
  { name: "int true divide", code: "i / 2", build: ({ i }) => i.div(2) },
  { name: "int * float scalar", code: "i * 0.5", build: ({ i }) => i.mul(0.5) },
  { name: "power", code: "np.abs(a) ** 0.5 + i ** 2", build: ({ a, i }) => a.abs().pow(0.5).add(i.pow(2)) },
  { name: "comparisons", code: "(n > 0.5) & (n <= 8)", build: ({ n }) => n.gt(0.5).and(n.le(8)) },
  { name: "nan equality", code: "(n == n) | (n != 1)", build: ({ n }) => n.eq(n).or(n.ne(1)) },
  { name: "not", code: "~(a < 0)", build: ({ a }) => a.lt(0).not() },
  { name: "where", code: "np.where(n > 0, n, c)", build: ({ n, c }) => array.where(n.gt(0), n, c) },
  { name: "where scalar", code: "np.where(a > 0, a, 0.0)", build: ({ a }) => array.where(a.gt(0), a, 0) },
  {
    name: "math",
    code: "np.sqrt(np.abs(n)) + np.exp(-np.abs(a)) + np.log(np.abs(a) + 1)",
    build: ({ n, a }) => n.abs().sqrt().add(a.abs().neg().exp()).add(a.abs().add(1).log()),
  },
  {
    name: "trig",
    code: "np.sin(a) * np.cos(a) - np.tan(a / 10)",
    build: ({ a }) => a.sin().mul(a.cos()).sub(a.div(10).tan()),
  },
  {
    name: "rounding",
    code: "np.floor(n) + np.ceil(a) + np.sign(n)",
    build: ({ n, a }) => n.floor().add(a.ceil()).add(n.sign()),
  },
  { name: "isnan isinf", code: "np.isnan(n) | np.isinf(n)", build: ({ n }) => n.isnan().or(n.isinf()) },
  {
    name: "maximum minimum",
    code: "np.maximum(n, a) - np.minimum(a, 0)",
    build: ({ n, a }) => n.maximum(a).sub(a.minimum(0)),
  },
  { name: "astype int32", code: "(a * 3).astype(np.int32)", build: ({ a }) => a.mul(3).astype("int32") },
  {
    name: "astype float32",
    code: "a.astype(np.float32) * np.float32(1.5)",
    build: ({ a }) => a.astype("float32").mul(1.5),
    rtol: 1e-6,
  },
  {
    name: "int to float32",
    code: "i.astype(np.int32).astype(np.float32) / np.float32(3)",
    build: ({ i }) => i.astype("int32").astype("float32").div(3),
    rtol: 1e-6,
  },
  // reductions
  { name: "sum all", code: "a.sum()", build: ({ a }) => a.sum() },
  { name: "sum axis 0", code: "a.sum(axis=0)", build: ({ a }) => a.sum({ axis: 0 }) },
  {
    name: "sum axis 1 keepdims",
    code: "a.sum(axis=1, keepdims=True)",
    build: ({ a }) => a.sum({ axis: 1, keepdims: true }),
  },
  { name: "int sum", code: "i.sum(axis=0)", build: ({ i }) => i.sum({ axis: 0 }) },
  { name: "bool sum", code: "(a > 0).sum(axis=1)", build: ({ a }) => a.gt(0).sum({ axis: 1 }) },
  { name: "mean", code: "a.mean(axis=-1)", build: ({ a }) => a.mean({ axis: -1 }) },
  { name: "int mean", code: "i.mean()", build: ({ i }) => i.mean() },
  {
    name: "min max",
    code: "a.min(axis=0) + a.max(axis=0)",
    build: ({ a }) => a.min({ axis: 0 }).add(a.max({ axis: 0 })),
  },
  {
    name: "min max nan",
    code: "n.min(axis=1) - n.max(axis=1)",
    build: ({ n }) => n.min({ axis: 1 }).sub(n.max({ axis: 1 })),
  },
  { name: "int max", code: "i.max(axis=1)", build: ({ i }) => i.max({ axis: 1 }) },
  { name: "var", code: "a.var(axis=0)", build: ({ a }) => a.var({ axis: 0 }) },
  { name: "var all", code: "a.var()", build: ({ a }) => a.var() },
  { name: "std ddof", code: "a.std(axis=1, ddof=1)", build: ({ a }) => a.std({ axis: 1, ddof: 1 }) },
  { name: "var nan", code: "n.var(axis=0)", build: ({ n }) => n.var({ axis: 0 }) },
  { name: "argmin", code: "a.argmin(axis=0)", build: ({ a }) => a.argmin({ axis: 0 }) },
  { name: "argmax axis 1", code: "a.argmax(axis=1)", build: ({ a }) => a.argmax({ axis: 1 }) },
  { name: "argmax flat", code: "a.argmax()", build: ({ a }) => a.argmax() },
  { name: "argmin nan", code: "n.argmin(axis=1)", build: ({ n }) => n.argmin({ axis: 1 }) },
  { name: "int argmax ties", code: "i.argmax(axis=0)", build: ({ i }) => i.argmax({ axis: 0 }) },
  { name: "3-d sum axes", code: "d.sum(axis=(0, 2))", build: ({ d }) => d.sum({ axis: [0, 2] }) },
  {
    name: "3-d mean keepdims",
    code: "d.mean(axis=(1, 2), keepdims=True)",
    build: ({ d }) => d.mean({ axis: [1, 2], keepdims: true }),
  },
  { name: "3-d argmin flat", code: "d.argmin()", build: ({ d }) => d.argmin() },
  { name: "3-d std", code: "d.std(axis=1)", build: ({ d }) => d.std({ axis: 1 }) },
  // layout
  { name: "transpose", code: "a.T", build: ({ a }) => a.T },
  { name: "3-d transpose", code: "d.transpose(1, 0, 2) + 1", build: ({ d }) => d.transpose([1, 0, 2]).add(1) },
  { name: "3-d reversed", code: "d.T", build: ({ d }) => d.T },
  { name: "slice steps", code: "a[1:6:2, ::-1]", build: ({ a }) => a.get("1:6:2", "::-1") },
  { name: "slice row", code: "a[3]", build: ({ a }) => a.get(3) },
  { name: "slice negative", code: "a[-1, 1:]", build: ({ a }) => a.get(-1, "1:") },
  { name: "slice object", code: "a[:, 4:0:-2]", build: ({ a }) => a.get(null, { start: 4, stop: 0, step: -2 }) },
  { name: "slice empty", code: "a[5:2]", build: ({ a }) => a.get("5:2") },
  { name: "3-d slice", code: "d[:, 2, ::2]", build: ({ d }) => d.get(":", 2, "::2") },
  { name: "slice then reduce", code: "a[2:, 1:4].sum(axis=0)", build: ({ a }) => a.get("2:", "1:4").sum({ axis: 0 }) },
  { name: "mask", code: "n[n > 0.5]", build: ({ n }) => n.get(n.gt(0.5)) },
  { name: "mask 3-d", code: "d[d < 0]", build: ({ d }) => d.get(d.lt(0)) },
  { name: "reshape", code: "d.reshape(12, 5)", build: ({ d }) => d.reshape([12, 5]) },
  { name: "reshape infer", code: "a.reshape(-1)", build: ({ a }) => a.reshape([-1]) },
  { name: "reshape 2-d", code: "a.reshape(5, 7) * 2", build: ({ a }) => a.reshape([5, 7]).mul(2) },
  { name: "reshape add axis", code: "b.reshape(1, 5) + c", build: ({ b, c }) => b.reshape([1, 5]).add(c) },
  { name: "rechunk", code: "a + 1", build: ({ a }) => a.rechunk([2, 3]).add(1) },
  { name: "rechunk mixed", code: "a + a", build: ({ a }) => a.rechunk([3, -1]).add(a.rechunk(2)) },
  { name: "concatenate 0", code: "np.concatenate([a, a * 2])", build: ({ a }) => array.concatenate([a, a.mul(2)]) },
  {
    name: "concatenate 1",
    code: "np.concatenate([a, c, i], axis=1)",
    build: ({ a, c, i }) => array.concatenate([a, c, i], { axis: 1 }),
  },
  { name: "stack", code: "np.stack([a, n], axis=1)", build: ({ a, n }) => array.stack([a, n], { axis: 1 }) },
  {
    name: "stack end",
    code: "np.stack([b, v, b], axis=-1)",
    build: ({ b, v }) => array.stack([b, v, b], { axis: -1 }),
  },
  { name: "cumsum 0", code: "np.cumsum(a, axis=0)", build: ({ a }) => a.cumsum({ axis: 0 }) },
  { name: "cumsum 1", code: "np.cumsum(a, axis=1)", build: ({ a }) => a.cumsum({ axis: 1 }) },
  { name: "cumsum flat int", code: "np.cumsum(i)", build: ({ i }) => i.cumsum() },
  { name: "cumsum 3-d", code: "np.cumsum(d, axis=1)", build: ({ d }) => d.cumsum({ axis: 1 }) },
  { name: "matmul", code: "a @ k", build: ({ a, k }) => a.matmul(k) },
  { name: "matmul square", code: "m @ m.T", build: ({ m }) => m.matmul(m.T) },
  { name: "vector @ matrix", code: "w @ a", build: ({ w, a }) => w.matmul(a) },
  { name: "matrix @ vector", code: "a.dot(v)", build: ({ a, v }) => a.dot(v) },
  { name: "vector dot", code: "b @ v", build: ({ b, v }) => b.dot(v) },
  { name: "int matmul", code: "i @ i.T", build: ({ i }) => i.matmul(i.T) },
];

const CHUNKINGS: [string, ChunksSpec][] = [
  ["chunks of 1", 1],
  ["ragged chunks of 3", 3],
  ["auto chunks", "auto"],
];

let expected: Map<string, NpyArray>;
const clusters: [string, LocalCluster][] = [];

beforeAll(() => {
  expected = numpy(CASES.map((c) => ({ name: c.name, inputs: IN, code: c.code })));
  clusters.push(["1 worker", new LocalCluster({ workers: 1 })], ["4 workers", new LocalCluster({ workers: 4 })]);
});

afterAll(async () => {
  for (const [, c] of clusters) await c.close();
});

function inputs(chunks: ChunksSpec): Xs {
  const out = {} as Xs;
  for (const [k, v] of Object.entries(IN)) out[k as Name] = array.fromTypedArray(v.data, { shape: v.shape, chunks });
  return out;
}

describe("arrays match NumPy", () => {
  for (const [label, chunks] of CHUNKINGS)
    it.each(CASES.map((c) => [c.name, c] as const))(`%s (${label})`, async (_name, c) => {
      const y = c.build(inputs(chunks));
      for (const [where, cluster] of clusters)
        expectSameArray(await y.compute({ cluster }), expected.get(c.name)!, `${c.name}, ${label}, ${where}`, {
          rtol: c.rtol,
        });
    });
});

describe("creation matches NumPy", () => {
  const made: [string, string, () => NDArray][] = [
    ["zeros", "np.zeros((4, 3))", () => array.zeros([4, 3], { chunks: 2 })],
    ["ones int32", "np.ones((5,), dtype=np.int32)", () => array.ones([5], { dtype: "int32", chunks: 2 })],
    ["full int", "np.full((2, 3), 7)", () => array.full([2, 3], 7, { chunks: 1 })],
    ["full bool", "np.full((3,), True)", () => array.full([3], true)],
    ["arange int", "np.arange(10)", () => array.arange(10, undefined, 1, { chunks: 3 })],
    ["arange float", "np.arange(1, 2, 0.25)", () => array.arange(1, 2, 0.25, { chunks: 3 })],
    ["arange negative step", "np.arange(5, -5, -3)", () => array.arange(5, -5, -3, { chunks: 1 })],
    ["linspace", "np.linspace(0, 1, 11)", () => array.linspace(0, 1, 11, { chunks: 4 })],
    [
      "linspace no endpoint",
      "np.linspace(-2, 3, 7, endpoint=False)",
      () => array.linspace(-2, 3, 7, { endpoint: false, chunks: 2 }),
    ],
    ["0-d sum of empty", "np.zeros((0, 3)).sum()", () => array.zeros([0, 3]).sum()],
  ];
  it.each(made)("%s", async (name, code, build) => {
    const exp = numpy([{ name, inputs: {}, code }]).get(name)!;
    for (const [where, cluster] of clusters)
      expectSameArray(await build().compute({ cluster }), exp, `${name}, ${where}`);
  });
});

describe("random arrays", () => {
  it("are the same for any chunking and any cluster", async () => {
    const mk = (chunks: ChunksSpec) => [
      array.random.random([9, 7], { seed: 5, chunks }),
      array.random.normal([9, 7], { seed: 5, chunks, loc: 1, scale: 2 }),
      array.random.integers(-3, 9, [9, 7], { seed: 5, chunks }),
    ];
    const ref = await Promise.all(mk("auto").map((x) => x.compute({ cluster: clusters[0][1] })));
    for (const chunks of [1, 4, [2, 3]] as ChunksSpec[])
      for (const [i, x] of mk(chunks).entries())
        expect((await x.compute({ cluster: clusters[1][1] })).data).toEqual(ref[i].data);
    expect(ref[2].dtype).toBe("int64");
    const seeds = await array.random.random([20], { seed: 6 }).compute({ cluster: clusters[0][1] });
    expect(seeds.data).not.toEqual(
      (await array.random.random([20], { seed: 5 }).compute({ cluster: clusters[0][1] })).data,
    );
  });

  it("have the distributions asked for", async () => {
    const cluster = clusters[1][1];
    const u = array.random.random([200, 100], { seed: 1, chunks: 50 });
    const z = array.random.normal([200, 100], { seed: 2, chunks: 64, loc: 3, scale: 2 });
    const k = array.random.integers(0, 10, [20000], { seed: 3 });
    const stats = await Promise.all(
      [u.mean(), u.min(), u.max(), z.mean(), z.std(), k.min(), k.max(), k.eq(9).mean()].map((x) =>
        x.compute({ cluster }),
      ),
    );
    const [mu, lo, hi, zm, zs, kmin, kmax, k9] = stats.map((s) => Number(s.data[0]));
    expect(Math.abs(mu - 0.5)).toBeLessThan(0.01);
    expect(lo).toBeGreaterThanOrEqual(0);
    expect(hi).toBeLessThan(1);
    expect(Math.abs(zm - 3)).toBeLessThan(0.05);
    expect(Math.abs(zs - 2)).toBeLessThan(0.05);
    expect([kmin, kmax]).toEqual([0, 9]);
    expect(Math.abs(k9 - 0.1)).toBeLessThan(0.01);
  });
});
