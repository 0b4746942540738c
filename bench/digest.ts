/**
 * What the check keeps of an answer, taken from the timed run's own result: its column
 * names and type classes, per-column statistics over every row (computed inside the
 * system that answered), and its rows — all of them when they fit, else an aligned
 * sample — and the comparison of two such digests.
 */
import { compareResults, type Cell, type Row } from "./compare.js";

/** A column's type, as a class all systems share (DuckDB's HUGEINT and Polars' UInt32 are both "int"). */
export type TypeClass = "int" | "float" | "string" | "date" | "timestamp" | "bool" | `other ${string}`;

/** Statistics of one column over every row of an answer. */
export interface ColumnDigest {
  name: string;
  type: TypeClass;
  /** Nulls (and NaN, which some systems give where others give null). */
  nulls: number;
  /** Smallest and largest value (numbers; strings by their bytes; dates as YYYY-MM-DD). */
  min: Cell;
  max: Cell;
  /** Numbers: their sum; strings: their total length in characters; dates: null. */
  sum: number | null;
}

export interface Digest {
  numRows: number;
  columns: ColumnDigest[];
  /** The rows sorted by the check's order: all of them, or every `stride`-th. */
  rows: Row[];
  stride: number;
}

/** Answers up to this many rows are compared row by row in full. */
export const FULL_ROWS = 500_000;
/** Larger answers: their statistics in full, and this many rows sampled at a stride. */
export const SAMPLE_ROWS = 200_000;

/** How many rows of an answer the check compares one by one. */
export interface RowLimits {
  /** Answers up to this many rows are compared in full. */
  fullRows: number;
  /** Larger ones are sampled at a stride to about this many. */
  sampleRows: number;
}

export const ROW_LIMITS: RowLimits = { fullRows: FULL_ROWS, sampleRows: SAMPLE_ROWS };

/** The stride at which an answer of `rows` rows is sampled (1: every row). */
export function strideFor(rows: number, limits: RowLimits = ROW_LIMITS): number {
  return rows <= limits.fullRows ? 1 : Math.ceil(rows / limits.sampleRows);
}

/** DuckDB's type name as a class. */
export function duckdbTypeClass(t: string): TypeClass {
  const u = t.toUpperCase();
  if (/^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT)$/.test(u)) return "int";
  if (/^(FLOAT|DOUBLE|REAL)$/.test(u) || u.startsWith("DECIMAL")) return "float";
  if (u === "VARCHAR") return "string";
  if (u === "DATE") return "date";
  if (u.startsWith("TIMESTAMP")) return "timestamp";
  if (u === "BOOLEAN") return "bool";
  return `other ${t}`;
}

/** A Polars dtype (as String(dtype), e.g. "DataType(Int64)" or "Int64") as a class. */
export function polarsTypeClass(t: string): TypeClass {
  const name = /^DataType\((.*)\)$/.exec(t)?.[1] ?? t;
  if (/^U?Int(8|16|32|64)$/.test(name)) return "int";
  if (/^Float(32|64)$/.test(name) || name.startsWith("Decimal")) return "float";
  if (name === "Utf8" || name === "String") return "string";
  if (name === "Date") return "date";
  if (name.startsWith("Datetime")) return "timestamp";
  if (name === "Bool" || name === "Boolean") return "bool";
  return `other ${name}`;
}

/** A Basin dtype as a class. */
export function basinTypeClass(t: string): TypeClass {
  switch (t) {
    case "int64":
      return "int";
    case "float64":
      return "float";
    case "string":
    case "date":
    case "timestamp":
    case "bool":
      return t;
    default:
      return `other ${t}`;
  }
}

function sameNumber(a: number, b: number, tol: number): boolean {
  return a === b || Math.abs(a - b) <= tol;
}

function sameCell(a: Cell, b: Cell, rtol: number, exact: boolean): boolean {
  if (typeof a === "number" && typeof b === "number" && !exact)
    return sameNumber(a, b, rtol * Math.max(Math.abs(a), Math.abs(b)) + 1e-12);
  return a === b;
}

/**
 * Compares an answer's digest with the reference's. Returns null when they agree,
 * otherwise the first difference in one line: column names (in order), type classes,
 * row count, each column's null count (exactly), min and max (numbers within `rtol`
 * relative), sum (within `rtol`, plus the rounding a sum of that many rows may carry),
 * then the rows themselves (`keys` exactly, other numbers within `rtol`), unless the
 * answer was digested without rows (stride 0: its rows are compared one by one by the
 * reference's system, see row_check.ts).
 */
export function compareDigests(expected: Digest, actual: Digest, keys: readonly string[], rtol: number): string | null {
  const en = expected.columns.map((c) => c.name);
  const an = actual.columns.map((c) => c.name);
  if (en.join("\u0000") !== an.join("\u0000")) return `columns [${an.join(",")}], expected [${en.join(",")}]`;
  for (let i = 0; i < en.length; i++) {
    const e = expected.columns[i]!,
      a = actual.columns[i]!;
    if (e.type !== a.type) return `column ${e.name} is ${a.type}, expected ${e.type}`;
  }
  if (expected.numRows !== actual.numRows) return `row count ${actual.numRows}, expected ${expected.numRows}`;
  for (let i = 0; i < en.length; i++) {
    const e = expected.columns[i]!,
      a = actual.columns[i]!;
    const exact = e.type !== "float";
    if (e.nulls !== a.nulls) return `column ${e.name}: ${a.nulls} nulls, expected ${e.nulls}`;
    for (const k of ["min", "max"] as const)
      if (!sameCell(e[k], a[k], rtol, exact))
        return `column ${e.name}: ${k} ${JSON.stringify(a[k])}, expected ${JSON.stringify(e[k])}`;
    if (e.sum !== null || a.sum !== null) {
      const magnitude = Math.max(Math.abs(Number(e.min ?? 0)), Math.abs(Number(e.max ?? 0)));
      const tol =
        e.type === "string"
          ? 0
          : rtol * Math.max(Math.abs(e.sum ?? 0), Math.abs(a.sum ?? 0)) + 1e-13 * expected.numRows * magnitude;
      if (e.sum === null || a.sum === null || !sameNumber(e.sum, a.sum, tol))
        return `column ${e.name}: sum ${JSON.stringify(a.sum)}, expected ${JSON.stringify(e.sum)}`;
    }
  }
  // An answer digested without rows (stride 0) has its every row compared elsewhere.
  if (actual.stride === 0) return null;
  if (expected.stride !== actual.stride)
    return `sampled every ${actual.stride}th row, expected every ${expected.stride}th`;
  return compareResults(expected.rows, actual.rows, keys, rtol);
}
