// The store: reference counts, byte accounting, and tables of a dead thread freed.
import { afterEach, describe, expect, it } from "vitest";
import { decodeStrings, native, type JsStrings, type JsTable, type TakenStrings } from "../../engine/native/addon.js";
import { takeTable } from "../../engine/run/take.js";

const table = (n: number): JsTable => ({
  rows: n,
  names: ["x"],
  columns: [{ type: "int64", values: new BigInt64Array(n), validity: null }],
});

afterEach(() => native().setThreadOwner(0));

describe("store", () => {
  it("counts handles, buffers and bytes, and frees a table when its last reference goes (then it no longer exists)", () => {
    const before = native().storeStats();
    const h = native().tableFromJs(table(1000));
    expect(native().storeStats()).toMatchObject({
      handles: before.handles + 1,
      buffers: before.buffers + 1,
      bytes: before.bytes + 8000,
    });
    expect(native().tableBytes(h)).toBe(8000);
    native().retain(h);
    native().release(h);
    expect(native().storeStats().handles).toBe(before.handles + 1);
    expect(native().tableExists(h)).toBe(true);
    native().release(h);
    expect(native().tableExists(h)).toBe(false);
    expect(native().storeStats()).toMatchObject({
      handles: before.handles,
      buffers: before.buffers,
      bytes: before.bytes,
    });
    expect(() => native().release(h)).toThrow(expect.objectContaining({ code: "BASIN_HANDLE" }));
  });

  it("frees the unclaimed tables of a thread that died, and keeps what it handed over", () => {
    native().setThreadOwner(42);
    const handed = native().tableFromJs(table(10));
    const orphan = native().tableFromJs(table(10));
    native().setThreadOwner(0);
    const mine = native().tableFromJs(table(10));
    native().claim(handed);
    expect(native().releaseOwnedBy(42)).toBe(1);
    expect(() => native().tableInfo(orphan)).toThrow(expect.objectContaining({ code: "BASIN_HANDLE" }));
    expect(native().tableInfo(handed).rows).toBe(10);
    expect(native().releaseOwnedBy(0)).toBe(0); // 0 means "nobody": never a bulk free
    native().release(handed);
    native().release(mine);
  });
});

describe("takeTableToJs", () => {
  const strings = (n: number): JsTable => ({
    rows: n,
    names: ["s", "x"],
    columns: [
      {
        type: "string",
        values: Array.from({ length: n }, (_, i) => (i % 5 === 0 ? null : `é${i}`)),
        validity: Uint8Array.from({ length: n }, (_, i) => (i % 5 === 0 ? 0 : 1)),
      },
      { type: "float64", values: Float64Array.from({ length: n }, (_, i) => i / 2), validity: null },
    ],
  });

  it("gives what tableToJs gives, releases the handle, and hands its buffers to JS (out of the store's count)", () => {
    const before = native().storeStats();
    const h = native().tableFromJs(strings(1000));
    const want = native().tableToJs(h);
    const got = takeTable(h);
    expect(got).toEqual(want);
    expect(() => native().tableInfo(h)).toThrow(expect.objectContaining({ code: "BASIN_HANDLE" }));
    expect(native().storeStats()).toMatchObject({
      handles: before.handles,
      buffers: before.buffers,
      bytes: before.bytes,
    });
  });

  // Memory freed under JS's arrays would read as other tables' bytes: these overwrite it.
  const churn = () => {
    for (let i = 0; i < 20; i++) native().release(native().tableFromJs(strings(300)));
  };

  it("shares the buffers of a table another reference still holds, which JS reads unchanged after that reference goes", () => {
    const h = native().tableFromJs(strings(300));
    const want = native().tableToJs(h);
    native().retain(h);
    const before = native().storeStats();
    const got = takeTable(h);
    expect(native().storeStats().bytes).toBe(before.bytes); // still the store's: shared, not moved
    expect(got).toEqual(want);
    expect(native().tableToJs(h)).toEqual(want);
    native().release(h);
    churn();
    expect(got).toEqual(want);
    expect(decodeStrings(got.columns[0].values as JsStrings, got.columns[0].validity)).toEqual(
      strings(300).columns[0].values,
    );
  });

  it("shares the columns a table shares with another, which JS reads unchanged after the other goes", () => {
    const h = native().tableFromJs(strings(300));
    const want = native().tableToJs(h);
    const shared = native().evalExprs(
      h,
      [
        { kind: "col", index: 0, type: "string" },
        { kind: "col", index: 1, type: "float64" },
      ],
      ["s", "x"],
    );
    const got = takeTable(shared);
    expect(got).toEqual(want);
    expect(native().tableToJs(h)).toEqual(want);
    native().release(h);
    churn();
    expect(got).toEqual(want);
  });

  it.each([
    ["moved", false],
    ["shared", true],
  ])("hands %s string offsets over as int64 that read as the doubles JsStrings holds", (_, shared) => {
    const h = native().tableFromJs(strings(50));
    const want = Array.from((native().tableToJs(h).columns[0].values as JsStrings).offsets);
    if (shared) native().retain(h);
    const raw = native().takeTableToJs(h).columns[0].values as TakenStrings;
    expect("offsets" in raw).toBe(false);
    expect(Array.from(raw.offsets64, Number)).toEqual(want);
    if (shared) native().release(h);
  });
});
