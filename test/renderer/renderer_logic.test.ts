// The workbench's pure logic: viewport → page blocks and their cache, scroll
// scaling for millions of rows, the filter row's syntax, error locations,
// persisted layout, and cell text.
import { describe, expect, it } from "vitest";
import { parseFilter } from "../../renderer/common/filter_syntax.js";
import { plotSeries } from "../../renderer/common/plot_data.js";
import { formatBytes, formatCell, formatMs, formatStat, toTsv } from "../../renderer/common/format.js";
import { binEdgeSeconds, timeTicks } from "../../renderer/common/time_labels.js";
import { DEFAULT_LAYOUT, parseLayout } from "../../renderer/common/layout.js";
import { parseLocation, workspaceFileOf } from "../../renderer/common/location.js";
import { blocksFor, PageCache } from "../../renderer/common/page_cache.js";
import { MAX_SCROLL_PX, revealTop, scrollHeightFor, scrollRatio } from "../../renderer/common/virtual_scale.js";
import { describeArray, heatmapRgba } from "../../renderer/common/array_display.js";

describe("viewport → page blocks", () => {
  it("covers the visible rows plus overscan, clipped to the result", () => {
    expect(blocksFor(250, 300, 1000, 100, 0)).toEqual([
      { offset: 200, limit: 100 },
      { offset: 300, limit: 100 },
    ]);
    expect(blocksFor(0, 10, 1000, 100, 1)).toEqual([
      { offset: 0, limit: 100 },
      { offset: 100, limit: 100 },
    ]);
    expect(blocksFor(990, 1200, 1050, 100, 2)).toEqual([
      { offset: 700, limit: 100 },
      { offset: 800, limit: 100 },
      { offset: 900, limit: 100 },
      { offset: 1000, limit: 50 },
    ]);
    expect(blocksFor(0, 0, 0, 100, 1)).toEqual([]);
    expect(blocksFor(0, 0, 1, 100, 1)).toEqual([{ offset: 0, limit: 1 }]);
    expect(blocksFor(5, 4, 100, 10, 0)).toEqual([]);
  });

  it("asks only for blocks neither cached nor in flight, and serves cells from them", () => {
    const cache = new PageCache(1000, { blockRows: 100, overscanBlocks: 0 });
    const want = cache.missing(150, 250);
    expect(want).toEqual([
      { offset: 100, limit: 100 },
      { offset: 200, limit: 100 },
    ]);
    for (const w of want) cache.loading(w.offset);
    expect(cache.missing(150, 250)).toEqual([]);
    cache.put(100, [
      Array.from({ length: 100 }, (_, i) => 100 + i),
      Array.from({ length: 100 }, (_, i) => (i % 2 ? null : `r${100 + i}`)),
    ]);
    expect(cache.cell(150, 0)).toBe(150);
    expect(cache.cell(150, 1)).toBe("r150");
    expect(cache.cell(151, 1)).toBeNull();
    expect(cache.cell(250, 0)).toBeUndefined();
    expect(cache.has(199)).toBe(true);
    expect(cache.has(200)).toBe(false);
    cache.failed(200);
    expect(cache.missing(150, 250)).toEqual([{ offset: 200, limit: 100 }]);
  });

  it("keeps a bounded number of blocks, dropping the least recently seen", () => {
    const cache = new PageCache(10_000_000, { blockRows: 10, maxBlocks: 3, overscanBlocks: 0 });
    for (const o of [0, 10, 20]) cache.put(o, [[o]]);
    cache.missing(0, 0); // block 0 seen again: block 10 is now the oldest
    cache.put(9_999_990, [[1]]);
    expect(cache.cachedBlocks).toBe(3);
    expect(cache.has(0)).toBe(true);
    expect(cache.has(10)).toBe(false);
    expect(cache.has(9_999_999)).toBe(true);
    expect(cache.missing(9_999_995, 9_999_999)).toEqual([]);
    expect(cache.missing(10, 15)).toEqual([{ offset: 10, limit: 10 }]);
  });
});

describe("scroll scaling", () => {
  it("is 1:1 while the rows fit and maps both ends when they do not", () => {
    expect(scrollHeightFor(24_000)).toBe(24_000);
    expect(scrollRatio(24_000, 24_000, 600)).toBe(1);
    const virtual = 10_000_000 * 24 + 78;
    const real = scrollHeightFor(virtual);
    expect(real).toBe(MAX_SCROLL_PX);
    const r = scrollRatio(virtual, real, 600);
    expect((real - 600) * r).toBeCloseTo(virtual - 600, 3); // the real bottom is the virtual bottom
    expect(r).toBeGreaterThan(29);
  });

  it("reveals any row, the last of 10 million included, inside the viewport below the header", () => {
    const head = 78,
      row = 24,
      view = 600;
    const virtual = 10_000_000 * row + head + row;
    const ratio = scrollRatio(virtual, scrollHeightFor(virtual), view);
    for (const target of [0, 1, 333_334, 5_000_000, 9_999_998, 9_999_999]) {
      for (const from of [0, 3_000_000, MAX_SCROLL_PX - view]) {
        const top = head + target * row;
        const to = revealTop(top, row, { scrollTop: from, clientHeight: view, ratio, head }) ?? from;
        const offset = to * ratio;
        expect(top - head, `row ${target} from ${from}: below the header`).toBeGreaterThanOrEqual(offset);
        expect(top + row, `row ${target} from ${from}: above the bottom`).toBeLessThanOrEqual(offset + view);
        expect(to).toBeLessThanOrEqual(MAX_SCROLL_PX - view);
      }
    }
    // In view already: no scroll.
    expect(revealTop(head + 3 * row, row, { scrollTop: 0, clientHeight: view, ratio: 1, head })).toBeUndefined();
  });
});

describe("summary statistics and time labels", () => {
  it("show a statistic to 6 significant digits however small, never rounded to 0 or 1", () => {
    expect(formatStat(0.000145)).toBe("0.000145");
    expect(formatStat(0.999501)).toBe("0.999501");
    expect(formatStat(8.16497e-7)).toBe("8.16497e-7");
    expect(formatStat(-3.3333333333e-5)).toBe("-0.0000333333");
    expect(formatStat(1234.56789)).toBe("1,234.57");
    expect(formatStat(12345678.9)).toBe("1.23457e+7");
    expect(formatStat(42)).toBe("42");
    expect(formatStat(undefined)).toBe("…");
  });

  it("put date and timestamp histogram edges on the time axis in seconds, labelled as precisely as the ticks are", () => {
    expect(binEdgeSeconds(19723, "date")).toBe(Date.UTC(2024, 0, 1) / 1000);
    expect(binEdgeSeconds(Date.UTC(2024, 0, 1, 12) * 1000, "timestamp")).toBe(Date.UTC(2024, 0, 1, 12) / 1000);
    const day = (d: number, h = 0, m = 0, s = 0) => Date.UTC(2024, 0, d, h, m, s) / 1000;
    expect(timeTicks([day(1), day(2)], "timestamp")).toEqual(["2024-01-01", "2024-01-02"]);
    expect(timeTicks([day(1, 6), day(1, 12, 30)], "timestamp")).toEqual(["2024-01-01 06:00", "2024-01-01 12:30"]);
    expect(timeTicks([day(1, 6, 0, 5)], "timestamp")).toEqual(["2024-01-01 06:00:05"]);
    expect(timeTicks([day(3)], "date")).toEqual(["2024-01-03"]);
  });
});

describe("filter row syntax", () => {
  it("reads ranges, strict and loose comparisons, !=, between, text matches and null / not null per type", () => {
    expect(parseFilter("fare", "float64", "5..10")).toEqual({ column: "fare", kind: "range", min: 5, max: 10 });
    // An int64 past 2^53 keeps its digits (as text); a smaller one is a number.
    expect(parseFilter("big", "int64", "= 9007199254740993")).toMatchObject({ value: "9007199254740993" });
    expect(parseFilter("big", "int64", "= 42")).toMatchObject({ value: 42 });
    // NaN and ±Infinity, as the table shows them, go by name (JSON has no such numbers).
    expect(parseFilter("f", "float64", "NaN")).toMatchObject({ kind: "compare", op: "eq", value: "NaN" });
    expect(parseFilter("f", "float64", "= -inf")).toMatchObject({ value: "-Infinity" });
    expect(parseFilter("f", "float64", "< Infinity")).toMatchObject({ op: "lt", value: "Infinity" });
    expect(() => parseFilter("n", "int64", "NaN")).toThrow(/"NaN" is not a number/);
    expect(parseFilter("fare", "float64", " 5.. ")).toEqual({ column: "fare", kind: "range", min: 5 });
    expect(parseFilter("fare", "float64", "..-2.5")).toEqual({ column: "fare", kind: "range", max: -2.5 });
    expect(parseFilter("fare", "float64", "between 5 and 10")).toEqual({
      column: "fare",
      kind: "range",
      min: 5,
      max: 10,
    });
    // "> 54.5" leaves 54.5 out; ">=" keeps it.
    expect(parseFilter("fare", "float64", "> 54.5")).toEqual({
      column: "fare",
      kind: "compare",
      op: "gt",
      value: 54.5,
    });
    expect(parseFilter("n", "int64", ">= 3")).toEqual({ column: "n", kind: "compare", op: "ge", value: 3 });
    expect(parseFilter("n", "int64", "≥3")).toEqual({ column: "n", kind: "compare", op: "ge", value: 3 });
    expect(parseFilter("n", "int64", "<7")).toEqual({ column: "n", kind: "compare", op: "lt", value: 7 });
    expect(parseFilter("n", "int64", "<= 7")).toEqual({ column: "n", kind: "compare", op: "le", value: 7 });
    expect(parseFilter("n", "int64", "7")).toEqual({ column: "n", kind: "compare", op: "eq", value: 7 });
    expect(parseFilter("n", "int64", "!= 7")).toEqual({ column: "n", kind: "compare", op: "ne", value: 7 });
    expect(parseFilter("n", "int64", "<> 7")).toEqual({ column: "n", kind: "compare", op: "ne", value: 7 });
    expect(parseFilter("day", "date", "2024-01-01..2024-02-01")).toEqual({
      column: "day",
      kind: "range",
      min: "2024-01-01",
      max: "2024-02-01",
    });
    expect(parseFilter("city", "string", "= Zürich")).toEqual({
      column: "city",
      kind: "compare",
      op: "eq",
      value: "Zürich",
    });
    expect(parseFilter("city", "string", "≠ NYC")).toEqual({ column: "city", kind: "compare", op: "ne", value: "NYC" });
    // Plain text: contains, any case; ^ or "starts with": a prefix, any case.
    expect(parseFilter("city", "string", "zür")).toEqual({
      column: "city",
      kind: "contains",
      text: "zür",
      ignoreCase: true,
    });
    expect(parseFilter("city", "string", "a..b")).toEqual({
      column: "city",
      kind: "contains",
      text: "a..b",
      ignoreCase: true,
    });
    expect(parseFilter("city", "string", "contains >x")).toEqual({
      column: "city",
      kind: "contains",
      text: ">x",
      ignoreCase: true,
    });
    expect(parseFilter("city", "string", "^Sã")).toEqual({
      column: "city",
      kind: "startsWith",
      text: "Sã",
      ignoreCase: true,
    });
    expect(parseFilter("city", "string", "starts with New")).toEqual({
      column: "city",
      kind: "startsWith",
      text: "New",
      ignoreCase: true,
    });
    expect(parseFilter("ok", "bool", "true")).toEqual({ column: "ok", kind: "compare", op: "eq", value: true });
    expect(parseFilter("city", "string", "NULL")).toEqual({ column: "city", kind: "isNull" });
    expect(parseFilter("city", "string", "is null")).toEqual({ column: "city", kind: "isNull" });
    expect(parseFilter("city", "string", "not null")).toEqual({ column: "city", kind: "notNull" });
    expect(parseFilter("fare", "float64", "is not null")).toEqual({ column: "fare", kind: "notNull" });
    expect(parseFilter("city", "string", "  ")).toBeUndefined();
  });

  it("says what is wrong with nonsense", () => {
    expect(() => parseFilter("n", "int64", "abc")).toThrow(/"abc" is not a number/);
    expect(() => parseFilter("n", "int64", "..")).toThrow(/lower or an upper end/);
    expect(() => parseFilter("ok", "bool", "yes")).toThrow(/true or false/);
    expect(() => parseFilter("d", "date", "soon")).toThrow(/YYYY-MM-DD/);
    expect(() => parseFilter("n", "int64", ">=")).toThrow(/needs a value/);
  });
});

describe("error locations", () => {
  it("parses file:line:col and matches workspace files by path suffix", () => {
    expect(parseLocation("/w/pipes/taxi.ts:4:12")).toEqual({ file: "/w/pipes/taxi.ts", line: 4, column: 12 });
    expect(parseLocation("C:\\w\\taxi.ts:4")).toEqual({ file: "C:\\w\\taxi.ts", line: 4, column: 1 });
    expect(parseLocation("taxi.ts")).toEqual({ file: "taxi.ts", line: 1, column: 1 });
    expect(parseLocation(undefined)).toBeUndefined();
    const files = ["pipes/", "pipes/taxi.ts", "taxi.ts", "axi.ts"];
    expect(workspaceFileOf("/home/me/w/pipes/taxi.ts", files)).toBe("pipes/taxi.ts");
    expect(workspaceFileOf("/home/me/w/taxi.ts", files)).toBe("taxi.ts");
    expect(workspaceFileOf("taxi.ts", files)).toBe("taxi.ts");
    expect(workspaceFileOf("C:\\w\\pipes\\taxi.ts", files)).toBe("pipes/taxi.ts");
    expect(workspaceFileOf("/elsewhere/other.ts", files)).toBeUndefined();
  });
});

describe("persisted layout", () => {
  it("round-trips and falls back field by field on bad entries", () => {
    const l = {
      ...DEFAULT_LAYOUT,
      sidebarWidth: 300,
      openFiles: ["a.ts", "b.ts"],
      activeFile: "b.ts",
      bottomTab: "plot" as const,
      theme: "light" as const,
    };
    expect(parseLayout(JSON.stringify(l))).toEqual(l);
    expect(parseLayout(null)).toEqual(DEFAULT_LAYOUT);
    expect(parseLayout("{not json")).toEqual(DEFAULT_LAYOUT);
    const bad = parseLayout(
      JSON.stringify({
        sidebarWidth: 5,
        panelHeight: "x",
        openFiles: ["a.ts", 3],
        activeFile: "gone.ts",
        bottomTab: "nope",
        theme: "blue",
      }),
    );
    expect(bad).toEqual({ ...DEFAULT_LAYOUT, sidebarWidth: 120, openFiles: ["a.ts"], activeFile: "a.ts" });
  });
});

describe("cell text", () => {
  it("formats numbers, nulls, sizes, durations and TSV for the clipboard", () => {
    expect(formatCell(0.1 + 0.2)).toBe("0.3");
    // No rounding a value into what looks like another number.
    expect(formatCell(1234567890123.45)).toBe("1234567890123.45");
    expect(formatCell(123456789.12345679)).toBe("123456789.123457");
    expect(formatCell(1712345678901234.5)).toBe("1712345678901234.5");
    expect(formatCell(null)).toBe("null");
    expect(formatCell(undefined)).toBe("");
    expect(formatCell("9007199254740993")).toBe("9007199254740993");
    expect(formatBytes(1536)).toBe("1.5 KiB");
    expect(formatBytes(12)).toBe("12 B");
    expect(formatMs(1234)).toBe("1.23 s");
    expect(formatMs(42)).toBe("42 ms");
    expect(
      toTsv([
        [1, "a\tb", null],
        [true, "東京", 2.5],
      ]),
    ).toBe("1\ta b\t\ntrue\t東京\t2.5");
  });
});

describe("array results", () => {
  it("describes dtype, shape and chunks, eliding long chunk lists", () => {
    expect(describeArray({ shape: [4], dtype: "bool", chunks: [[4]] })).toBe("bool array (4,), chunks (4)");
    expect(
      describeArray({
        shape: [300, 7],
        dtype: "int64",
        chunks: [
          [64, 64, 64, 64, 44],
          [3, 3, 1],
        ],
      }),
    ).toBe("int64 array (300, 7), chunks (64, 64, 64, 64, 44) × (3, 3, 1)");
    expect(describeArray({ shape: [8, 2], dtype: "float64", chunks: [[1, 1, 1, 1, 1, 1, 1, 1], [2]] })).toBe(
      "float64 array (8, 2), chunks (1, 1, 1, 1, 1, … 8 chunks) × (2)",
    );
  });

  it("colours heatmap cells from the ramp's ends, leaves empty cells transparent and puts a constant in the middle", () => {
    const px = heatmapRgba({ rows: 1, cols: 3, values: [0, null, 10], min: 0, max: 10 });
    expect([...px.slice(0, 4)]).toEqual([68, 1, 84, 255]);
    expect([...px.slice(4, 8)]).toEqual([0, 0, 0, 0]);
    expect([...px.slice(8, 12)]).toEqual([253, 231, 37, 255]);
    expect([...heatmapRgba({ rows: 1, cols: 1, values: [5], min: 5, max: 5 })]).toEqual([33, 145, 140, 255]);
  });
});

describe("plot data", () => {
  it("sorts numeric x (keeping rows of equal x in order) and says when it is a sample", () => {
    const d = plotSeries("line", [3, 1, null, 2, 1], [30, 10, 99, 20, 11], {
      x: "x",
      y: "y",
      xType: "int64",
      total: 50,
    });
    expect(d.xs).toEqual([1, 1, 2, 3]);
    expect(d.ys).toEqual([10, 11, 20, 30]);
    expect(d.categories).toBeUndefined();
    expect(d.note).toBe("line of y by x: a uniform random sample of 5 of 50 rows (1 with no x left out)");
  });

  it("puts dates on a time axis in seconds", () => {
    const d = plotSeries("scatter", ["2024-01-02", "2024-01-01"], [2, 1], { x: "d", y: "v", xType: "date", total: 2 });
    expect(d.xs).toEqual([Date.UTC(2024, 0, 1) / 1000, Date.UTC(2024, 0, 2) / 1000]);
    expect(d.note).toBe("scatter of v by d: all 2 rows");
  });

  it("gives a text x one slot per category, the mean where a category repeats", () => {
    const once = plotSeries("bar", ["b", "a", null], [2, 1, 3], { x: "k", y: "n", xType: "string", total: 3 });
    expect(once).toMatchObject({ xs: [0, 1, 2], ys: [2, 1, 3], categories: ["b", "a", "(null)"], yTitle: "n" });
    const many = plotSeries("bar", ["a", "b", "a"], [1, 5, 3], { x: "k", y: "n", xType: "string", total: 3 });
    expect(many).toMatchObject({ xs: [0, 1], ys: [2, 5], categories: ["a", "b"], yTitle: "mean of n" });
  });
});
