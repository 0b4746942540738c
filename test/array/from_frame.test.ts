// DataFrame → array: numeric columns as a float64 matrix chunked by the frame's
// partitions (empty and one-row ones included), nulls as NaN, after filters that
// make partition lengths known only at run time; checked against NumPy on the
// same values, on a 1- and a 4-worker cluster.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { array, BasinError, col, fromColumns, LocalCluster } from "../../engine/api/index.js";
import type { NpyArray } from "../../engine/io/npy.js";
import { makeTrips } from "../helpers/data.js";
import { expectSameArray, numpy } from "../helpers/numpy.js";

const THIS = "test/array/from_frame.test.ts";
const N = 200;
const t = makeTrips(N, 11);
const PARTS = [0, 1, N - 4, 0, 3];
const frame = () =>
  fromColumns(
    { rid: t.rid, k: t.k, city: t.city, v: t.v, f: t.f, flag: t.flag },
    { partitions: PARTS, types: { rid: "int64", k: "int64", v: "int64", f: "float64", flag: "bool" } },
  );

/** The reference matrix: rows where `keep`, the named columns, null → NaN. */
function matrix(cols: (keyof typeof t)[], keep: (i: number) => boolean = () => true): NpyArray {
  const rows = t.rid.filter((_, i) => keep(i));
  const data = new Float64Array(rows.length * cols.length);
  rows.forEach((i, r) =>
    cols.forEach((c, j) => {
      const v = t[c][i] as number | boolean | null;
      data[r * cols.length + j] = v === null ? NaN : Number(v);
    }),
  );
  return { data, shape: [rows.length, cols.length], dtype: "float64" };
}

const clusters: [string, LocalCluster][] = [];
beforeAll(() => {
  clusters.push(["1 worker", new LocalCluster({ workers: 1 })], ["4 workers", new LocalCluster({ workers: 4 })]);
});
afterAll(async () => {
  for (const [, c] of clusters) await c.close();
});

describe("DataFrame.toArray / array.fromDataFrame", () => {
  it("gives the numeric columns, chunked by partitions, nulls as NaN", async () => {
    const ref = matrix(["k", "v", "f", "flag"]);
    for (const [where, cluster] of clusters) {
      const x = await frame().toArray({ columns: ["k", "v", "f", "flag"], cluster });
      expect(x.shape).toEqual([N, 4]);
      expect(x.chunks).toEqual([PARTS, [4]]);
      expectSameArray(await x.compute({ cluster }), ref, `values ${where}`);
    }
  });

  it("defaults to every numeric column, and feeds array operations like NumPy's", async () => {
    const ref = matrix(["rid", "k", "v", "f", "flag"]);
    const exp = numpy([
      {
        name: "centered",
        inputs: { a: ref },
        code: "np.where(np.isnan(a), 0, a) - np.where(np.isnan(a), 0, a).mean(axis=0)",
      },
    ]).get("centered")!;
    for (const [where, cluster] of clusters) {
      const x = await array.fromDataFrame(frame(), { cluster });
      expect(x.shape).toEqual([N, 5]);
      const z = array.where(x.isnan(), 0, x);
      expectSameArray(await z.sub(z.mean({ axis: 0 })).compute({ cluster }), exp, `centered ${where}`);
    }
  });

  it("after a filter (partition lengths known only when run)", async () => {
    const keep = (i: number) => t.v[i] !== null && (t.v[i] as number) > 0;
    const ref = matrix(["v", "f"], keep);
    for (const [where, cluster] of clusters) {
      const x = await frame()
        .filter(col("v").gt(0))
        .toArray({ columns: ["v", "f"], cluster });
      expect(x.chunks[0].reduce((a, b) => a + b, 0)).toBe(ref.shape[0]);
      expect(x.chunks[0].length).toBe(PARTS.length);
      expectSameArray(await x.compute({ cluster }), ref, `filtered ${where}`);
    }
  });

  it("rejects non-numeric and unknown columns, naming them and the line", async () => {
    const err = async (p: Promise<unknown>) => {
      const e = await p.then(
        () => undefined,
        (x: unknown) => x,
      );
      expect(e).toBeInstanceOf(BasinError);
      expect((e as BasinError).code).toBe("BASIN_PLAN");
      expect((e as BasinError).location).toMatch(new RegExp(`^${THIS}:\\d+:`));
      return (e as BasinError).detail;
    };
    expect(await err(frame().toArray({ columns: ["v", "city"] }))).toContain('column "city" is string, not numeric');
    expect(await err(array.fromDataFrame(frame(), { columns: ["nope"] }))).toContain('column "nope" does not exist');
    expect(await err(fromColumns({ s: ["a"] }).toArray())).toContain("no numeric");
  });
});
