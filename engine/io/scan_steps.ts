// The partitions of a file scan: one worker step each. Parquet: consecutive row
// groups merged up to `blocksize` bytes; NDJSON: byte ranges ending on newlines;
// Arrow IPC: one record batch each.
import type { FileFormat } from "../common/plan.js";
import type { Field } from "../common/types.js";
import type { Step } from "../graph/tasks.js";
import { arrowLayout } from "./arrow_ipc.js";
import { jsonBlocks } from "./ndjson.js";
import { readParquetFooter } from "./parquet_footer.js";

/** Row groups in runs whose (uncompressed) size stays about `blocksize` bytes. */
function mergeRowGroups(groups: number[], bytes: (g: number) => number, blocksize: number): number[][] {
  const out: number[][] = [];
  let run: number[] = [],
    size = 0;
  for (const g of groups) {
    if (run.length > 0 && size + bytes(g) > blocksize) {
      out.push(run);
      run = [];
      size = 0;
    }
    run.push(g);
    size += bytes(g);
  }
  if (run.length > 0) out.push(run);
  return out;
}

/**
 * The scan steps of one file, reading `columns`; `rowGroups` limits a Parquet scan.
 *
 * @example
 * fileScanSteps("parquet", "a.parquet", schema, 64 << 20, [0, 3])
 */
export function fileScanSteps(
  format: FileFormat,
  path: string,
  columns: Field[],
  blocksize: number,
  rowGroups?: number[],
): Step[] {
  switch (format) {
    case "parquet": {
      const footer = readParquetFooter(path);
      const groups = rowGroups ?? footer.rowGroups.map((_, i) => i);
      return mergeRowGroups(groups, (g) => footer.rowGroups[g].bytes, blocksize).map((run) => ({
        kind: "scanParquet",
        path,
        rowGroups: run,
        columns,
      }));
    }
    case "json":
      return jsonBlocks(path, blocksize).map((b) => ({ kind: "scanJson", path, start: b.start, end: b.end, columns }));
    case "arrow": {
      const layout = arrowLayout(path);
      return layout.batches.map((b, i) => ({
        kind: "scanArrow",
        path,
        ranges: [...layout.batchDictionaries[i]!, b],
        columns,
      }));
    }
  }
}
