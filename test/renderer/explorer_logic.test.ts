// The explorer's and dashboard's pure logic: "copy as code" for every filter kind
// (the same calls the engine's view makes), and the task stream's lanes and window.
import { describe, expect, it } from "vitest";
import type { TaskSpan } from "../../engine/common/rpc.js";
import { fitWindow, layoutLanes, MAX_WINDOW_MS, mergeSpans, MIN_WINDOW_MS } from "../../renderer/common/task_lanes.js";
import { filterCode, viewCode } from "../../renderer/common/view_code.js";

describe("copy as code", () => {
  it("writes each filter kind as the Basin expression the engine's view uses", () => {
    expect(filterCode({ column: "fare", kind: "compare", op: "ne", value: 3 })).toBe('col("fare").ne(3)');
    expect(filterCode({ column: "day", kind: "compare", op: "ge", value: "2024-01-05" })).toBe(
      'col("day").ge("2024-01-05")',
    );
    expect(filterCode({ column: "f", kind: "range", min: 5, max: 10 })).toBe('col("f").ge(5).and(col("f").le(10))');
    expect(filterCode({ column: "f", kind: "range", max: 10 })).toBe('col("f").le(10)');
    expect(filterCode({ column: "c", kind: "isNull" })).toBe('col("c").isNull()');
    expect(filterCode({ column: "c", kind: "notNull" })).toBe('col("c").isNotNull()');
    expect(filterCode({ column: "c", kind: "startsWith", text: "SãO", ignoreCase: true })).toBe(
      'col("c").str.lower().str.startsWith("são")',
    );
    expect(filterCode({ column: 'say "hi"', kind: "contains", text: "a\\b" })).toBe(
      'col("say \\"hi\\"").str.contains("a\\\\b", { literal: true })',
    );
    expect(filterCode({ column: "ok", kind: "compare", op: "eq", value: true })).toBe('col("ok").eq(true)');
    // Digits past 2^53 of an int64 as a BigInt; NaN and ±Infinity of a float64 by name; text stays text.
    expect(filterCode({ column: "big", kind: "compare", op: "eq", value: "9223372036854775807" }, "int64")).toBe(
      'col("big").eq(9223372036854775807n)',
    );
    expect(filterCode({ column: "f", kind: "range", min: "-Infinity", max: 0 }, "float64")).toBe(
      'col("f").ge(-Infinity).and(col("f").le(0))',
    );
    expect(filterCode({ column: "s", kind: "compare", op: "eq", value: "123" }, "string")).toBe('col("s").eq("123")');
  });

  it("lowercases a case-insensitive filter's text as the engine's str.lower does, not as JS does", () => {
    // Ǆ (Latin Extended-B) is outside the engine's table; JS maps İ to "i̇" (two code points).
    expect(filterCode({ column: "c", kind: "contains", text: "ǄEMAL İZMİR", ignoreCase: true })).toBe(
      'col("c").str.lower().str.contains("Ǆemal izmir", { literal: true })',
    );
  });

  it("chains the filters, then the sort; nothing for a plain table", () => {
    expect(viewCode([], undefined)).toBe("");
    expect(viewCode([], { column: "n", descending: false })).toBe('  .sort("n")');
    expect(viewCode([{ column: "n", kind: "compare", op: "gt", value: 1 }], { column: "n", descending: true })).toBe(
      '  .filter(col("n").gt(1))\n  .sort("n", { descending: true })',
    );
  });
});

const span = (worker: string, start: number, end: number): TaskSpan => ({
  worker,
  group: "g",
  kind: "compute",
  start,
  end,
});

describe("task stream lanes", () => {
  it("one lane per worker in the cluster's order, bars clipped to the window", () => {
    const { lanes, bars } = layoutLanes(
      [span("cpu-1", 9_000, 9_500), span("cpu-0", 500, 1_500), span("gpu-0", 9_900, 10_500)],
      ["cpu-0", "cpu-1"],
      10_000,
      2_000,
    );
    expect(lanes).toEqual(["cpu-0", "cpu-1", "gpu-0"]);
    expect(bars.map((b) => [b.lane, b.x0, b.x1])).toEqual([
      [1, 0.5, 0.75],
      [2, 0.95, 1],
    ]);
  });

  it("fits the window to the recent tasks, between its bounds", () => {
    expect(fitWindow([], 10_000)).toBe(MIN_WINDOW_MS);
    expect(fitWindow([span("a", 5_000, 6_000)], 10_000)).toBeCloseTo(5_250, 6);
    expect(fitWindow([span("a", 40_000, 95_000)], 100_000)).toBe(MAX_WINDOW_MS);
    expect(fitWindow([span("a", 0, 60_000)], 100_000)).toBe(MIN_WINDOW_MS); // ended long ago
  });

  it("keeps what the polls brought for five minutes", () => {
    const kept = mergeSpans([span("a", 0, 1_000)], { now: 200_000, next: 2, spans: [span("a", 199_000, 199_500)] });
    expect(kept).toHaveLength(2);
    expect(mergeSpans(kept, { now: 302_000, next: 2, spans: [] })).toHaveLength(1);
  });
});
