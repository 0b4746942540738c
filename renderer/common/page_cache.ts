// Rows of a result as the table scrolls: fixed-size blocks fetched by viewport with
// `page()`, a bounded number kept (least recently seen dropped first), so a
// result of millions of rows is never fetched whole.
import type { WireValue } from "../../engine/common/rpc.js";

export interface BlockRequest {
  offset: number;
  limit: number;
}

export interface PageCacheOptions {
  /** Rows per block (one page() call). Default 256. */
  blockRows?: number;
  /** Blocks kept in memory. Default 64. */
  maxBlocks?: number;
  /** Extra blocks fetched beyond each end of the viewport. Default 1. */
  overscanBlocks?: number;
}

/**
 * The blocks [first block, last block] that cover rows [first, last] plus overscan, clipped to the result.
 *
 * @example
 * blocksFor(250, 300, 1000, 100, 0) // [{ offset: 200, limit: 100 }, { offset: 300, limit: 100 }]
 */
export function blocksFor(
  first: number,
  last: number,
  rows: number,
  blockRows: number,
  overscan: number,
): BlockRequest[] {
  if (rows <= 0 || last < first) return [];
  const lo = Math.max(0, Math.floor(Math.max(0, first) / blockRows) - overscan);
  const hi = Math.min(Math.ceil(rows / blockRows) - 1, Math.floor(Math.min(last, rows - 1) / blockRows) + overscan);
  const out: BlockRequest[] = [];
  for (let b = lo; b <= hi; b++) out.push({ offset: b * blockRows, limit: Math.min(blockRows, rows - b * blockRows) });
  return out;
}

/**
 * @example
 * const cache = new PageCache(1_000_000);
 * for (const want of cache.missing(0, 40)) {
 *   cache.loading(want.offset);
 *   const p = await client.page(id, want.offset, want.limit);
 *   cache.put(p.offset, p.values);
 * }
 * cache.cell(3, 0);
 */
export class PageCache {
  readonly blockRows: number;
  private readonly maxBlocks: number;
  private readonly overscan: number;
  /** Block offset → column-major values; Map order is recency (oldest first). */
  private readonly blocks = new Map<number, WireValue[][]>();
  private readonly inFlight = new Set<number>();

  constructor(
    readonly rows: number,
    options: PageCacheOptions = {},
  ) {
    this.blockRows = options.blockRows ?? 256;
    this.maxBlocks = Math.max(1, options.maxBlocks ?? 64);
    this.overscan = options.overscanBlocks ?? 1;
  }

  /** Blocks to fetch so rows [first, last] (and the overscan) are available; marks the visible ones as recently used. */
  missing(first: number, last: number): BlockRequest[] {
    const want = blocksFor(first, last, this.rows, this.blockRows, this.overscan);
    for (const b of want) {
      const v = this.blocks.get(b.offset);
      if (v) {
        this.blocks.delete(b.offset);
        this.blocks.set(b.offset, v);
      }
    }
    return want.filter((b) => !this.blocks.has(b.offset) && !this.inFlight.has(b.offset));
  }

  loading(offset: number): void {
    this.inFlight.add(offset);
  }

  /** A block arrived; evicts the least recently used blocks beyond the budget. */
  put(offset: number, values: WireValue[][]): void {
    this.inFlight.delete(offset);
    this.blocks.delete(offset);
    this.blocks.set(offset, values);
    while (this.blocks.size > this.maxBlocks) this.blocks.delete(this.blocks.keys().next().value as number);
  }

  /** A fetch failed: the block may be asked for again. */
  failed(offset: number): void {
    this.inFlight.delete(offset);
  }

  /** The value at (row, column index), or undefined while its block is not loaded. */
  cell(row: number, column: number): WireValue | undefined {
    const offset = row - (row % this.blockRows);
    const block = this.blocks.get(offset);
    return block ? block[column]?.[row - offset] : undefined;
  }

  has(row: number): boolean {
    return this.blocks.has(row - (row % this.blockRows));
  }

  get cachedBlocks(): number {
    return this.blocks.size;
  }
}
