// slice(): rows [offset, offset + length) of a table as straight copies of each buffer's
// range, compared against the rows themselves (the oracle) on generated tables.
import { describe, expect, it } from "vitest";
import { native } from "../../engine/native/addon.js";
import { cellsOf, rowsToJsTable, trackHandles, type NativeCol } from "../helpers/native_rows.js";

interface Row {
  i: bigint | null;
  f: number | null;
  b: boolean | null;
  s: string | null;
  d: number | null;
  t: bigint | null;
}
const COLS: NativeCol<Row>[] = [
  { name: "i", type: "int64", sql: "BIGINT" },
  { name: "f", type: "float64", sql: "DOUBLE" },
  { name: "b", type: "bool", sql: "BOOLEAN" },
  { name: "s", type: "string", sql: "VARCHAR" },
  { name: "d", type: "date", sql: "INTEGER" },
  { name: "t", type: "timestamp", sql: "BIGINT" },
];

/** `n` rows; every `nullEvery`-th cell of each column is null (0: none), strings of varying length and script. */
function rows(n: number, nullEvery: number): Row[] {
  const words = ["", "a", "Grüße", "東京", "🙂🙂", "x".repeat(40)];
  const nul = (k: number) => nullEvery > 0 && k % nullEvery === 0;
  return Array.from({ length: n }, (_, k) => ({
    i: nul(k) ? null : BigInt(k * 7 - 50),
    f: nul(k + 1) ? null : k / 3,
    b: nul(k + 2) ? null : k % 2 === 0,
    s: nul(k + 3) ? null : `${words[k % words.length]}${k}`,
    d: nul(k + 4) ? null : k - 1000,
    t: nul(k + 5) ? null : BigInt(k) * 1_000_000n,
  }));
}

const track = trackHandles();

describe("slice", () => {
  const data = rows(300, 7);
  const h = () => track(native().tableFromJs(rowsToJsTable(data, COLS)));
  // The rows as cellsOf reads a native table: booleans as 0/1.
  const want = (lo: number, n: number) =>
    data.slice(lo, lo + n).map((r) => [r.i, r.f, r.b === null ? null : Number(r.b), r.s, r.d, r.t]);

  for (const [lo, n] of [
    [0, 300],
    [0, 1],
    [299, 1],
    [13, 120],
    [150, 0],
    [0, 0],
  ] as const) {
    it(`copies rows [${lo}, ${lo + n}) of every type, nulls and unicode strings included`, () => {
      const got = native().tableToJs(track(native().slice(h(), lo, n)));
      expect(got.rows).toBe(n);
      expect(cellsOf(got)).toEqual(want(lo, n));
    });
  }

  it("clamps a range that runs past either end to the table", () => {
    const t = h();
    expect(cellsOf(native().tableToJs(track(native().slice(t, 290, 50))))).toEqual(want(290, 10));
    expect(native().tableInfo(track(native().slice(t, 400, 5))).rows).toBe(0);
    expect(cellsOf(native().tableToJs(track(native().slice(t, -5, 3))))).toEqual(want(0, 3));
  });

  it("drops the validity of a range without nulls, and keeps it where the range has one", () => {
    const t = h();
    const clean = native().tableToJs(track(native().slice(t, 1, 5))); // rows 1..5: column i is null only at 0, 7, ...
    expect(clean.columns[0]!.validity).toBeNull();
    const holed = native().tableToJs(track(native().slice(t, 5, 5)));
    expect(holed.columns[0]!.validity).not.toBeNull();
    expect(cellsOf(holed)).toEqual(want(5, 5));
  });
});
