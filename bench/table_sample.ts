// The checked sample of a Basin answer, read from the arrays the store handed over.
import { cellAt, type Table } from "../engine/run/table.js";
import type { JsColumn, JsStrings } from "../engine/native/addon.js";
import { normalizeCell, type Row } from "./compare.js";

type Compare = (a: number, b: number) => number;

/**
 * A Basin answer's rows sorted by `order` (null first, numbers numerically, strings by
 * their UTF-8 bytes, as DuckDB and Polars order them) with every `stride`-th one kept.
 * Only the kept rows become JS values: decoding a 1e7-row answer whole grew Node's heap
 * by gigabytes, whose collection and memory pressure slowed the runs that came after.
 *
 * @example
 * const rows = sortAndStrideTable(await df.compute(), ["id1", "v1"], 50);
 */
export function sortAndStrideTable(t: Table, order: readonly string[], stride: number): Row[] {
  const raw = t.raw();
  const byName = new Map(raw.names.map((n, i) => [n, raw.columns[i]!]));
  const compares = order.map((k) => compareRows(byName.get(k)!, t.numRows));
  const idx = new Uint32Array(t.numRows);
  for (let i = 0; i < idx.length; i++) idx[i] = i;
  idx.sort((a, b) => {
    for (const c of compares) {
      const d = c(a, b);
      if (d !== 0) return d;
    }
    return 0;
  });
  const rows: Row[] = [];
  const step = Math.max(1, stride);
  for (let k = 0; k < idx.length; k += step) {
    const r = idx[k]!;
    rows.push(Object.fromEntries(raw.names.map((n, c) => [n, normalizeCell(cellAt(raw.columns[c]!, r))])));
  }
  return rows;
}

/** Row order within one column: nulls (and NaN, which the check treats as null) first. */
function compareRows(c: JsColumn, rows: number): Compare {
  const valid = c.validity;
  if (c.type === "string") {
    const { offsets: o, chars: ch } = c.values as JsStrings;
    return (a, b) => {
      const na = valid !== null && !valid[a],
        nb = valid !== null && !valid[b];
      if (na || nb) return Number(nb) - Number(na);
      let i = o[a]!,
        j = o[b]!;
      const ea = o[a + 1]!,
        eb = o[b + 1]!;
      for (; i < ea && j < eb; i++, j++) if (ch[i] !== ch[j]) return ch[i]! - ch[j]!;
      return ea - i - (eb - j);
    };
  }
  // Numbers once per row (NaN for null), so that comparisons read a Float64Array.
  const v = c.values as BigInt64Array | Float64Array | Int32Array | Uint8Array;
  const x = new Float64Array(rows);
  for (let i = 0; i < x.length; i++) x[i] = valid !== null && !valid[i] ? NaN : Number(v[i]);
  return (a, b) => {
    const p = x[a]!,
      q = x[b]!;
    if (p !== p || q !== q) return Number(q !== q) - Number(p !== p);
    return p < q ? -1 : p > q ? 1 : 0;
  };
}
