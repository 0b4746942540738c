// Decodes row groups of a Parquet file into the native store, in a worker: only
// the needed column chunks are read from disk (cut into a small Parquet file),
// decoded by parquet-wasm into Arrow, and copied column by column into the store.
import { BasinError } from "../common/errors.js";
import type { Field } from "../common/types.js";
import { native, type Handle } from "../native/addon.js";
import { batchToJs } from "./arrow_convert.js";
import { arrowLib, parquetLib } from "./arrow_lib.js";
import { emptyTable, tablesToHandle } from "./tables.js";
import { cutParquet, readParquetFooter } from "./parquet_footer.js";

/**
 * Row groups `rowGroups` of a Parquet file as one table with `columns`.
 *
 * @example
 * const h = scanParquet("trips.parquet", [0, 1], [{ name: "fare", type: "float64" }]);
 */
export function scanParquet(path: string, rowGroups: number[], columns: Field[]): Handle {
  const footer = readParquetFooter(path);
  const index = columns.map((c) => {
    const i = footer.columns.findIndex((x) => x.name === c.name);
    if (i < 0)
      throw new BasinError(
        "BASIN_IO",
        `${path} has no column "${c.name}" (it changed since the pipeline was planned?); the columns are: ${footer.columns.map((x) => x.name).join(", ")}`,
      );
    return i;
  });
  for (const g of rowGroups)
    if (g >= footer.rowGroups.length)
      throw new BasinError(
        "BASIN_IO",
        `${path} has ${footer.rowGroups.length} row groups, not ${g + 1}; did the file change while the pipeline ran?`,
      );
  if (rowGroups.length === 0 || columns.length === 0) return native().tableFromJs(emptyTable(columns));
  const rows = rowGroups.reduce((n, g) => n + footer.rowGroups[g].rows, 0);
  let ipc: Uint8Array;
  try {
    ipc = parquetLib()
      .readParquet(cutParquet(footer, rowGroups, index), { batchSize: Math.max(1, rows) })
      .intoIPCStream();
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new BasinError(
      "BASIN_IO",
      `${path}: row groups ${rowGroups.join(", ")} do not decode (${why}); the file may be corrupt or use an encoding Basin cannot read`,
    );
  }
  const table = arrowLib().tableFromIPC(ipc);
  try {
    return tablesToHandle(
      table.batches.map((b) => batchToJs(b, columns)),
      columns,
    );
  } catch (e) {
    throw BasinError.inFile(e, path);
  }
}
