// The store's device tier (native/src/store/store.h): a table whose only copy is on a
// GPU is read back once when the host needs it, released there when nobody does, and
// never read as anything but its own rows. Without a GPU a stand-in tier (host memory
// held apart from the store, device 90) plays the GPU; the GPU suite runs the CUDA tier.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { native, type Handle, type JsTable } from "../../engine/native/addon.js";
import { withResident } from "../../engine/memory/resident.js";

const addon = native();
const STAND_IN = 90;

/** A table with nulls, unicode and an empty string, so a wrong copy shows. */
function sample(): Handle {
  return addon.tableFromJs({
    rows: 4,
    names: ["id", "name", "score"],
    columns: [
      { type: "int64", values: BigInt64Array.from([1n, 2n, 3n, 4n]), validity: null },
      { type: "string", values: ["α", null, "", "zürich"], validity: null },
      { type: "float64", values: Float64Array.from([0.5, -0, 2, 0]), validity: Uint8Array.from([1, 1, 1, 0]) },
    ],
  });
}

function rows(t: JsTable): unknown[][] {
  return Array.from({ length: t.rows }, (_, r) =>
    t.columns.map((c) => (c.validity && !c.validity[r] ? null : (c.values as ArrayLike<unknown>)[r])),
  );
}

/** A copy of `sample()` held only on the stand-in device, the host original's rows to compare with, and its host bytes. */
function onDevice(
  mode: "ok" | "spilled" | "lost" | "fail-once",
  deviceBytes?: number,
): { h: Handle; expected: unknown[][]; hostBytes: number } {
  const host = sample();
  try {
    return {
      h: addon.deviceTierStandInPut(host, mode, deviceBytes),
      expected: rows(addon.tableToJs(host)),
      hostBytes: addon.tableBytes(host),
    };
  } finally {
    addon.release(host);
  }
}

describe("the store's device tier", () => {
  beforeAll(() => addon.deviceTierStandIn(true));
  afterAll(() => addon.deviceTierStandIn(false));

  it("keeps a table only on the device, counted there, until the host reads it once", () => {
    const before = addon.deviceTierStandInCounts();
    const { h, expected } = onDevice("ok");
    try {
      expect(addon.tableDevice(h)).toBe(STAND_IN);
      expect(addon.memoryStats().deviceBytes).toBeGreaterThan(0);
      // Its shape is known without reading it back.
      expect(addon.tableRows(h)).toBe(4);
      expect(addon.deviceTierStandInCounts().downloads).toBe(before.downloads);
      expect(rows(addon.tableToJs(h))).toEqual(expected);
      // Now an ordinary host table: read again, nothing comes down.
      expect(addon.tableDevice(h)).toBe(-1);
      expect(addon.memoryStats().deviceBytes).toBe(0);
      expect(rows(addon.tableToJs(h))).toEqual(expected);
      expect(addon.deviceTierStandInCounts().downloads).toBe(before.downloads + 1);
    } finally {
      addon.release(h);
    }
  });

  it("counts a table read back by its host bytes, no longer its device bytes", () => {
    const { h, hostBytes } = onDevice("ok", 7);
    try {
      expect(addon.tableBytes(h)).toBe(7);
      expect(addon.memoryStats().deviceBytes).toBe(7);
      addon.tableToJs(h);
      // The host's limit sees it as it is there (and can spill it to disk).
      expect(addon.tableBytes(h)).toBe(hostBytes);
      expect(addon.memoryStats().deviceBytes).toBe(0);
    } finally {
      addon.release(h);
    }
  });

  it("counts as off the host, so readers that may wait read it back off the JS thread", async () => {
    const { h, expected } = onDevice("ok");
    try {
      expect(addon.isSpilled(h)).toBe(true);
      const js = await withResident(h, (t) => addon.tableToJs(t));
      expect(rows(js)).toEqual(expected);
      expect(addon.isSpilled(h)).toBe(false);
    } finally {
      addon.release(h);
    }
  });

  it("reads a table the device spilled to the host while a read failed, instead of failing", async () => {
    // fail-once throws on the first read; a spill by the device meanwhile would leave it
    // in memory: the second read gets it whatever came first.
    const { h, expected } = onDevice("fail-once");
    try {
      await expect(addon.tablesToHost([h])).rejects.toMatchObject({ code: "BASIN_CUDA" });
      expect(rows(addon.tableToJs(h))).toEqual(expected);
    } finally {
      addon.release(h);
    }
  });

  it("drops a released table on the device without reading it back", () => {
    const before = addon.deviceTierStandInCounts();
    const { h } = onDevice("ok");
    addon.release(h);
    expect(addon.deviceTierStandInCounts()).toEqual({ downloads: before.downloads, drops: before.drops + 1 });
    expect(addon.memoryStats().deviceBytes).toBe(0);
  });

  it("brings results down off the JS thread with tablesToHost, leaving host tables as they are", async () => {
    const a = onDevice("ok"),
      b = onDevice("ok");
    const host = sample();
    try {
      await addon.tablesToHost([a.h, host, b.h]);
      expect([a.h, host, b.h].map((h) => addon.tableDevice(h))).toEqual([-1, -1, -1]);
      expect(rows(addon.tableToJs(a.h))).toEqual(a.expected);
      expect(rows(addon.tableToJs(b.h))).toEqual(b.expected);
    } finally {
      for (const h of [a.h, b.h, host]) addon.release(h);
    }
  });

  it("reads a table the device spilled to the host meanwhile from the host", () => {
    const { h, expected } = onDevice("spilled");
    try {
      expect(rows(addon.tableToJs(h))).toEqual(expected);
      expect(addon.tableDevice(h)).toBe(-1);
    } finally {
      addon.release(h);
    }
  });

  it("says a table lost on the device is lost (BASIN_CUDA naming the GPU), every time it is read", () => {
    const { h } = onDevice("lost");
    try {
      for (let i = 0; i < 2; i++)
        expect(() => addon.tableToJs(h)).toThrow(
          expect.objectContaining({
            code: "BASIN_CUDA",
            message: expect.stringMatching(/GPU 90.*lost.*run the pipeline again/),
          }),
        );
    } finally {
      addon.release(h);
    }
    expect(addon.memoryStats().deviceBytes).toBe(0);
  });

  it("leaves a table on the device after a failed read, so that the next read can succeed", async () => {
    const { h, expected } = onDevice("fail-once");
    try {
      await expect(addon.tablesToHost([h])).rejects.toMatchObject({ code: "BASIN_CUDA" });
      expect(addon.tableDevice(h)).toBe(STAND_IN);
      expect(rows(addon.tableToJs(h))).toEqual(expected);
    } finally {
      addon.release(h);
    }
  });

  it("writes a table of the device tier to a file, reading it back off the JS thread", async () => {
    const dir = mkdtempSync(join(tmpdir(), "basin-tier-"));
    const { h, expected } = onDevice("ok");
    try {
      await addon.tableSave(h, join(dir, "t.arrow"));
      const back = await addon.tableLoad(join(dir, "t.arrow"));
      expect(rows(addon.tableToJs(back))).toEqual(expected);
      addon.release(back);
    } finally {
      addon.release(h);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
