import { writeFileSync, renameSync } from "node:fs";
import { extname } from "node:path";
import { tableToIPC, vectorFromArray, Table as ArrowTable, Int64, Float64, Bool, Utf8, DateDay, TimestampMicrosecond, type DataType } from "apache-arrow";
import { csvField } from "../common/csv_field.js";
import { BasinError } from "../common/errors.js";
import type { DType } from "../common/types.js";
import type { Table, Value } from "../api/table.js";
import { formatValue } from "./format_table.js";

function csvCell(v: Value): string {
  if (v === null) return "";
  return csvField(v instanceof Date ? formatValue(v) : String(v));
}

/** The table as CSV text (RFC 4180 quoting, nulls as empty fields). */
export function toCsv(t: Table): string {
  const cols = t.columnNames.map((n) => t.column(n));
  const lines = [t.columnNames.map((n) => csvCell(n)).join(",")];
  for (let r = 0; r < t.numRows; r++) lines.push(cols.map((c) => csvCell(c[r])).join(","));
  return lines.join("\n") + "\n";
}

function arrowType(t: DType): DataType {
  switch (t) {
    case "int64": return new Int64();
    case "float64": return new Float64();
    case "bool": return new Bool();
    case "string": return new Utf8();
    case "date": return new DateDay();
    case "timestamp": return new TimestampMicrosecond();
  }
}

function arrowValue(v: Value, t: DType): unknown {
  if (v === null) return null;
  if (t === "int64") return BigInt(v as number | bigint);
  if (t === "timestamp") return (v as Date).getTime();
  return v;
}

/** The table as an Arrow IPC file. */
export function toArrowIpc(t: Table): Uint8Array {
  const vectors = Object.fromEntries(
    t.schema.map((f) => [f.name, vectorFromArray(t.column(f.name).map((v) => arrowValue(v, f.type)), arrowType(f.type))]),
  );
  return tableToIPC(new ArrowTable(vectors), "file");
}

/** The output format a file name asks for, or a clear error naming the supported ones. */
export function checkOutputPath(path: string): "csv" | "arrow" {
  const ext = extname(path).toLowerCase();
  if (ext === ".csv") return "csv";
  if (ext === ".arrow" || ext === ".feather" || ext === ".ipc") return "arrow";
  throw new BasinError("BASIN_PLAN", `cannot write "${path}": use a .csv or .arrow (Arrow IPC) file name`);
}

/**
 * Writes a result by file extension: .csv, or .arrow/.feather/.ipc. Writes to a
 * temporary name first so a failure never leaves half a file under the real name.
 *
 * @example
 * writeOutput(table, "result.csv");
 */
export function writeOutput(t: Table, path: string): void {
  const bytes = checkOutputPath(path) === "csv" ? toCsv(t) : toArrowIpc(t);
  const tmp = `${path}.partial-${process.pid}`;
  try {
    writeFileSync(tmp, bytes);
    renameSync(tmp, path);
  } catch (e) {
    throw new BasinError("BASIN_IO", `cannot write ${path}: ${(e as Error).message}`);
  }
}

