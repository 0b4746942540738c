// One task end to end (generate, then encode), the same in a worker or inline.
import { chunkCsv, chunkParquet, csvHeader } from "./encode.js";
import { generate, scaleOf, type Task } from "./tables.js";

/** A table's share of a task's output. */
export interface Part {
  table: string;
  rows: number;
  parquet: Uint8Array;
  /** CSV lines, when asked for; `header` is the table's header line. */
  csv?: Uint8Array;
  header?: string;
}

/** Generates and encodes one task. */
export function runTask(t: Task, sf: number, pool: Uint8Array, csv: boolean): Part[] {
  const enc = new TextEncoder();
  return generate(t, scaleOf(sf), pool).map((c) => ({
    table: c.table,
    rows: c.rows,
    parquet: chunkParquet(c),
    ...(csv ? { csv: enc.encode(chunkCsv(c)), header: csvHeader(c) } : {}),
  }));
}
