// Arrays at their edges, against what NumPy gives: empty chunks inside a cumulative sum
// or a variance, declared dtypes applied to the caller's values, narrow integer .npy
// files, and int64 results that int64 cannot hold.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { array } from "../../engine/api/index.js";
import { rejected } from "../helpers/errors.js";

const dir = mkdtempSync(join(tmpdir(), "basin-array-edges-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const values = async (a: ReturnType<typeof array.zeros>) => Array.from((await a.compute()).data, Number);

describe("empty chunks", () => {
  it("a cumulative sum carries over an empty chunk (float and int64), as np.cumsum", async () => {
    const part = array.arange(1, 5, 1, { dtype: "float64", chunks: 2 });
    expect(await values(array.concatenate([part, array.zeros([0]), part]).cumsum())).toEqual([
      1, 3, 6, 10, 11, 13, 16, 20,
    ]);
    const ints = array.concatenate([array.zeros([0], { dtype: "int64" }), array.arange(1, 5, 1, { dtype: "int64" })]);
    expect(await values(ints.cumsum())).toEqual([1, 3, 6, 10]);
  });

  it("a variance whose first chunk is empty is np.var's", async () => {
    const x = array.fromTypedArray(
      Float64Array.from({ length: 12 }, (_, i) => i),
      {
        shape: [4, 3],
        chunks: [
          [2, 2],
          [0, 3],
        ],
      },
    );
    expect((await values(x.var()))[0]).toBeCloseTo(11.916666666666666, 12);
    expect(await values(x.var({ axis: 0 }))).toEqual([11.25, 11.25, 11.25]);
  });
});

describe("dtypes of the caller's values", () => {
  it("bool is 'not zero' and integers drop the fraction (np.array(..).astype)", async () => {
    expect(await values(array.fromTypedArray(new Uint8Array([0, 2, 200])).sum())).toEqual([2]);
    const b = array.fromTypedArray(new Float64Array([0, 0.5, 7]), { dtype: "bool" });
    expect(await values(b.astype("int64"))).toEqual([0, 1, 1]);
    expect(await values(array.fromTypedArray(new Float64Array([1.9, -1.9]), { dtype: "int64" }))).toEqual([1, -1]);
  });

  it("an int64 result int64 cannot hold is BASIN_CAST, not a JS TypeError", async () => {
    const nan = array.fromTypedArray(new Float64Array([Number.NaN, 1])).astype("int64");
    const e = await rejected(nan.compute());
    expect(e.code).toBe("BASIN_CAST");
    expect(e.message).toContain("an int64 array result holds NaN, which int64 cannot hold");
  });

  it("reads uint8, int8, int16 and uint16 .npy files as int32, every value kept", async () => {
    for (const [descr, data] of [
      ["|u1", new Uint8Array([0, 2, 200, 255])],
      ["|i1", new Int8Array([0, -2, 100, -128])],
      ["<i2", new Int16Array([0, -2, 30000, -32768])],
      ["<u2", new Uint16Array([0, 2, 60000, 65535])],
    ] as const) {
      const header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (4,), }`.padEnd(117, " ") + "\n";
      const bytes = Buffer.concat([
        Buffer.from([0x93]),
        Buffer.from("NUMPY"),
        Buffer.from([1, 0, header.length & 0xff, header.length >> 8]),
        Buffer.from(header, "latin1"),
        Buffer.from(data.buffer),
      ]);
      const path = join(dir, `x${descr.slice(1)}.npy`);
      writeFileSync(path, bytes);
      const x = array.readNpy(path);
      expect(x.dtype).toBe("int32");
      expect(await values(x)).toEqual(Array.from(data, Number));
    }
  });
});
