// The partitions of a file scan: one worker step each. Parquet: consecutive row
// groups merged up to `blocksize` bytes; NDJSON: byte ranges ending on newlines;
// Arrow IPC: one record batch each.
import { closeSync, openSync } from "node:fs";
import type { FileFormat } from "../common/plan.js";
import type { Field } from "../common/types.js";
import type { Step } from "../graph/tasks.js";
import { arrowLayout } from "./arrow_ipc.js";
import { jsonBlocks } from "./ndjson.js";
import { readParquetFooter, type ParquetFooter } from "./parquet_footer.js";
import { firstDataPageValues } from "./parquet_pages.js";

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
 * How many slices of row group `g` can each decode less than the whole of it: no more
 * than the pages of its coarsest-paged column (a column written as one page, as DuckDB
 * writes, is decoded whole by every slice: then 1).
 */
function sliceLimit(footer: ParquetFooter, g: number, columns: Field[]): number {
  const { rows, chunks } = footer.rowGroups[g];
  let most = 1;
  const fd = openSync(footer.path, "r");
  try {
    for (const c of columns) {
      const col = footer.columns.find((x) => x.name === c.name);
      const chunk = col && chunks[col.leaf];
      if (!chunk) return 1;
      const values = firstDataPageValues(fd, chunk.start, chunk.length);
      if (values === undefined || values <= 0) return 1;
      most = Math.max(most, values);
    }
  } finally {
    closeSync(fd);
  }
  return Math.floor(rows / most);
}

/**
 * The scan steps of one file, reading `columns`; `rowGroups` limits a Parquet scan.
 * With `sliced` (under a memory limit), a Parquet row group larger than `blocksize`
 * is read in slices of rows, each decoding only the pages it overlaps: a row group
 * is otherwise decoded whole, whatever the limit.
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
  sliced = false,
): Step[] {
  switch (format) {
    case "parquet": {
      const footer = readParquetFooter(path);
      const groups = rowGroups ?? footer.rowGroups.map((_, i) => i);
      return mergeRowGroups(groups, (g) => footer.rowGroups[g].bytes, blocksize).flatMap((run): Step[] => {
        const { bytes, rows } = footer.rowGroups[run[0]];
        const slices =
          sliced && run.length === 1 && bytes > blocksize
            ? Math.min(Math.ceil(bytes / blocksize), sliceLimit(footer, run[0], columns))
            : 1;
        if (slices <= 1) return [{ kind: "scanParquet", path, rowGroups: run, columns }];
        const per = Math.ceil(rows / slices);
        return Array.from({ length: Math.ceil(rows / per) }, (_, i) => ({
          kind: "scanParquet",
          path,
          rowGroups: run,
          columns,
          rows: [i * per, Math.min(rows, (i + 1) * per)],
        }));
      });
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
