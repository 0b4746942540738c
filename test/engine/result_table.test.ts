// A result Table over the partitions compute() copied out: reading it gives the same
// columns, rows and raw table as the native concatenation of those partitions (the oracle).
import { describe, expect, it } from "vitest";
import { formatValue } from "../../engine/cli/format_table.js";
import { Table } from "../../engine/run/table.js";
import { isoTimestamp } from "../../engine/server/wire.js";
import { native } from "../../engine/native/addon.js";
import { rowsToJsTable, trackHandles, type NativeCol } from "../helpers/native_rows.js";

interface Row {
  k: bigint | null;
  s: string | null;
  f: number | null;
}
const COLS: NativeCol<Row>[] = [
  { name: "k", type: "int64", sql: "BIGINT" },
  { name: "s", type: "string", sql: "VARCHAR" },
  { name: "f", type: "float64", sql: "DOUBLE" },
];
const track = trackHandles();

/** Partitions of these sizes; the second has nulls and non-ASCII strings, the others have no validity at all. */
function parts(sizes: number[]): number[] {
  let at = 0;
  return sizes.map((n, p) => {
    const rows = Array.from({ length: n }, (_, i): Row => {
      const k = at + i;
      const hole = p === 1 && i % 3 === 0;
      return { k: hole ? null : BigInt(k), s: hole ? null : p === 1 ? `ü${k}🙂` : `s${k}`, f: k / 4 };
    });
    at += n;
    return track(native().tableFromJs(rowsToJsTable(rows, COLS, { nullValidityWhenComplete: true })));
  });
}

describe("result table over partitions", () => {
  for (const sizes of [[5, 7, 0, 3], [0, 4], [1], [0, 0]]) {
    it(`reads partitions of ${sizes.join("/")} rows as their concatenation`, () => {
      const hs = parts(sizes);
      const oracle = new Table(native().tableToJs(track(native().concat(hs))));
      const t = new Table(hs.map((h) => native().tableToJs(h)));
      expect(t.numRows).toBe(oracle.numRows);
      expect(t.schema).toEqual(oracle.schema);
      expect(t.column("s")).toEqual(oracle.column("s"));
      expect(t.toRows()).toEqual(oracle.toRows());
      expect(new Table(t.raw()).toColumns()).toEqual(oracle.toColumns());
    });
  }

  it("refuses to be built from no partitions", () => {
    expect(() => new Table([])).toThrow(/at least one partition/);
  });
});

describe("result cells of dates and timestamps", () => {
  it("round timestamps before 1970 down to the millisecond (toward the past), in the Table, the wire and the CLI", () => {
    const micros = [-1n, -999n, -1000n, -1001n, 1n, 999n, -86_400_000_001n];
    const t = new Table({
      rows: micros.length,
      names: ["ts"],
      columns: [{ type: "timestamp", values: BigInt64Array.from(micros), validity: null }],
    });
    const ms = micros.map((u) => Number(u >= 0n ? u / 1000n : -((-u + 999n) / 1000n)));
    expect((t.column("ts") as Date[]).map((d) => d.getTime())).toEqual(ms);
    expect(formatValue(t.column("ts")[0]!)).toBe("1969-12-31 23:59:59.999");
    expect(isoTimestamp(-1n)).toBe("1969-12-31T23:59:59.999999Z");
    expect(isoTimestamp(-86_400_000_001n)).toBe("1969-12-30T23:59:59.999999Z");
  });

  it("print dates past the year 9999 whole", () => {
    expect(formatValue(new Date(Date.UTC(12000, 0, 1)))).toBe("+012000-01-01");
    expect(formatValue(new Date(Date.UTC(2024, 1, 29)))).toBe("2024-02-29");
  });
});
