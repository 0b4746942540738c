// The spill policy as a state machine (native/src/store/spill_policy.h): which table goes
// where, least recently used first, pinned and busy ones never move.
import { describe, expect, it } from "vitest";
import { native, type SpillPolicyEvent } from "../../engine/native/addon.js";

const run = (limits: { host?: number; disk?: number; device?: number }, events: SpillPolicyEvent[], target = 1) =>
  native().spillPolicyRun({ limits, target }, events);
const ids = (step: unknown) => (step as { moves: { id: number }[] }).moves.map((m) => m.id);

describe("spill policy", () => {
  it("moves nothing while the host is within its limit, and counts bytes per tier", () => {
    const r = run({ host: 100 }, [
      { op: "add", id: 1, bytes: 40 },
      { op: "add", id: 2, bytes: 60 },
      { op: "pressure" },
    ]);
    expect(ids(r.steps[2])).toEqual([]);
    expect(r.tiers).toEqual({ device: 0, host: 100, disk: 0 });
    expect(r.where).toEqual({ 1: "host", 2: "host" });
  });

  it("evicts the least recently used table to disk when the limit is crossed", () => {
    const r = run({ host: 100 }, [
      { op: "add", id: 1, bytes: 40 },
      { op: "add", id: 2, bytes: 40 },
      { op: "add", id: 3, bytes: 40 },
      { op: "touch", id: 1 }, // 2 is now the oldest
      { op: "pressure" },
    ]);
    expect(r.steps[4]).toEqual({
      moves: [{ id: 2, from: "host", to: "disk", bytes: 40 }],
      nextTierFull: false,
      stillOver: false,
    });
    expect(r.tiers).toEqual({ device: 0, host: 80, disk: 40 });
  });

  it("spills down to the target fraction (hysteresis), counting the bytes about to be allocated", () => {
    const events: SpillPolicyEvent[] = [1, 2, 3, 4, 5].map((id) => ({ op: "add", id, bytes: 20 }));
    const r = run({ host: 100 }, [...events, { op: "pressure", need: 10 }], 0.5);
    // 100 + 10 needed, target 50: 60 bytes must go, the three oldest
    expect(ids(r.steps[5])).toEqual([1, 2, 3]);
  });

  it("uses the measured bytes of the tier (kernels' scratch counts)", () => {
    const r = run({ host: 100 }, [
      { op: "add", id: 1, bytes: 30 },
      { op: "add", id: 2, bytes: 30 },
      { op: "pressure", used: 130 },
    ]);
    expect(ids(r.steps[2])).toEqual([1]);
  });

  it("never moves pinned tables or tables being read; unpinned ones move again", () => {
    const r = run({ host: 50 }, [
      { op: "add", id: 1, bytes: 40 },
      { op: "add", id: 2, bytes: 40 },
      { op: "add", id: 3, bytes: 40 },
      { op: "pin", id: 1 },
      { op: "pressure", busy: [2] },
      { op: "unpin", id: 1 },
      { op: "pressure", busy: [2] },
    ]);
    expect(ids(r.steps[4])).toEqual([3]);
    expect(r.steps[4]).toMatchObject({ stillOver: true }); // 1 and 2 must stay: over the limit still
    expect(ids(r.steps[6])).toEqual([1]);
    expect(r.where).toEqual({ 1: "disk", 2: "host", 3: "disk" });
  });

  it("says the next tier is full instead of overfilling the disk", () => {
    const r = run({ host: 50, disk: 50 }, [
      { op: "add", id: 1, bytes: 40 },
      { op: "add", id: 2, bytes: 40 },
      { op: "add", id: 3, bytes: 40 },
      { op: "pressure" },
    ]);
    expect(r.steps[3]).toEqual({
      moves: [{ id: 1, from: "host", to: "disk", bytes: 40 }],
      nextTierFull: true,
      stillOver: true,
    });
    expect(r.tiers.disk).toBe(40);
  });

  it("on a failed allocation frees at least the bytes asked for, whatever the limit", () => {
    const r = run({}, [
      { op: "add", id: 1, bytes: 10 },
      { op: "add", id: 2, bytes: 10 },
      { op: "add", id: 3, bytes: 10 },
      { op: "allocFailed", need: 15, busy: [1] },
    ]);
    expect(ids(r.steps[3])).toEqual([2, 3]);
  });

  it("spills the device tier to the host, and the host on to disk", () => {
    const r = run({ device: 10, host: 25 }, [
      { op: "add", id: 1, bytes: 10, tier: "device" },
      { op: "add", id: 2, bytes: 10, tier: "device" },
      { op: "add", id: 3, bytes: 20 },
      { op: "pressure", tier: "device" },
      { op: "pressure", tier: "host" },
    ]);
    expect(r.steps[3]).toMatchObject({ moves: [{ id: 1, from: "device", to: "host" }] });
    // on the host, 1 is still the least recently used: it goes on to disk
    expect(r.steps[4]).toMatchObject({ moves: [{ id: 1, from: "host", to: "disk" }] });
    expect(r.where).toEqual({ 1: "disk", 2: "device", 3: "host" });
  });

  it("forgets removed tables", () => {
    const r = run({ host: 10 }, [{ op: "add", id: 1, bytes: 40 }, { op: "remove", id: 1 }, { op: "pressure" }]);
    expect(ids(r.steps[2])).toEqual([]);
    expect(r.tiers.host).toBe(0);
  });

  it("keeps the file of a table read back: evicting it again is a move that writes nothing and takes no more disk", () => {
    const r = run({ host: 50, disk: 60 }, [
      { op: "add", id: 1, bytes: 40 },
      { op: "pressure", need: 40 }, // 1 goes to disk
      { op: "unspill", id: 1, keep: true }, // read back; its file stays
      { op: "add", id: 2, bytes: 20 },
      { op: "pressure", need: 10 }, // 1 again: its file is reused
      { op: "remove", id: 1 },
    ]);
    expect(r.steps[1]).toMatchObject({ moves: [{ id: 1, to: "disk" }] });
    expect((r.steps[1] as { moves: { reuse?: true }[] }).moves[0].reuse).toBeUndefined();
    // the disk limit (60) has no room for 40 more, but the reused file needs none
    expect(r.steps[4]).toEqual({
      moves: [{ id: 1, from: "host", to: "disk", bytes: 40, reuse: true }],
      nextTierFull: false,
      stillOver: false,
    });
    expect(r.tiers).toEqual({ device: 0, host: 20, disk: 0 });
  });

  it("counts a kept file on the disk tier until it is dropped", () => {
    const r = run({ host: 100 }, [
      { op: "add", id: 1, bytes: 40 },
      { op: "allocFailed", need: 40 },
      { op: "unspill", id: 1, keep: true },
      { op: "touch", id: 1 },
    ]);
    expect(r.tiers).toEqual({ device: 0, host: 40, disk: 40 });
    const dropped = run({ host: 100 }, [
      { op: "add", id: 1, bytes: 40 },
      { op: "allocFailed", need: 40 },
      { op: "unspill", id: 1, keep: true },
      { op: "dropCopy", id: 1 },
      { op: "allocFailed", need: 40 },
    ]);
    expect(dropped.steps[4]).toMatchObject({ moves: [{ id: 1, bytes: 40 }] });
    expect((dropped.steps[4] as { moves: { reuse?: true }[] }).moves[0].reuse).toBeUndefined();
    const notKept = run({ host: 100 }, [
      { op: "add", id: 1, bytes: 40 },
      { op: "allocFailed", need: 40 },
      { op: "unspill", id: 1 },
    ]);
    expect(notKept.tiers).toEqual({ device: 0, host: 40, disk: 0 });
  });
});
