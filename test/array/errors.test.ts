// Bad array pipelines fail when built, with the shapes involved and the line of
// this file that made the call; bad .npy files name the file.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { array, BasinError } from "../../engine/api/index.js";
import { encodeNpy } from "../../engine/io/npy.js";
import { thrown } from "../helpers/errors.js";

const THIS = "test/array/errors.test.ts";
const dir = mkdtempSync(join(tmpdir(), "basin-arr-err-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SOURCE = readFileSync(import.meta.filename, "utf8").split("\n");

/** The line of this file that calls `call` (the line the error must name). */
function lineOf(call: string): number {
  const i = SOURCE.findIndex((l) => l.includes(`thrown(() => ${call})`));
  if (i < 0 || SOURCE.findIndex((l, j) => j > i && l.includes(`thrown(() => ${call})`)) >= 0)
    throw new Error(`lineOf: "${call}" must appear once`);
  return i + 1;
}

/** Asserts the error is a plan error at `line` of this file whose message has every fragment. */
function expectError(e: BasinError, line: number, ...fragments: string[]): void {
  expect(e.code).toBe("BASIN_PLAN");
  expect(e.location).toMatch(new RegExp(`^${THIS}:${line}:\\d+$`));
  for (const f of fragments) expect(e.detail).toContain(f);
}

const x = array.ones([4, 3], { chunks: 2 });

describe("array errors", () => {
  it("broadcasting shapes that do not fit names both shapes and the axis", () => {
    const e = thrown(() => x.add(array.ones([4])));
    expectError(e, lineOf("x.add(array.ones([4]))"), "(4, 3) and (4,)", "cannot be broadcast", "axis 1: 3 vs 4");
    const w = thrown(() => array.where(x.gt(0), x, array.zeros([2, 3])));
    expectError(w, lineOf("array.where(x.gt(0), x, array.zeros([2, 3]))"), "(4, 3)", "(2, 3)");
  });

  it("matmul of unaligned shapes", () => {
    const e = thrown(() => x.matmul(array.ones([4, 2])));
    expectError(e, lineOf("x.matmul(array.ones([4, 2]))"), "(4, 3) and (4, 2)", "not aligned");
    expectError(
      thrown(() => array.ones([2, 2, 2]).matmul(x)),
      lineOf("array.ones([2, 2, 2]).matmul(x)"),
      "1-D or 2-D",
    );
  });

  it("out-of-range and malformed indices", () => {
    expectError(
      thrown(() => x.get(4)),
      lineOf("x.get(4)"),
      "index 4 is out of range for axis 0 of length 4",
      "(4, 3)",
    );
    expectError(
      thrown(() => x.get(":", -4)),
      lineOf('x.get(":", -4)'),
      "index -4 is out of range for axis 1 of length 3",
    );
    expectError(
      thrown(() => x.get(0, 0, 0)),
      lineOf("x.get(0, 0, 0)"),
      "too many indices",
    );
    expectError(
      thrown(() => x.get("::0")),
      lineOf('x.get("::0")'),
      "non-zero integer",
    );
    expectError(
      thrown(() => x.get("a:b")),
      lineOf('x.get("a:b")'),
      "start:stop:step",
    );
    expectError(
      thrown(() => x.get(array.ones([4, 3]))),
      lineOf("x.get(array.ones([4, 3]))"),
      "boolean mask",
      "float64",
    );
    expectError(
      thrown(() => x.get(array.ones([3, 4]).gt(0))),
      lineOf("x.get(array.ones([3, 4]).gt(0))"),
      "(3, 4)",
      "(4, 3)",
    );
  });

  it("shapes, axes and chunks", () => {
    expectError(
      thrown(() => x.reshape([5, 3])),
      lineOf("x.reshape([5, 3])"),
      "(4, 3)",
      "(5, 3)",
    );
    expectError(
      thrown(() => x.sum({ axis: 2 })),
      lineOf("x.sum({ axis: 2 })"),
      "axis 2 is out of range",
      "2 dimensions",
    );
    expectError(
      thrown(() => x.transpose([0, 0])),
      lineOf("x.transpose([0, 0])"),
      "each of the 2 axes",
    );
    expectError(
      thrown(() => array.zeros([3, -1])),
      lineOf("array.zeros([3, -1])"),
      "non-negative integers",
    );
    expectError(
      thrown(() => array.zeros([6], { chunks: [[2, 2]] })),
      lineOf("array.zeros([6], { chunks: [[2, 2]] })"),
      "summing to its length 6",
    );
    expectError(
      thrown(() => array.concatenate([x, array.ones([4, 2])])),
      lineOf("array.concatenate([x, array.ones([4, 2])])"),
      "(4, 3), (4, 2)",
    );
    expectError(
      thrown(() => array.stack([x, x.T])),
      lineOf("array.stack([x, x.T])"),
      "equal shapes",
    );
    expectError(
      thrown(() => array.zeros([0]).min()),
      lineOf("array.zeros([0]).min()"),
      "empty axis",
    );
    expectError(
      thrown(() => x.get(x.gt(0)).add(1)),
      lineOf("x.get(x.gt(0)).add(1)"),
      "compute() it first",
    );
    expectError(
      thrown(() => array.random.random([2], { seed: -1 })),
      lineOf("array.random.random([2], { seed: -1 })"),
      "seed",
    );
    expectError(
      thrown(() => array.fromTypedArray(new Float64Array(5), { shape: [2, 2] })),
      lineOf("array.fromTypedArray(new Float64Array(5), { shape: [2, 2] })"),
      "holds 4 elements",
      "has 5",
    );
    expectError(
      thrown(() => x.astype("float16" as "float32")),
      lineOf('x.astype("float16" as "float32")'),
      "unknown array dtype",
    );
  });

  it(".npy files that are missing or not .npy", () => {
    const missing = thrown(() => array.readNpy(join(dir, "nope.npy")));
    expect(missing.code).toBe("BASIN_IO");
    expect(missing.detail).toContain("nope.npy");
    writeFileSync(join(dir, "bad.npy"), "hello");
    const bad = thrown(() => array.readNpy(join(dir, "bad.npy")));
    expect(bad.code).toBe("BASIN_PARSE");
    expect(bad.detail).toContain("bad.npy");
    expect(bad.location).toMatch(new RegExp(`^${THIS}:${lineOf('array.readNpy(join(dir, "bad.npy"))')}:`));
  });

  it("an int64 .npy value past 2^53 is BASIN_PLAN naming the file and element, not a rounded answer; dtype float64 accepts rounding", async () => {
    const path = join(dir, "big.npy");
    const values = new BigInt64Array([1n, 2n ** 60n + 1n, -3n]);
    writeFileSync(path, encodeNpy({ data: values, shape: [3], dtype: "int64" }));
    const e = thrown(() => array.readNpy(path));
    expect(e.code).toBe("BASIN_PLAN");
    expect(e.detail).toContain(`${path}: element 1 is 1152921504606846977, past ±2^53`);
    expect(e.detail).toContain('give dtype "float64"');
    expect(e.location).toMatch(new RegExp(`^${THIS}:${lineOf("array.readNpy(path)")}:`));
    const rounded = await array.readNpy(path, { dtype: "float64" }).compute();
    expect([...(rounded.data as Float64Array)]).toEqual([1, 2 ** 60, -3]);
    // In range, int64 stays exact.
    writeFileSync(
      path,
      encodeNpy({ data: new BigInt64Array([2n ** 53n - 1n, -(2n ** 53n - 1n)]), shape: [2], dtype: "int64" }),
    );
    expect([...((await array.readNpy(path).compute()).data as BigInt64Array)]).toEqual([
      2n ** 53n - 1n,
      -(2n ** 53n - 1n),
    ]);
  });

  it("an array result larger than memory is BASIN_OOM before anything runs; reducing it is fine", async () => {
    const huge = array.zeros([200_000, 200_000]);
    const t0 = performance.now();
    const e = (await huge.compute().catch((err: unknown) => err)) as BasinError;
    expect(e.code).toBe("BASIN_OOM");
    expect(e.detail).toContain("shape [200000, 200000] holds 4.00e+10 elements");
    expect(e.detail).toContain("reduce it first");
    expect(e.location).toMatch(new RegExp(`^${THIS}:\\d+:\\d+$`));
    expect(performance.now() - t0, "refused up front").toBeLessThan(1000);
    expect(
      await array
        .zeros([2_000, 50_000], { chunks: [1_000, 50_000] })
        .sum()
        .compute(),
    ).toMatchObject({ data: new Float64Array([0]) });
  });
});
