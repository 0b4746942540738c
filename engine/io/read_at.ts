import { readSync } from "node:fs";

/**
 * Up to `length` bytes of an open file from `pos` (fewer at its end), reading until done.
 *
 * @example
 * const tail = readAt(fd, size - 8, 8);
 */
export function readAt(fd: number, pos: number, length: number): Uint8Array {
  const b = new Uint8Array(length);
  let got = 0;
  while (got < length) {
    const n = readSync(fd, b, got, length - got, pos + got);
    if (n === 0) break;
    got += n;
  }
  return b.subarray(0, got);
}
