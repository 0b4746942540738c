// A stored table cut into row ranges: persist()'s partitions, by the `split` step on
// a worker or, for Dask's single result, on the main thread.
import { native, type Handle } from "./addon.js";

/**
 * `parts` row ranges of `table`, as even as can be, in order (copies of buffer
 * ranges); `table` itself is kept. On failure the ranges made so far are released.
 *
 * @example
 * const [a, b] = splitRows(handle, 2);
 */
export function splitRows(table: Handle, parts: number): Handle[] {
  const addon = native();
  const rows = addon.tableRows(table);
  const bound = (p: number) => Math.floor((rows * p) / parts);
  const out: Handle[] = [];
  try {
    for (let p = 0; p < parts; p++) out.push(addon.slice(table, bound(p), bound(p + 1) - bound(p)));
  } catch (e) {
    for (const h of out) addon.release(h);
    throw e;
  }
  return out;
}
