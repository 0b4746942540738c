// A generated chunk as Parquet bytes (a whole one-row-group file, stitched into the
// table's file by stitch.ts) or as CSV text.
import {
  DateDay,
  Field,
  Float64,
  Int64,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  Table as ArrowTable,
  tableToIPC,
  Utf8,
  type Data,
} from "apache-arrow";
import {
  Compression,
  EnabledStatistics,
  Table as WasmTable,
  writeParquet,
  WriterPropertiesBuilder,
} from "parquet-wasm";
import { csvField } from "../../../engine/common/csv_field.js";
import type { Chunk, Column } from "./columns.js";

function arrowData(c: Column, rows: number): Data {
  switch (c.type) {
    case "int64":
      return makeData({ type: new Int64(), length: rows, nullCount: 0, data: c.values });
    case "float64":
      return makeData({ type: new Float64(), length: rows, nullCount: 0, data: c.values });
    case "date":
      return makeData({ type: new DateDay(), length: rows, nullCount: 0, data: c.values });
    case "string":
      return makeData({
        type: new Utf8(),
        length: rows,
        nullCount: 0,
        data: c.values.chars,
        valueOffsets: c.values.offsets,
      });
  }
}

/** The chunk as one Arrow record batch (non-nullable columns: TPC-H has no nulls). */
export function chunkBatch(c: Chunk): RecordBatch {
  const data = c.columns.map((col) => arrowData(col, c.rows));
  const fields = c.columns.map((col, i) => new Field(col.name, data[i].type, false));
  const struct = makeData({ type: new Struct(fields), length: c.rows, nullCount: 0, children: data });
  return new RecordBatch(new Schema(fields), struct);
}

/**
 * The chunk as a Parquet file of one row group (Snappy, dictionary pages where they
 * pay, min/max statistics per column chunk).
 */
export function chunkParquet(c: Chunk): Uint8Array {
  let props = new WriterPropertiesBuilder()
    .setCompression(Compression.SNAPPY)
    .setStatisticsEnabled(EnabledStatistics.Chunk)
    .setMaxRowGroupSize(Math.max(1, c.rows));
  // A dictionary of nearly unique values is built, then dropped: skip it (a third of the time).
  for (const col of c.columns)
    if (NO_DICTIONARY.test(col.name)) props = props.setColumnDictionaryEnabled(col.name, false);
  const table = WasmTable.fromIPCStream(tableToIPC(new ArrowTable([chunkBatch(c)]), "stream"));
  return writeParquet(table, props.build());
}

/** Columns whose values are (nearly) all distinct within a chunk. */
const NO_DICTIONARY =
  /^(l_orderkey|l_partkey|o_orderkey|o_custkey|ps_partkey|p_partkey|c_custkey|s_suppkey|.*_(comment|address|phone|name|acctbal|totalprice|extendedprice|supplycost))$/;

/** The CSV header line of a table with these columns. */
export function csvHeader(c: Chunk): string {
  return c.columns.map((col) => col.name).join(",") + "\n";
}

const DATES = new Map<number, string>();
function dateText(days: number): string {
  let s = DATES.get(days);
  if (s === undefined) DATES.set(days, (s = new Date(days * 86_400_000).toISOString().slice(0, 10)));
  return s;
}

/** The chunk's rows as CSV lines (money with two decimals, dates as YYYY-MM-DD). */
export function chunkCsv(c: Chunk): string {
  const text = new TextDecoder();
  const cells = c.columns.map((col): ((i: number) => string) => {
    switch (col.type) {
      case "int64":
        return (i) => String(col.values[i]);
      case "float64":
        return (i) => col.values[i].toFixed(2);
      case "date":
        return (i) => dateText(col.values[i]);
      case "string": {
        const { chars, offsets } = col.values;
        return (i) => csvField(text.decode(chars.subarray(offsets[i], offsets[i + 1])));
      }
    }
  });
  const lines: string[] = [];
  for (let r = 0; r < c.rows; r++) lines.push(cells.map((f) => f(r)).join(","));
  return lines.join("\n") + (c.rows > 0 ? "\n" : "");
}
