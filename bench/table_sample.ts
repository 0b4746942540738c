// The checked sample of a Basin answer, read from the arrays the store handed over.
import { cellAt, type Table } from "../engine/run/table.js";
import { native, type JsColumn, type JsTable } from "../engine/native/addon.js";
import type { DType } from "../engine/common/types.js";
import type { NativeExpr } from "../engine/graph/kernel_args.js";
import { normalizeCell, type Cell, type Row } from "./compare.js";
import { basinTypeClass, type ColumnDigest, type Digest } from "./digest.js";

/**
 * A Basin answer's rows sorted by `order` (nulls and NaN first, numbers numerically,
 * strings by their UTF-8 bytes) with every `stride`-th one kept. The sort is Basin's
 * native one over a copy of the answer in the store, and yields only the permutation:
 * a JS comparator sort of a 1e7-row answer by six keys took 80 s, and sorting the
 * whole table (every column gathered) most of 10 s, of a GPU machine's few minutes.
 * Only the kept rows become JS values (decoding a 1e7-row answer whole grew Node's heap
 * by gigabytes, slowing the runs that came after).
 *
 * @example
 * const rows = sortAndStrideTable(await df.compute(), ["id1", "v1"], 50);
 */
export function sortAndStrideTable(t: Table, order: readonly string[], stride: number): Row[] {
  const parts = t.rawParts();
  return withStored(parts, order, (h) => strideRows(parts, sortedRows(h, order, order), stride));
}

/**
 * Calls `fn` with the columns `names` of the parts, one after another, as one table in
 * the store (bulk copies; floats' NaNs made nulls, as the check counts and orders them),
 * and their types; the table is released after.
 */
function withStored<R>(parts: readonly JsTable[], names: readonly string[], fn: (h: number, types: DType[]) => R): R {
  const addon = native();
  const at = names.map((k) => parts[0]!.names.indexOf(k));
  const handles: number[] = [];
  let whole: number | undefined;
  try {
    for (const p of parts)
      handles.push(
        addon.tableFromJs({ rows: p.rows, names: [...names], columns: at.map((i) => nanAsNull(p.columns[i]!)) }),
      );
    whole = handles.length === 1 ? handles[0]! : addon.concat(handles);
    return fn(
      whole,
      at.map((i) => parts[0]!.columns[i]!.type),
    );
  } finally {
    for (const h of handles) addon.release(h);
    if (whole !== undefined && handles.length > 1) addon.release(whole);
  }
}

/** The rows of stored table `h` (columns `names`) in ascending order of the `order` columns, nulls first, ties by row. */
function sortedRows(h: number, names: readonly string[], order: readonly string[]): BigInt64Array {
  return native().sortIndices(
    h,
    order.map((k) => ({ column: names.indexOf(k), descending: false, nullsFirst: true })),
  );
}

/** Every `stride`-th of the rows `idx` (numbered across the parts) as JS rows. */
function strideRows(parts: readonly JsTable[], idx: BigInt64Array, stride: number): Row[] {
  const starts = partStarts(parts);
  const names = parts[0]!.names;
  const rows: Row[] = [];
  for (let k = 0; k < idx.length; k += Math.max(1, stride)) {
    const r = Number(idx[k]!);
    const p = partOf(starts, r);
    const cols = parts[p]!.columns;
    rows.push(Object.fromEntries(names.map((n, c) => [n, normalizeCell(cellAt(cols[c]!, r - starts[p]!))])));
  }
  return rows;
}

/** The first row of each part, and the total rows last. */
function partStarts(parts: readonly JsTable[]): number[] {
  const starts = [0];
  for (const p of parts) starts.push(starts[starts.length - 1]! + p.rows);
  return starts;
}

/** The part holding row `r` (binary search of `starts`). */
function partOf(starts: readonly number[], r: number): number {
  let lo = 0,
    hi = starts.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= r) lo = mid;
    else hi = mid - 1;
  }
  return lo;
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

/**
 * Statistics of every column of a stored table (floats' NaNs already nulls), computed
 * by Basin's kernels as DuckDB's and Polars' are by theirs: nulls, min and max, and the
 * sum (numbers; a string column's total characters).
 */
function storedStats(h: number, types: readonly DType[], rows: number): Omit<ColumnDigest, "name" | "type">[] {
  const addon = native();
  // Column i as summed, in doubles as the other systems' statistics are (an int64 sum
  // would wrap past 2^63): a string's length in characters, a bool as 0/1.
  const summed = types.map((type, i): NativeExpr => {
    const c: NativeExpr = { kind: "col", index: i, type };
    const len: NativeExpr = { kind: "fn", name: "str.len", args: [c], options: {}, type: "int64" };
    return type === "float64" ? c : { kind: "cast", arg: type === "string" ? len : c, type: "float64" };
  });
  const n = types.length;
  const withSums = addon.evalExprs(
    h,
    [...types.map((type, i): NativeExpr => ({ kind: "col", index: i, type })), ...summed],
    [...types.map((_, i) => `c${i}`), ...types.map((_, i) => `s${i}`)],
  );
  try {
    const aggs = types.flatMap((type, i) => [
      { op: "count" as const, column: i, name: `n${i}` },
      { op: "min" as const, column: i, name: `lo${i}` },
      { op: "max" as const, column: i, name: `hi${i}` },
      ...(type === "date" || type === "timestamp" ? [] : [{ op: "sum" as const, column: n + i, name: `sum${i}` }]),
    ]);
    const one = addon.groupByAgg(withSums, [], aggs, "full");
    try {
      const got = addon.tableToJs(one);
      // A timestamp's min and max as microseconds (as DuckDB's epoch_us), others as the check normalizes them.
      const cell = (name: string): Cell => {
        const c = got.columns[got.names.indexOf(name)]!;
        if (got.rows === 0 || (c.validity && !c.validity[0])) return null;
        return c.type === "timestamp" ? Number((c.values as BigInt64Array)[0]) : normalizeCell(cellAt(c, 0));
      };
      return types.map((type, i) => {
        const nulls = rows - Number(cell(`n${i}`) ?? 0);
        if (nulls === rows) return { nulls, min: null, max: null, sum: null };
        const sum = type === "date" || type === "timestamp" ? null : Number(cell(`sum${i}`));
        return { nulls, min: cell(`lo${i}`), max: cell(`hi${i}`), sum };
      });
    } finally {
      addon.release(one);
    }
  } finally {
    addon.release(withSums);
  }
}

/**
 * The digest of a Basin answer (see digest.ts): statistics over every row and its rows
 * sorted by `order`, every `stride`-th kept (none with stride 0), both from one copy of
 * the answer in the store.
 *
 * @example
 * const d = basinDigest(await df.compute(), ["id1"], 1);
 */
export function basinDigest(t: Table, order: readonly string[], stride: number): Digest {
  const parts = t.rawParts();
  const names = parts[0]!.names;
  return withStored(parts, names, (h, types) => {
    const stats = storedStats(h, types, t.numRows);
    return {
      numRows: t.numRows,
      columns: names.map((name, i) => ({ name, type: basinTypeClass(types[i]!), ...stats[i]! })),
      rows: stride > 0 ? strideRows(parts, sortedRows(h, names, order), stride) : [],
      stride,
    };
  });
}

/**
 * Writes a Basin answer as a new Parquet file (uncompressed: the reader is DuckDB on
 * the same machine, at once), for the check that compares every row inside DuckDB.
 *
 * @example
 * writeParquetAnswer(await df.compute(), "/tmp/answer.parquet");
 */
export function writeParquetAnswer(t: Table, path: string): void {
  const parts = t.rawParts();
  withStored(parts, parts[0]!.names, (h) => native().parquetWriteFile(h, path, "uncompressed", 1_000_000));
}
