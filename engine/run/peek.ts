// A stored result's first and last rows, taken into JS without the rest: what
// `basin run` prints of a result of any size (the middle never leaves the store).
import type { Schema } from "../common/types.js";
import { withResident } from "../memory/resident.js";
import { native } from "../native/addon.js";
import type { StoredParts } from "./stored.js";
import { Table, type Value } from "./table.js";
import { takeTable } from "./take.js";

/** Rows of a result by their index in it: the head and the tail, nothing between. */
export interface PeekedRows {
  schema: Schema;
  /** Rows of the whole result. */
  numRows: number;
  columnNames: string[];
  /** A column as a sparse array: only the peeked rows' indices hold values. */
  column(name: string): Value[];
}

/**
 * The first `head` and last `tail` rows of a stored result (all of it when it has no
 * more), read part by part; every part is released, unless `keep` (then the caller
 * releases them: freeing a 1e7-row result takes longer than peeking at it, so the CLI
 * prints first).
 *
 * @example
 * const rows = await peekParts(await computeParts(plan), 10, 10);
 * console.log(formatTable(rows));
 */
export async function peekParts({ refs }: StoredParts, head: number, tail: number, keep = false): Promise<PeekedRows> {
  const addon = native();
  try {
    const lengths = refs.map((h) => addon.tableRows(h));
    const numRows = lengths.reduce((a, b) => a + b, 0);
    // Row ranges [from, to) of the whole result to take: one range, or the head and the tail.
    const wanted: [number, number][] =
      numRows <= head + tail
        ? [[0, numRows]]
        : [
            [0, head],
            [numRows - tail, numRows],
          ];
    const pieces: { offset: number; table: Table }[] = [];
    let start = 0;
    for (let p = 0; p < refs.length; p++) {
      const end = start + lengths[p];
      for (const [from, to] of wanted) {
        const a = Math.max(from, start),
          b = Math.min(to, end);
        // An empty result still gives its schema, from the first part.
        if (a >= b && !(numRows === 0 && p === 0)) continue;
        const js = await withResident(refs[p], (h) => takeTable(addon.slice(h, a - start, Math.max(0, b - a))));
        pieces.push({ offset: a, table: new Table(js) });
      }
      start = end;
    }
    const { schema, columnNames } = pieces[0].table;
    return {
      schema,
      numRows,
      columnNames,
      column(name: string): Value[] {
        const out: Value[] = [];
        for (const { offset, table } of pieces) table.column(name).forEach((v, i) => (out[offset + i] = v));
        return out;
      },
    };
  } finally {
    if (!keep) for (const h of refs) addon.release(h);
  }
}
