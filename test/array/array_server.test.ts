// A pipeline whose default export is an array, run through the engine server
// (`basin serve`): the result is of kind "array" with its shape, dtype, chunks and
// (2-D) a block-mean heatmap; its elements page as a table, last axis as columns.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page, ResultInfo } from "../../engine/common/rpc.js";
import { arrayHeatmap, HEATMAP_SIDE } from "../../engine/server/array_result.js";
import { servedWorkspace } from "../helpers/served.js";

let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "basin-array-server-"));
  // x[i, j] = i * 7 + j over a 300 × 7 grid with ragged chunks, plus a NaN column mean test below.
  writeFileSync(
    join(dir, "grid.ts"),
    `import { array } from "basin";\nconst x = array.arange(0, 2100, 1, { chunks: 400 }).reshape([300, 7]).rechunk([64, 3]);\nexport default x.mul(2).sub(x);\n`,
  );
  writeFileSync(
    join(dir, "vec.ts"),
    `import { array } from "basin";\nexport default array.linspace(0, 1, 5).gt(0.5);\n`,
  );
  writeFileSync(
    join(dir, "bad.ts"),
    `import { array } from "basin";\nconst a = array.ones([3, 2]);\nexport default a.add(array.ones([4]));\n`,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const served = servedWorkspace(() => dir);
const { runToEnd } = served;

describe("array results in the engine server", () => {
  it("a 2-D array pages row by row with one column per index of the last axis", async () => {
    const e = await runToEnd("grid.ts");
    if (e.type !== "runFinished") throw new Error(JSON.stringify(e));
    const r: ResultInfo = e.result;
    expect(r.kind).toBe("array");
    expect(r.array).toMatchObject({
      shape: [300, 7],
      dtype: "int64",
      chunks: [
        [64, 64, 64, 64, 44],
        [3, 3, 1],
      ],
    });
    expect(r.schema.map((f) => [f.name, f.type])).toEqual(Array.from({ length: 7 }, (_, j) => [String(j), "int64"]));
    expect(r.rows).toBe(300);
    const page = await served.client.call<Page>("page", r.id, 290, 10);
    for (let j = 0; j < 7; j++) expect(page.values[j]).toEqual(Array.from({ length: 10 }, (_, i) => (290 + i) * 7 + j));
    // 300 rows fold into 128 row blocks; 7 columns stay 7.
    const h = r.array!.heatmap!;
    expect([h.rows, h.cols]).toEqual([HEATMAP_SIDE, 7]);
    // Row block b holds rows i with floor(i * 128 / 300) = b: the first rows 0–2, the last rows 298–299.
    expect([h.min, h.max]).toEqual([(0 + 7 + 14) / 3, (298 * 7 + 6 + 299 * 7 + 6) / 2]);
    await served.client.call("release", r.id);
  });

  it("a 1-D bool array is one column named value", async () => {
    const e = await runToEnd("vec.ts");
    if (e.type !== "runFinished") throw new Error(JSON.stringify(e));
    expect(e.result.array).toMatchObject({ shape: [5], dtype: "bool" });
    expect(e.result.array!.heatmap).toBeUndefined();
    const page = await served.client.call<Page>("page", e.result.id, 0, 10);
    expect(page.columns).toEqual(["value"]);
    expect(page.values[0]).toEqual([false, false, false, true, true]);
    await served.client.call("release", e.result.id);
  });

  it("a broadcasting error fails the run at its pipeline line", async () => {
    const e = await runToEnd("bad.ts");
    expect(e.type).toBe("runFailed");
    if (e.type !== "runFailed") return;
    expect(e.error.code).toBe("BASIN_PLAN");
    expect(e.error.location).toMatch(/bad\.ts:3:\d+$/);
  });
});

describe("arrayHeatmap", () => {
  it("averages blocks, skipping NaN, and marks blocks without a finite value", () => {
    const data = new Float64Array([1, NaN, 3, NaN]);
    expect(arrayHeatmap({ data, shape: [2, 2], dtype: "float64" })).toEqual({
      rows: 2,
      cols: 2,
      values: [1, null, 3, null],
      min: 1,
      max: 3,
    });
    expect(arrayHeatmap({ data, shape: [4], dtype: "float64" })).toBeUndefined();
  });
});
