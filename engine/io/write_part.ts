// One table in the store written as a file of its own, synchronously, on the calling
// thread: what a worker does for each part of a folder output (engine/run/write_frame.ts).
// CSV, Arrow IPC and Parquet are encoded natively; Parquet with zstd where the build
// lacks it goes through apache-arrow and parquet-wasm.
import { writeFileSync } from "node:fs";
import type { WriterProperties } from "parquet-wasm";
import { BasinError } from "../common/errors.js";
import type { PartParquetOptions } from "../graph/tasks.js";
import { native, type Handle } from "../native/addon.js";
import { jsToBatch } from "./arrow_convert.js";
import { arrowLib, parquetLib } from "./arrow_lib.js";

/** The codecs Basin writes Parquet with, by parquet-wasm's Compression names. */
export const PARQUET_CODECS = { snappy: "SNAPPY", zstd: "ZSTD", uncompressed: "UNCOMPRESSED" } as const;

/** parquet-wasm's writer properties for Basin's options (snappy, 1,048,576-row groups by default). */
export function parquetProps(o: PartParquetOptions): WriterProperties {
  const { Compression, WriterPropertiesBuilder } = parquetLib();
  return new WriterPropertiesBuilder()
    .setCompression(Compression[PARQUET_CODECS[o.compression ?? "snappy"]])
    .setMaxRowGroupSize(o.rowGroupSize ?? 1 << 20)
    .build();
}

/**
 * Writes table `h` to a new file at `path` (it must not exist) as CSV with a header,
 * Arrow IPC (file format) or Parquet; returns the bytes written.
 *
 * @example
 * writePartFile(h, "out/.tmp/part-00003.parquet", "parquet", { compression: "zstd" });
 */
export function writePartFile(
  h: Handle,
  path: string,
  format: "csv" | "parquet" | "arrow",
  parquet: PartParquetOptions = {},
): number {
  const addon = native();
  if (format === "csv") return addon.csvWriteFile(h, path, true);
  if (format === "arrow") return addon.arrowWriteFile(h, path, ARROW_BATCH_ROWS);
  if (format === "parquet" && nativeParquet(parquet))
    return addon.parquetWriteFile(h, path, parquet.compression ?? "snappy", parquet.rowGroupSize ?? 1 << 20);
  const batch = jsToBatch(addon.tableToJs(h));
  const bytes = parquetLib().writeParquet(
    parquetLib().Table.fromIPCStream(arrowLib().tableToIPC(new (arrowLib().Table)([batch]), "stream")),
    parquetProps(parquet),
  );
  try {
    writeFileSync(path, bytes, { flag: "wx" });
  } catch (e) {
    throw new BasinError("BASIN_IO", `cannot write ${path}: ${(e as Error).message}`);
  }
  return bytes.length;
}

/** Rows per Arrow IPC record batch the workers write (a part file's, or a part's in one file). */
export const ARROW_BATCH_ROWS = 1 << 16;

/** What a writer's step outputs: a one-row table holding the rows it wrote. */
export function rowsWritten(rows: number): Handle {
  return native().tableFromJs({
    rows: 1,
    names: ["rows"],
    columns: [{ type: "int64", values: BigInt64Array.of(BigInt(rows)), validity: null }],
  });
}

/**
 * The rows the writer's steps of a run wrote, from their outputs (released).
 *
 * @example
 * const rows = writtenRows(parts.refs);
 */
export function writtenRows(refs: Handle[]): number {
  const addon = native();
  let rows = 0;
  for (const h of refs) {
    const t = addon.tableToJs(h);
    rows += Number((t.columns[0].values as BigInt64Array)[0]);
    addon.release(h);
  }
  return rows;
}

/** Whether the native Parquet writer takes these options (zstd only where the build has it). */
export function nativeParquet(o: PartParquetOptions): boolean {
  return o.compression !== "zstd" || native().parquetZstd();
}
