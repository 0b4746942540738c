// apache-arrow and parquet-wasm, loaded on first use: importing them costs ~160 ms of
// start-up (and as much again in every worker thread), which a pipeline that reads
// and writes no Arrow or Parquet should not pay. Readers need them synchronously (a
// pipeline's readArrow() returns its frame at once), so they are required, not
// imported: every engine module reaches them through here, one copy per thread.
import { createRequire } from "node:module";
import type * as Arrow from "apache-arrow";
import type * as ArrowFile from "apache-arrow/ipc/metadata/file";
import type * as ParquetWasm from "parquet-wasm";

const require = createRequire(import.meta.url);
let arrow: typeof Arrow | undefined;
let arrowFile: typeof ArrowFile | undefined;
let parquet: typeof ParquetWasm | undefined;

/**
 * The apache-arrow module (loaded on the first call).
 *
 * @example
 * const { tableFromIPC } = arrowLib();
 */
export function arrowLib(): typeof Arrow {
  return (arrow ??= require("apache-arrow") as typeof Arrow);
}

/** apache-arrow's IPC file footer (Footer, FileBlock), loaded on the first call. */
export function arrowFileLib(): typeof ArrowFile {
  // The package first: required alone, the footer's module meets a cycle half-loaded.
  arrowLib();
  return (arrowFile ??= require("apache-arrow/ipc/metadata/file") as typeof ArrowFile);
}

/**
 * The parquet-wasm module (its wasm compiled on the first call).
 *
 * @example
 * const { readParquet } = parquetLib();
 */
export function parquetLib(): typeof ParquetWasm {
  return (parquet ??= require("parquet-wasm") as typeof ParquetWasm);
}
