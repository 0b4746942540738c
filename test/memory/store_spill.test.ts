// The store's disk tier: tables spill to files in this process's folder, come back
// unchanged on access, and their files go when they are released.
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { native, type JsTable } from "../../engine/native/addon.js";
import { applyMemory, resolveMemory } from "../../engine/memory/limits.js";

const base = mkdtempSync(join(tmpdir(), "basin-spill-test-"));
const dir = () => native().memoryStats().directory;

function sample(n: number): JsTable {
  const names = ["i", "f", "s", "b", "d"];
  return {
    rows: n,
    names,
    columns: [
      { type: "int64", values: BigInt64Array.from({ length: n }, (_, i) => BigInt(i * 7 - 3)), validity: Uint8Array.from({ length: n }, (_, i) => (i % 5 === 0 ? 0 : 1)) },
      { type: "float64", values: Float64Array.from({ length: n }, (_, i) => i / 3), validity: null },
      { type: "string", values: Array.from({ length: n }, (_, i) => (i % 4 === 0 ? null : `é${i}✓`)), validity: null },
      { type: "bool", values: Uint8Array.from({ length: n }, (_, i) => i % 2), validity: null },
      { type: "date", values: Int32Array.from({ length: n }, (_, i) => i - 100), validity: null },
    ],
  };
}

beforeAll(() => applyMemory(resolveMemory({ memoryLimit: "1TB", localDirectory: base })));
afterAll(() => {
  applyMemory(resolveMemory());
  rmSync(base, { recursive: true, force: true });
});

describe("store disk tier", () => {
  it("spills least recently used tables to files, reads them back unchanged, removes the files on release", () => {
    const a = native().tableFromJs(sample(1000));
    const b = native().tableFromJs(sample(0));
    const c = native().tableFromJs(sample(3));
    const before = native().memoryStats();
    const expected = [a, b, c].map((h) => native().tableToJs(h));
    native().tableInfo(c); // c is the most recent: it stays
    native().memorySpill(native().storeStats().bytes - 1);
    expect([native().isSpilled(a), native().isSpilled(b)]).toEqual([true, true]);
    const s = native().memoryStats();
    expect(s.spilledCount).toBeGreaterThan(before.spilledCount);
    expect(s.diskTables).toBeGreaterThanOrEqual(2);
    expect(readdirSync(dir()).length).toBe(s.diskTables);
    // back on access, equal to what went out
    expect([a, b, c].map((h) => native().tableToJs(h))).toEqual(expected);
    expect(native().isSpilled(a)).toBe(false);
    expect(native().memoryStats().unspilledCount).toBeGreaterThan(before.unspilledCount);
    expect(readdirSync(dir())).toEqual([]);
    native().memorySpill(1e12);
    expect(readdirSync(dir()).length).toBe(3);
    for (const h of [a, b, c]) native().release(h);
    expect(readdirSync(dir())).toEqual([]);
    expect(native().memoryStats()).toMatchObject({ diskBytes: 0, diskTables: 0 });
  });

  it("never spills a pinned table", () => {
    const a = native().tableFromJs(sample(100));
    native().pin(a);
    native().memorySpill(1e12);
    expect(native().isSpilled(a)).toBe(false);
    native().unpin(a);
    native().memorySpill(1e12);
    expect(native().isSpilled(a)).toBe(true);
    native().release(a);
    expect(() => native().pin(a)).toThrow(expect.objectContaining({ code: "BASIN_HANDLE" }));
  });

  it("puts its files in a folder named with the pid, under the local directory", () => {
    expect(dir().startsWith(base)).toBe(true);
    expect(dir()).toMatch(new RegExp(`basin-spill-${process.pid}-`));
    expect(existsSync(dir())).toBe(true);
  });
});
