// The bench's checked sample of a Basin answer against sorting the decoded rows.
import { describe, expect, it } from "vitest";
import { col, fromColumns } from "../../engine/api/index.js";
import { normalizeRows, sortRows } from "../../bench/compare.js";
import { sortAndStrideTable } from "../../bench/table_sample.js";

describe("sortAndStrideTable", () => {
  const n = 997;
  const words = ["b", "a", "é", "ab", "", "中文", "a\u0000", "zz"];
  const frame = () =>
    fromColumns({
      k: Array.from({ length: n }, (_, i) => (i % 11 === 0 ? null : (i * 7) % 13)),
      s: Array.from({ length: n }, (_, i) => (i % 17 === 0 ? null : words[(i * 5) % words.length]!)),
      x: Array.from({ length: n }, (_, i) => (i % 19 === 0 ? NaN : i % 23 === 0 ? null : ((i * 31) % 101) / 4)),
      b: Array.from({ length: n }, (_, i) => i % 3 === 0),
    });

  it.each([1, 7, 50])(
    "keeps every %ith row of the rows sorted by keys, then the other columns (nulls and NaN first)",
    async (stride) => {
      const t = await frame().compute();
      const oracle = sortRows(normalizeRows(t.toRows()), ["s", "k"], ["b", "x"]);
      const got = sortAndStrideTable(t, ["s", "k", "b", "x"], stride);
      expect(got).toEqual(oracle.filter((_, i) => i % stride === 0));
    },
  );

  it("samples an empty and a one-row answer", async () => {
    expect(sortAndStrideTable(await frame().head(0).compute(), ["k"], 3)).toEqual([]);
    const one = await frame().filter(col("k").eq(6)).head(1).compute();
    expect(sortAndStrideTable(one, ["k"], 3)).toEqual(normalizeRows(one.toRows()));
  });
});
