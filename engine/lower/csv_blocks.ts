// Block boundaries of CSV files, remembered per file version: finding row starts
// that respect quotes takes a pass over the file, and a file that has not changed
// does not need it twice.
import { statSync } from "node:fs";
import { native, type CsvBlock } from "../native/addon.js";
import type { CsvOptions } from "../graph/kernel_args.js";

const cache = new Map<string, CsvBlock[]>();
const MAX_ENTRIES = 256;

/**
 * Blocks of about `blocksize` bytes starting on row boundaries.
 *
 * @example
 * csvBlocks("trips.csv", 64 << 20, { delimiter: ",", header: true, nullValues: [""] })
 */
export function csvBlocks(path: string, blocksize: number, opts: CsvOptions): CsvBlock[] {
  const st = statSync(path, { throwIfNoEntry: false });
  // A missing file has no version: let the native split report it.
  if (!st) return native().csvSplit(path, blocksize, opts);
  const key = JSON.stringify([path, st.size, st.mtimeMs, st.ino, blocksize, opts.delimiter]);
  let blocks = cache.get(key);
  if (!blocks) {
    blocks = native().csvSplit(path, blocksize, opts);
    if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
    cache.set(key, blocks);
  }
  return blocks;
}

/** Forgets every file's remembered blocks (the benchmark times scans from cold, as its peers scan). */
export function clearCsvBlockCache(): void {
  cache.clear();
}
