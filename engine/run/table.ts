import type { Field, Schema } from "../common/types.js";
import { decodeStrings, type JsColumn, type JsStrings, type JsTable } from "../native/addon.js";
import { concatJsColumns, concatJsTables } from "../io/tables.js";
import { floorMillis } from "../common/civil_text.js";
import { setOwn } from "../common/own.js";

/** One cell of a result: int64 is a number when exact, else a bigint; date/timestamp are Dates (UTC). */
export type Value = number | bigint | string | boolean | Date | null;

function decodeColumn(c: JsColumn, rows: number): Value[] {
  if (c.type === "string") return decodeStrings(c.values as JsStrings, c.validity);
  const out = new Array<Value>(rows);
  for (let i = 0; i < rows; i++) out[i] = cellAt(c, i);
  return out;
}

const utf8 = new TextDecoder();

/**
 * Row `i` of a column as the store handed it over, as the JS value a Table gives
 * (int64 within 2^53 as a number, else a bigint; dates and timestamps as Dates).
 *
 * @example
 * cellAt(table.raw().columns[0], 0) // 42
 */
export function cellAt(c: JsColumn, i: number): Value {
  if (c.validity && !c.validity[i]) return null;
  const v = c.values;
  switch (c.type) {
    case "int64": {
      const b = (v as BigInt64Array)[i];
      return b >= -9007199254740991n && b <= 9007199254740991n ? Number(b) : b;
    }
    case "timestamp":
      return new Date(Number(floorMillis((v as BigInt64Array)[i])));
    case "date":
      return new Date((v as Int32Array)[i] * 86_400_000);
    case "bool":
      return (v as Uint8Array)[i] !== 0;
    case "float64":
      return (v as Float64Array)[i];
    case "string": {
      const s = v as JsStrings;
      return utf8.decode(s.chars.subarray(s.offsets[i], s.offsets[i + 1]));
    }
  }
}

export interface TableInfo {
  skippedLines: number;
  tasks: number;
}

/**
 * A computed result, held in JS memory.
 *
 * @example
 * const t = await df.compute();
 * console.log(t.numRows, t.toRows()[0]);
 */
export class Table {
  readonly schema: Schema;
  readonly numRows: number;
  /** How the result was made: malformed lines skipped, tasks run. */
  readonly info: TableInfo;
  /** The result's partitions as the store handed them over, concatenated only when read. */
  private readonly parts: JsTable[];
  private whole: JsTable | undefined;
  /** Columns decoded into JS values, on first use (a big result may be written or paged, never read whole). */
  private readonly decoded: (Value[] | undefined)[];

  /** @internal `js`: the result, or its partitions in order (same schema, at least one). */
  constructor(js: JsTable | JsTable[], info: TableInfo = { skippedLines: 0, tasks: 0 }) {
    this.parts = Array.isArray(js) ? js : [js];
    const first = this.parts[0];
    if (!first) throw new Error("a Table needs at least one partition");
    this.info = info;
    this.schema = first.names.map((name, i): Field => ({ name, type: first.columns[i].type }));
    this.numRows = this.parts.reduce((n, p) => n + p.rows, 0);
    this.decoded = first.columns.map(() => undefined);
  }

  get columnNames(): string[] {
    return this.schema.map((f) => f.name);
  }

  /** The values of one column. */
  column(name: string): Value[] {
    const i = this.schema.findIndex((f) => f.name === name);
    if (i < 0) throw new Error(`column "${name}" does not exist; the columns are: ${this.columnNames.join(", ")}`);
    return this.at(i);
  }

  /** Every row as an object keyed by column name. */
  toRows(): Record<string, Value>[] {
    const rows: Record<string, Value>[] = [];
    const cols = this.schema.map((_, c) => this.at(c));
    for (let r = 0; r < this.numRows; r++) {
      const row: Record<string, Value> = {};
      this.schema.forEach((f, c) => setOwn(row, f.name, cols[c][r]));
      rows.push(row);
    }
    return rows;
  }

  /** Every column as an array, keyed by name. */
  toColumns(): Record<string, Value[]> {
    return Object.fromEntries(this.schema.map((f, c) => [f.name, this.at(c)]));
  }

  /** @internal The partitions as the store handed them over (readers that go part by part concatenate nothing). */
  rawParts(): readonly JsTable[] {
    return this.whole ? [this.whole] : this.parts;
  }

  /** @internal The columns as the store handed them over, as one table (writers read them without decoding). */
  raw(): JsTable {
    return (this.whole ??= concatJsTables(this.parts));
  }

  private at(c: number): Value[] {
    return (this.decoded[c] ??= decodeColumn(this.whole?.columns[c] ?? concatJsColumns(this.parts, c), this.numRows));
  }
}
