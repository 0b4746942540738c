// Arrays, bags and delayed calls run on Basin's own workers: asked to run on a
// Dask cluster they fail at once with a clear error instead of reaching Dask.
import { describe, expect, it } from "vitest";
import { array, bag, DaskCluster, delayed, computeWith } from "../../engine/api/index.js";
import { rejected } from "../helpers/errors.js";

describe("local-only work on a Dask cluster", () => {
  // Never connected: the address is only parsed.
  const cluster = new DaskCluster("tcp://127.0.0.1:9");

  it("refuses arrays, bags and delayed calls, naming what runs where", async () => {
    const a = await rejected(array.zeros([3]).compute({ cluster }), "BASIN_PLAN");
    expect(a.message).toContain("arrays run on Basin's local cluster only");
    const b = await rejected(bag.fromItems([1, 2]).compute({ cluster }), "BASIN_PLAN");
    expect(b.message).toContain("bags run on Basin's local cluster only");
    const d = await rejected(computeWith({ cluster }, delayed((x: number) => x + 1)(1)), "BASIN_PLAN");
    expect(d.message).toContain("delayed calls run on Basin's local cluster only");
  });
});
