// Persisted partitions made at home on GPUs (their columns uploaded once, by persist()):
// dealt to the GPUs in turn, each within its budget, the rest left to the queries.
import { describe, expect, it } from "vitest";
import { deviceHomes } from "../../engine/cluster/device_home.js";

describe("device homes of persisted partitions", () => {
  it("deals partitions to the GPUs in turn", () => {
    expect(deviceHomes([10, 10, 10, 10, 10], [0, 1], 100)).toEqual([
      { index: 0, device: 0 },
      { index: 1, device: 1 },
      { index: 2, device: 0 },
      { index: 3, device: 1 },
      { index: 4, device: 0 },
    ]);
  });

  it("keeps each GPU within its budget and leaves the rest on the host", () => {
    // GPU 3 takes 60 then 30 (90); 50 would cross 100; the last 10 still fits.
    expect(deviceHomes([60, 30, 50, 10], [3], 100)).toEqual([
      { index: 0, device: 3 },
      { index: 1, device: 3 },
      { index: 3, device: 3 },
    ]);
    expect(deviceHomes([200], [0], 100)).toEqual([]);
  });

  it("counts what earlier persists keep on each GPU against its budget", () => {
    // GPU 0 keeps 80 already: only the 20 fits there; GPU 1 (nothing kept) takes its turns.
    expect(deviceHomes([30, 30, 20, 30], [0, 1], 100, new Map([[0, 80]]))).toEqual([
      { index: 1, device: 1 },
      { index: 2, device: 0 },
      { index: 3, device: 1 },
    ]);
    expect(deviceHomes([10], [0], 100, new Map([[0, 100]]))).toEqual([]);
  });

  it("keeps nothing without GPUs or partitions", () => {
    expect(deviceHomes([10], [], 100)).toEqual([]);
    expect(deviceHomes([], [0], 100)).toEqual([]);
  });
});
