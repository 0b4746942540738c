// A small seeded PRNG (mulberry32) and the draws TPC-H's generator needs. Every chunk
// of every table gets its own stream, seeded from the table and the chunk's index, so
// the output does not depend on how many workers share the chunks.

/** murmur3's 32-bit finaliser: spreads a seed's bits. */
function mix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The seed of chunk `chunk` of stream `stream` (a table, or the text pool). */
export function chunkSeed(stream: number, chunk: number): number {
  return mix32(mix32(stream * 0x9e3779b1 + 0x7f4a7c15) ^ Math.imul(chunk + 1, 0x27d4eb2f));
}

/** A seeded stream of uniform draws. */
export class Random {
  private s: number;

  constructor(seed: number) {
    this.s = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) | 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Uniform integer in [lo, hi] (both inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** One element of `list`, uniformly. */
  pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.next() * list.length)];
  }
}
