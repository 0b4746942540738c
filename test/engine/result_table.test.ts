// A result Table over the partitions compute() copied out: reading it gives the same
// columns, rows and raw table as the native concatenation of those partitions (the oracle).
import { describe, expect, it } from "vitest";
import { formatValue } from "../../engine/cli/format_table.js";
import { dateText } from "../../engine/common/civil_text.js";
import { timestampMicros } from "../../engine/plan/resolve_base.js";
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

describe("dates and timestamps of any year, as text", () => {
  it("print years past 9999 and before 1 whole, and days past JS Date's range, without Date", () => {
    // Against JS Date over years -300 … 12000 (every 997th day), then past its range.
    for (let day = -829_000; day < 3_665_000; day += 997) {
      const iso = new Date(day * 86_400_000).toISOString().slice(0, -14);
      const year = Number(iso.slice(0, -6));
      const js = `${year < 0 ? "-" : ""}${String(Math.abs(year)).padStart(4, "0")}${iso.slice(-6)}`;
      expect(dateText(day), `day ${day}`).toBe(js);
    }
    expect(dateText(0)).toBe("1970-01-01");
    expect(dateText(2_932_897)).toBe("10000-01-01");
    expect(dateText(2_147_483_647)).toBe("5881580-07-11");
    expect(isoTimestamp(253_402_300_800_000_000n)).toBe("10000-01-01T00:00:00.000Z");
    expect(isoTimestamp(9_223_372_036_854_775_807n)).toBe("294247-01-10T04:00:54.775807Z");
    const far = new Table({
      rows: 1,
      names: ["d"],
      columns: [{ type: "timestamp", values: BigInt64Array.from([9_223_372_036_854_775_807n]), validity: null }],
    });
    expect(formatValue(far.column("d")[0]!)).toBe("(beyond JS dates)");
  });
});

describe("timestamp literals", () => {
  it("keep microseconds, offsets and years before 100", () => {
    expect(timestampMicros("1969-12-31T23:59:59.999999Z")).toBe(-1);
    expect(timestampMicros("1970-01-01 00:00:00.000001")).toBe(1);
    expect(timestampMicros("1970-01-01T01:00:00+01:00")).toBe(0);
    expect(timestampMicros("2024-02-29")).toBe(Date.UTC(2024, 1, 29) * 1000);
    expect(timestampMicros("0044-03-15")).toBe(-703_383 * 86_400_000_000);
    expect(timestampMicros("2024-02-30")).toBeUndefined();
    expect(timestampMicros("2024-01-01T24:00:00")).toBeUndefined();
    expect(timestampMicros("yesterday")).toBeUndefined();
  });
});
