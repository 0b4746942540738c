// A result kept in parts (never concatenated into one table) under a memory limit:
// the workbench's result store pages across the parts, reading spilled ones back,
// and frees every part when the result is released.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalCluster } from "../../engine/api/index.js";
import { native, type Handle } from "../../engine/native/addon.js";
import { ResultStore } from "../../engine/server/results.js";
import { applyMemory } from "../../engine/memory/limits.js";

const dir = mkdtempSync(join(tmpdir(), "basin-result-parts-"));
let cluster: LocalCluster;

const part = (from: number, n: number): Handle =>
  native().tableFromJs({
    rows: n,
    names: ["i", "s"],
    columns: [
      { type: "int64", values: BigInt64Array.from({ length: n }, (_, k) => BigInt(from + k)), validity: null },
      {
        type: "string",
        values: Array.from({ length: n }, (_, k) => ((from + k) % 3 === 0 ? null : `r${from + k}`)),
        validity: null,
      },
    ],
  });

beforeAll(() => {
  cluster = new LocalCluster({ workers: 1, memoryLimit: "1TB", localDirectory: dir });
  applyMemory(cluster.memory); // (a run applies it too; the parts are made before any run)
});
afterAll(async () => {
  await cluster.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Pages result `id` (15 rows in `refs`, one part empty) with every part spilled first, and a sorted view of it. */
async function pageParts(results: ResultStore, id: string, refs: Handle[]): Promise<void> {
  native().memorySpill(1e12);
  expect(refs.every((h) => native().isSpilled(h))).toBe(true);
  const page = await results.page(id, 3, 10);
  expect(page.values[0]).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  expect(page.values[1]).toEqual([null, "r4", "r5", null, "r7", "r8", null, "r10", "r11", null]);
  expect((await results.page(id, 14, 10)).values[0]).toEqual([14]);
  expect((await results.page(id, 20, 10)).values).toEqual([[], []]);
  const view = await results.view(id, [{ column: "i", descending: true }], []);
  expect((await results.page(view.id, 0, 3)).values[0]).toEqual([14, 13, 12]);
}

describe("a result kept in parts", () => {
  it("pages across part boundaries, reading spilled parts back, and frees every part on release", async () => {
    const results = new ResultStore({ cluster });
    const before = native().storeStats().handles;
    const refs = [part(0, 5), part(5, 0), part(5, 7), part(12, 3)];
    const info = results.keep(refs, "test");
    try {
      await pageParts(results, info.id, refs);
    } finally {
      results.clear();
    }
    expect(native().storeStats().handles).toBe(before);
    expect(native().memoryStats().diskTables).toBe(0);
  });
});
