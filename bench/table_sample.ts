// The checked sample of a Basin answer, read from the arrays the store handed over.
import { cellAt, type Table } from "../engine/run/table.js";
import { native, type JsColumn, type JsStrings } from "../engine/native/addon.js";
import { normalizeCell, type Cell, type Row } from "./compare.js";
import { basinTypeClass, type ColumnDigest, type Digest } from "./digest.js";

type Compare = (a: number, b: number) => number;

/**
 * A Basin answer's rows sorted by `order` (nulls and NaN first, numbers numerically,
 * strings by their UTF-8 bytes) with
 * every `stride`-th one kept. The sort is Basin's native one over the answer's arrays
 * (a JS comparator sort of a 1e7-row answer by six keys took 80 s, most of a GPU
 * machine's minutes); only the kept rows become JS values (decoding a 1e7-row answer
 * whole grew Node's heap by gigabytes, slowing the runs that came after).
 *
 * @example
 * const rows = sortAndStrideTable(await df.compute(), ["id1", "v1"], 50);
 */
export function sortAndStrideTable(t: Table, order: readonly string[], stride: number): Row[] {
  const raw = t.raw();
  const byName = new Map(raw.names.map((n, i) => [n, raw.columns[i]!]));
  const idx = sortedRows(
    order.map((k) => byName.get(k)!),
    t.numRows,
  );
  const rows: Row[] = [];
  const step = Math.max(1, stride);
  for (let k = 0; k < idx.length; k += step) {
    const r = Number(idx[k]!);
    rows.push(Object.fromEntries(raw.names.map((n, c) => [n, normalizeCell(cellAt(raw.columns[c]!, r))])));
  }
  return rows;
}

/** A float column whose NaNs are nulls (the check orders and compares them alike). */
function nanAsNull(c: JsColumn): JsColumn {
  if (c.type !== "float64") return c;
  const v = c.values as Float64Array;
  if (!v.some((x) => Number.isNaN(x))) return c;
  const validity = c.validity ? Uint8Array.from(c.validity) : new Uint8Array(v.length).fill(1);
  for (let i = 0; i < v.length; i++) if (Number.isNaN(v[i])) validity[i] = 0;
  return { ...c, validity };
}

/** 0..n-1 as int64, written through their low 32 bits (a BigInt per row took seconds at 1e8 rows). */
function rowNumbers(n: number): BigInt64Array {
  const out = new BigInt64Array(n);
  const words = new Uint32Array(out.buffer);
  const little = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
  for (let i = 0; i < n; i++) words[2 * i + (little ? 0 : 1)] = i;
  return out;
}

/** The row numbers of `columns` (numRows rows) in ascending order, nulls and NaN first, ties by row. */
function sortedRows(columns: JsColumn[], numRows: number): BigInt64Array {
  const addon = native();
  columns = columns.map(nanAsNull);
  const index: JsColumn = { type: "int64", values: rowNumbers(numRows), validity: null };
  const names = [...columns.map((_, i) => `k${i}`), "row"];
  const h = addon.tableFromJs({ rows: numRows, names, columns: [...columns, index] });
  try {
    const sorted = addon.sortTable(
      h,
      columns.map((_, i) => ({ column: i, descending: false, nullsFirst: true })),
    );
    const rowsOnly = addon.evalExprs(sorted, [{ kind: "col", index: columns.length, type: "int64" }], ["row"]);
    addon.release(sorted);
    try {
      return addon.tableToJs(rowsOnly).columns[0]!.values as BigInt64Array;
    } finally {
      addon.release(rowsOnly);
    }
  } finally {
    addon.release(h);
  }
}

/** Row order within a string column by UTF-8 bytes (DuckDB's and Polars' order), nulls first. */
function compareStrings(c: JsColumn): Compare {
  const valid = c.validity;
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

/** Statistics of one column of a Basin answer, read from its arrays (nulls and NaN counted together). */
function basinColumn(name: string, c: JsColumn, rows: number): ColumnDigest {
  const type = basinTypeClass(c.type);
  const valid = c.validity;
  let nulls = 0;
  let min: Cell = null,
    max: Cell = null,
    sum: number | null = null;
  if (c.type === "string") {
    const s = c.values as JsStrings;
    const text = new TextDecoder();
    let lo: string | null = null,
      hi: string | null = null,
      first = -1,
      chars = 0;
    const cmp = compareStrings(c);
    let loRow = -1,
      hiRow = -1;
    for (let i = 0; i < rows; i++) {
      if (valid && !valid[i]) {
        nulls++;
        continue;
      }
      if (first < 0) first = loRow = hiRow = i;
      if (cmp(i, loRow) < 0) loRow = i;
      if (cmp(i, hiRow) > 0) hiRow = i;
      const bytes = s.chars.subarray(s.offsets[i]!, s.offsets[i + 1]!);
      chars += s.ascii ? bytes.length : [...text.decode(bytes)].length;
    }
    if (first >= 0) {
      lo = text.decode(s.chars.subarray(s.offsets[loRow]!, s.offsets[loRow + 1]!));
      hi = text.decode(s.chars.subarray(s.offsets[hiRow]!, s.offsets[hiRow + 1]!));
      sum = chars;
    }
    min = lo;
    max = hi;
  } else {
    const v = c.values as BigInt64Array | Float64Array | Int32Array | Uint8Array;
    let lo = Infinity,
      hi = -Infinity,
      total = 0;
    for (let i = 0; i < rows; i++) {
      const x = Number(v[i]);
      if ((valid && !valid[i]) || Number.isNaN(x)) {
        nulls++;
        continue;
      }
      if (x < lo) lo = x;
      if (x > hi) hi = x;
      total += x;
    }
    if (nulls < rows) {
      if (c.type === "date") {
        min = normalizeCell(new Date(lo * 86_400_000));
        max = normalizeCell(new Date(hi * 86_400_000));
      } else {
        min = lo;
        max = hi;
        if (c.type !== "timestamp") sum = total;
      }
    }
  }
  return { name, type, nulls, min, max, sum };
}

/**
 * The digest of a Basin answer (see digest.ts): statistics over every row, read from
 * the result's arrays, and its rows sorted by `order`, every `stride`-th kept.
 *
 * @example
 * const d = basinDigest(await df.compute(), ["id1"], 1);
 */
export function basinDigest(t: Table, order: readonly string[], stride: number): Digest {
  const raw = t.raw();
  return {
    numRows: t.numRows,
    columns: raw.names.map((n, i) => basinColumn(n, raw.columns[i]!, t.numRows)),
    rows: sortAndStrideTable(t, order, stride),
    stride,
  };
}
