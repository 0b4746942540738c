// Row-group pruning: whether a row group can hold a row for which a (resolved)
// predicate is true, judged from its min/max/null-count statistics. Conservative:
// anything it does not understand keeps the row group.
import type { BinaryOp, NativeExpr } from "../graph/kernel_args.js";
import type { ChunkStats, ParquetColumn, RowGroupInfo } from "./parquet_footer.js";
import { disjoint, type Interval } from "../common/intervals.js";

type Bound = number | Uint8Array;

const FLIP: Partial<Record<BinaryOp, BinaryOp>> = { eq: "eq", ne: "ne", lt: "gt", le: "ge", gt: "lt", ge: "le" };
const utf8 = new TextEncoder();

/** A statistics value in Basin's domain (numbers; strings as UTF-8 bytes), or undefined. */
function decodeBound(b: Uint8Array | undefined, col: ParquetColumn): Bound | undefined {
  if (!b) return undefined;
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const int = (): number | undefined => {
    if (col.physical === "INT32" && b.length >= 4) return dv.getInt32(0, true);
    if (col.physical === "INT64" && b.length >= 8) {
      const v = dv.getBigInt64(0, true);
      return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : undefined;
    }
    return undefined;
  };
  switch (col.stat) {
    case "int":
    case "date":
      return int();
    case "timestamp": {
      const v = int();
      // Within safe integers, scaling keeps the order; nanoseconds round down like the reader.
      return v === undefined ? undefined : col.toMicros >= 1 ? v * col.toMicros : Math.floor(v * col.toMicros);
    }
    case "float": {
      const v =
        col.physical === "FLOAT" && b.length >= 4
          ? dv.getFloat32(0, true)
          : b.length >= 8
            ? dv.getFloat64(0, true)
            : undefined;
      return v === undefined || Number.isNaN(v) ? undefined : v;
    }
    case "bool":
      return b.length >= 1 ? b[0] & 1 : undefined;
    case "string":
      return b;
    case "none":
      return undefined;
  }
}

function literal(e: NativeExpr): Bound | undefined {
  if (e.kind !== "lit" || e.value === null) return undefined;
  if (typeof e.value === "string") return utf8.encode(e.value);
  if (typeof e.value === "boolean") return e.value ? 1 : 0;
  return e.value;
}

function cmp(a: Bound, b: Bound): number | undefined {
  if (typeof a === "number" && typeof b === "number") return a < b ? -1 : a > b ? 1 : 0;
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(a, b);
  return undefined;
}

/** Whether `col op lit` can be true somewhere in [min, max]. */
function mayCompare(op: BinaryOp, s: ChunkStats, rows: number, col: ParquetColumn, lit: Bound): boolean {
  // A comparison is never true on null: a group of nulls only has no match.
  if (s.nullCount !== undefined && s.nullCount >= rows) return false;
  const min = decodeBound(s.min, col),
    max = decodeBound(s.max, col);
  if (min === undefined || max === undefined) return true;
  // NaN is not in float statistics but sorts above every number.
  if (col.stat === "float" && (op === "gt" || op === "ge" || op === "ne")) return true;
  const lo = cmp(min, lit),
    hi = cmp(max, lit);
  if (lo === undefined || hi === undefined) return true;
  switch (op) {
    case "eq":
      return lo <= 0 && hi >= 0;
    case "ne":
      return !(lo === 0 && hi === 0);
    case "lt":
      return lo < 0;
    case "le":
      return lo <= 0;
    case "gt":
      return hi > 0;
    case "ge":
      return hi >= 0;
    default:
      return true;
  }
}

/**
 * Whether row group `rg` may hold rows where `e` is true. `fileIndex[i]` is the
 * file column (index into `columns`, the footer's) behind input column i of `e`.
 *
 * @example
 * mayMatch(resolveExpr(pred, scanned), footer.rowGroups[0], footer.columns, [3, 0])
 */
export function mayMatch(e: NativeExpr, rg: RowGroupInfo, columns: ParquetColumn[], fileIndex: number[]): boolean {
  if (e.kind === "binary") {
    if (e.op === "and") return mayMatch(e.left, rg, columns, fileIndex) && mayMatch(e.right, rg, columns, fileIndex);
    if (e.op === "or") return mayMatch(e.left, rg, columns, fileIndex) || mayMatch(e.right, rg, columns, fileIndex);
    const flipped = FLIP[e.op];
    if (!flipped) return true;
    const [c, l, op] = e.left.kind === "col" ? [e.left, e.right, e.op] : [e.right, e.left, flipped];
    if (c.kind !== "col") return true;
    const lit = literal(l);
    if (lit === undefined) return true;
    const f = fileIndex[c.index];
    return mayCompare(op, rg.chunks[columns[f].leaf].stats, rg.rows, columns[f], lit);
  }
  if (e.kind === "unary" && e.arg.kind === "col" && (e.op === "isNull" || e.op === "isNotNull")) {
    const nulls = rg.chunks[columns[fileIndex[e.arg.index]].leaf].stats.nullCount;
    if (nulls === undefined) return true;
    return e.op === "isNull" ? nulls > 0 : nulls < rg.rows;
  }
  return true;
}

/**
 * The smallest and largest value of a numeric or date column over row groups
 * `groups` (every one when absent), from their statistics; undefined when a group
 * has none or the column is not a number. The planner's estimates use it.
 *
 * @example
 * numericRange(footer, 2) // { min: 8036, max: 10592 } for a DATE column
 */
export function numericRange(
  footer: { columns: ParquetColumn[]; rowGroups: RowGroupInfo[] },
  column: number,
  groups?: readonly number[],
): { min: number; max: number } | undefined {
  const col = footer.columns[column];
  if (!col || (col.stat !== "int" && col.stat !== "date" && col.stat !== "float")) return undefined;
  let min = Infinity,
    max = -Infinity;
  for (const g of groups ?? footer.rowGroups.map((_, i) => i)) {
    const rg = footer.rowGroups[g];
    if (!rg || rg.rows === 0) continue;
    const s = rg.chunks[col.leaf]?.stats;
    if (s?.nullCount !== undefined && s.nullCount >= rg.rows) continue;
    const lo = decodeBound(s?.min, col),
      hi = decodeBound(s?.max, col);
    if (typeof lo !== "number" || typeof hi !== "number") return undefined;
    min = Math.min(min, lo);
    max = Math.max(max, hi);
  }
  return min <= max ? { min, max } : undefined;
}

/**
 * Whether every value of an integer or date column lies in one row group alone: the
 * groups' statistics say they hold no null and their [min, max] intervals do not
 * overlap (a file written in that column's order, as TPC-H's lineitem by l_orderkey).
 * Scan partitions are whole row groups, so each value then lies in one partition and
 * an aggregation grouped by the column needs no shuffle (Dask's known divisions).
 * `groups` lists, per file, the row groups read.
 *
 * @example
 * clustered(["a.parquet", "b.parquet"].map(readParquetFooter), [[0, 1], [0]], "l_orderkey") // true
 */
export function clustered(
  footers: readonly { columns: ParquetColumn[]; rowGroups: RowGroupInfo[] }[],
  groups: readonly (readonly number[])[],
  name: string,
): boolean {
  const intervals: Interval[] = [];
  for (let f = 0; f < footers.length; f++) {
    const col = footers[f].columns.find((c) => c.name === name);
    if (!col || (col.stat !== "int" && col.stat !== "date")) return false;
    for (const g of groups[f] ?? []) {
      const rg = footers[f].rowGroups[g];
      if (!rg || rg.rows === 0) continue;
      const s = rg.chunks[col.leaf]?.stats;
      const lo = decodeBound(s?.min, col),
        hi = decodeBound(s?.max, col);
      if (s?.nullCount !== 0 || typeof lo !== "number" || typeof hi !== "number") return false;
      intervals.push({ min: lo, max: hi });
    }
  }
  return disjoint(intervals);
}
