// The bench's checked sample of a Basin answer against sorting the decoded rows.
import { describe, expect, it } from "vitest";
import { col, fromColumns } from "../../engine/api/index.js";
import { normalizeRows, sortRows } from "../../bench/compare.js";
import { basinDigest, sortAndStrideTable } from "../../bench/table_sample.js";
import type { Cell } from "../../bench/compare.js";
import { Table } from "../../engine/run/table.js";

describe("sortAndStrideTable", () => {
  const n = 997;
  const words = ["b", "a", "é", "ab", "", "中文", "a\u0000", "zz"];
  const frame = () =>
    fromColumns({
      k: Array.from({ length: n }, (_, i) => (i % 11 === 0 ? null : (i * 7) % 13)),
      s: Array.from({ length: n }, (_, i) => (i % 17 === 0 ? null : words[(i * 5) % words.length]!)),
      x: Array.from({ length: n }, (_, i) => (i % 19 === 0 ? NaN : i % 23 === 0 ? null : ((i * 31) % 101) / 4)),
      b: Array.from({ length: n }, (_, i) => i % 3 === 0),
      d: Array.from({ length: n }, (_, i) => (i % 29 === 0 ? null : new Date(Date.UTC(1990 + (i % 40), i % 12, 1)))),
    });
  /** The same answer as several parts, as a cluster's result arrives (one of them empty). */
  const inParts = async (): Promise<Table> => {
    const parts = await Promise.all([
      frame().head(300).compute(),
      frame().head(0).compute(),
      frame()
        .tail(n - 300)
        .compute(),
    ]);
    return new Table(parts.flatMap((p) => [...p.rawParts()]));
  };

  it.each([1, 7, 50])(
    "keeps every %ith row of the rows sorted by keys, then the other columns (nulls and NaN first)",
    async (stride) => {
      const t = await frame().compute();
      const oracle = sortRows(normalizeRows(t.toRows()), ["s", "k"], ["b", "x"]);
      const got = sortAndStrideTable(t, ["s", "k", "b", "x"], stride);
      expect(got).toEqual(oracle.filter((_, i) => i % stride === 0));
      expect(sortAndStrideTable(await inParts(), ["s", "k", "b", "x"], stride)).toEqual(got);
    },
  );

  it("samples an empty and a one-row answer", async () => {
    expect(sortAndStrideTable(await frame().head(0).compute(), ["k"], 3)).toEqual([]);
    const one = await frame().filter(col("k").eq(6)).head(1).compute();
    expect(sortAndStrideTable(one, ["k"], 3)).toEqual(normalizeRows(one.toRows()));
  });
});

describe("basinDigest", () => {
  /** The statistics of one column from its decoded rows (the reference the native ones must equal). */
  function oracle(values: Cell[]): { nulls: number; min: Cell; max: Cell; sum: number | null } {
    const kept = values.filter((v) => v !== null);
    if (kept.length === 0) return { nulls: values.length, min: null, max: null, sum: null };
    const strings = typeof kept[0] === "string";
    const bytes = (v: Cell) => Buffer.from(String(v), "utf8");
    const sorted = [...kept].sort((a, b) =>
      strings
        ? Buffer.compare(bytes(a), bytes(b))
        : typeof a === "number"
          ? a - (b as number)
          : String(a) < String(b)
            ? -1
            : 1,
    );
    const sum = strings
      ? kept.reduce((t: number, v) => t + [...String(v)].length, 0)
      : typeof kept[0] === "number"
        ? kept.reduce((t: number, v) => t + (v as number), 0)
        : null;
    return { nulls: values.length - kept.length, min: sorted[0]!, max: sorted[sorted.length - 1]!, sum };
  }

  const words = ["b", "a", "é", "ab", "", "中文", "a\u0000", "zz", "ÿ"];
  const n = 1009;
  const frame = () =>
    fromColumns({
      k: Array.from({ length: n }, (_, i) => (i % 11 === 0 ? null : ((i * 7) % 13) - 6)),
      s: Array.from({ length: n }, (_, i) => (i % 17 === 0 ? null : words[(i * 5) % words.length]!)),
      x: Array.from({ length: n }, (_, i) => (i % 19 === 0 ? NaN : i % 23 === 0 ? null : ((i * 31) % 101) / 4 - 7)),
      b: Array.from({ length: n }, (_, i) => (i % 13 === 0 ? null : i % 3 === 0)),
      d: Array.from({ length: n }, (_, i) => (i % 29 === 0 ? null : new Date(Date.UTC(1960 + (i % 70), i % 12, 1)))),
      allNull: Array.from({ length: n }, () => null as number | null),
    }).withColumns({ d: col("d").cast("date") });

  it("gives every column's nulls (NaN counted), min, max and sum as the decoded rows do, over parts or whole", async () => {
    const t = await frame().compute();
    const parts = new Table([
      ...(await frame().head(400).compute()).rawParts(),
      ...(await frame().head(0).compute()).rawParts(),
      ...(
        await frame()
          .tail(n - 400)
          .compute()
      ).rawParts(),
    ]);
    const rows = normalizeRows(t.toRows());
    const whole = basinDigest(t, ["k", "s", "x", "b", "d", "allNull"], 10);
    for (const c of whole.columns) {
      const o = oracle(rows.map((r) => r[c.name]!));
      expect({ nulls: c.nulls, min: c.min, max: c.max }).toEqual({ nulls: o.nulls, min: o.min, max: o.max });
      if (c.type === "date" || o.sum === null) expect(c.sum).toBeNull();
      else expect(c.sum).toBeCloseTo(o.sum, 9);
    }
    expect(whole.columns.map((c) => c.type)).toEqual(["int", "string", "float", "bool", "date", "string"]);
    expect(basinDigest(parts, ["k", "s", "x", "b", "d", "allNull"], 10)).toEqual(whole);
  });

  it("digests an empty answer", async () => {
    const d = basinDigest(await frame().head(0).compute(), ["k"], 1);
    expect(d.numRows).toBe(0);
    expect(d.rows).toEqual([]);
    expect(d.columns.every((c) => c.nulls === 0 && c.min === null && c.max === null && c.sum === null)).toBe(true);
  });
});
