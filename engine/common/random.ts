/**
 * A small seeded PRNG (mulberry32) returning floats in [0, 1): the same sample
 * data on every machine, for the demo, the benchmark and the tests.
 *
 * @example
 * const rand = seededRandom(42); rand(); // 0.6011037519201636
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
