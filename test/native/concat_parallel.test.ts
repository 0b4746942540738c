// Concatenating a large table (over 256 MB: a frame persisted whole for a GPU) copies its
// columns on several threads; the result must be the one-thread concatenation's, byte
// for byte: values, string offsets rebased per part, validity made for parts without.
import { afterEach, describe, expect, it } from "vitest";
import { native, type Handle, type JsTable } from "../../engine/native/addon.js";

const made: Handle[] = [];
/** Whether two typed arrays (or JsStrings' parts) hold the same bytes (toEqual walks millions of elements slowly). */
function sameBytes(a: unknown, b: unknown): boolean {
  const view = (x: unknown) => {
    const t = x as ArrayBufferView;
    return Buffer.from(t.buffer, t.byteOffset, t.byteLength);
  };
  return view(a).equals(view(b));
}
afterEach(() => {
  for (const h of made.splice(0)) native().release(h);
});

/** A part of `rows` rows: an int64 column, a float column with nulls (when `nulls`), and a string column. */
function part(rows: number, seed: number, nulls: boolean): JsTable {
  const ints = new BigInt64Array(rows);
  const floats = new Float64Array(rows);
  const valid = nulls ? new Uint8Array(rows) : null;
  const offsets = new Float64Array(rows + 1);
  const chars = new Uint8Array(rows * 3);
  for (let i = 0; i < rows; i++) {
    ints[i] = BigInt(seed * 1_000_000_000 + i);
    floats[i] = (i % 1000) / 8 + seed;
    if (valid) valid[i] = i % 7 === 0 ? 0 : 1;
    chars.set([97 + (i % 26), 97 + (seed % 26), 48 + (i % 10)], i * 3);
    offsets[i + 1] = (i + 1) * 3;
  }
  return {
    rows,
    names: ["i", "f", "s"],
    columns: [
      { type: "int64", values: ints, validity: null },
      { type: "float64", values: floats, validity: valid },
      { type: "string", values: { offsets, chars, ascii: true }, validity: null },
    ],
  };
}

describe("parallel concat", () => {
  it("concatenates 300 MB of parts on several threads into what the parts hold, in order", () => {
    const addon = native();
    const sizes = [4_000_000, 1, 0, 5_000_000, 3_000_000]; // 8 + 8 + 8 (offsets) + 3 + 1 bytes a row: ~340 MB
    const parts = sizes.map((n, k) => {
      const h = addon.tableFromJs(part(n, k, k % 2 === 0));
      made.push(h);
      return h;
    });
    const all = addon.concat(parts);
    made.push(all);
    const total = sizes.reduce((a, b) => a + b, 0);
    expect(addon.tableRows(all)).toBe(total);
    expect(addon.tableBytes(all)).toBeGreaterThan(256 << 20);
    // Each part's rows, read back from the concatenation, are the part's.
    let at = 0;
    sizes.forEach((n, k) => {
      const want = addon.tableToJs(parts[k]!);
      const slice = addon.slice(all, at, n);
      made.push(slice);
      const got = addon.tableToJs(slice);
      expect(got.rows).toBe(n);
      expect(sameBytes(got.columns[0]!.values, want.columns[0]!.values)).toBe(true);
      expect(sameBytes(got.columns[1]!.values, want.columns[1]!.values)).toBe(true);
      // A part without nulls reads as all valid (or no validity at all).
      const validity = got.columns[1]!.validity;
      if (want.columns[1]!.validity) expect(sameBytes(validity, want.columns[1]!.validity)).toBe(true);
      else expect(validity === null || validity.every((v) => v === 1)).toBe(true);
      const [gs, ws] = [got.columns[2]!.values, want.columns[2]!.values] as {
        offsets: Float64Array;
        chars: Uint8Array;
      }[];
      expect(sameBytes(gs!.offsets, ws!.offsets) && sameBytes(gs!.chars, ws!.chars)).toBe(true);
      at += n;
    });
  });

  it("refuses parts of different schemas, large or small", () => {
    const addon = native();
    const a = addon.tableFromJs(part(10, 1, false));
    const b = addon.tableFromJs({
      rows: 1,
      names: ["i"],
      columns: [{ type: "int64", values: new BigInt64Array(1), validity: null }],
    });
    made.push(a, b);
    expect(() => addon.concat([a, b])).toThrow(/concat of tables with different schemas/);
  });
});
