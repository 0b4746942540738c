// str.lower's case mapping in TypeScript: the same fixed table as the engine's
// (native/src/ops/case_map.h: ASCII, Latin-1, Latin Extended-A, Greek, Cyrillic; no
// locale), so text a filter compares with a lowercased column is lowercased alike in
// the engine's views and in the workbench's "Copy as code". JS's toLowerCase maps
// letters the engine leaves ("Ǆ"), and those matched nothing.

/** Latin Extended-A pairs: [lo, hi] ranges where the upper-case letter has parity `upper`. */
const PAIRS: readonly (readonly [lo: number, hi: number, upper: number])[] = [
  [0x100, 0x12f, 0],
  [0x132, 0x137, 0],
  [0x139, 0x148, 1],
  [0x14a, 0x177, 0],
  [0x179, 0x17e, 1],
];

function lowerCodePoint(c: number): number {
  if (c < 0x80) return c >= 0x41 && c <= 0x5a ? c + 32 : c;
  if (c >= 0xc0 && c <= 0xde && c !== 0xd7) return c + 0x20;
  for (const [lo, hi, upper] of PAIRS) if (c >= lo && c <= hi) return c % 2 === upper ? c + 1 : c;
  if (c === 0x130) return 0x69;
  if (c === 0x178) return 0xff;
  if (c >= 0x391 && c <= 0x3a9 && c !== 0x3a2) return c + 0x20;
  if (c >= 0x410 && c <= 0x42f) return c + 0x20;
  if (c >= 0x400 && c <= 0x40f) return c + 0x50;
  if (c === 0x1e9e) return 0xdf;
  return c;
}

/**
 * Text lowercased as the engine's `str.lower` lowercases it.
 *
 * @example
 * engineLower("ÄǄ İ"); // "äǄ i" (Ǆ is outside the engine's table; JS would give "äǆ i̇")
 */
export function engineLower(text: string): string {
  let out = "";
  for (const ch of text) out += String.fromCodePoint(lowerCodePoint(ch.codePointAt(0)!));
  return out;
}
