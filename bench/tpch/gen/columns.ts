// The columns a generated chunk holds, typed as Basin stores them: int64 keys and
// counts, float64 money, date (days since 1970-01-01), strings.
import { StringColumn } from "./strings.js";

export type ColumnType = "int64" | "float64" | "date" | "string";

/** int64 values written as two 32-bit halves (no BigInt per value); exact below 2^53. */
export class Int64Column {
  private readonly values: BigInt64Array;
  private readonly words: Int32Array;

  constructor(rows: number) {
    this.values = new BigInt64Array(rows);
    this.words = new Int32Array(this.values.buffer);
  }

  set(i: number, x: number): void {
    this.words[2 * i] = x | 0;
    this.words[2 * i + 1] = Math.floor(x / 4294967296);
  }

  take(rows: number): BigInt64Array {
    return this.values.subarray(0, rows);
  }
}

/** Strings as UTF-8 bytes and int32 offsets (rows + 1 of them). */
export interface StringValues {
  chars: Uint8Array;
  offsets: Int32Array;
}

export type Column =
  | { name: string; type: "int64"; values: BigInt64Array }
  | { name: string; type: "float64"; values: Float64Array }
  | { name: string; type: "date"; values: Int32Array }
  | { name: string; type: "string"; values: StringValues };

/** One chunk of one table: `rows` rows of each column, in the table's column order. */
export interface Chunk {
  table: string;
  rows: number;
  columns: Column[];
}

/** A column being generated: Float64Array is float64, Int32Array is date. */
export type Builder = Int64Column | Float64Array | Int32Array | StringColumn;

/** The chunk the builders hold, cut to `rows` rows. */
export function chunk(table: string, rows: number, builders: [string, Builder][]): Chunk {
  const columns = builders.map(([name, b]): Column => {
    if (b instanceof Int64Column) return { name, type: "int64", values: b.take(rows) };
    if (b instanceof Float64Array) return { name, type: "float64", values: b.subarray(0, rows) };
    if (b instanceof Int32Array) return { name, type: "date", values: b.subarray(0, rows) };
    if (b.length !== rows) throw new Error(`${table}.${name}: ${b.length} strings for ${rows} rows`);
    return { name, type: "string", values: { chars: b.bytes(), offsets: b.offsets.subarray(0, rows + 1) } };
  });
  return { table, rows, columns };
}
