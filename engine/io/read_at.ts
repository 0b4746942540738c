import { readSync } from "node:fs";

/**
 * Up to `length` bytes of an open file from `pos` (fewer at its end), reading until
 * done; into `into` (`length` bytes long) when given.
 *
 * @example
 * const tail = readAt(fd, size - 8, 8);
 */
export function readAt(fd: number, pos: number, length: number, into = new Uint8Array(length)): Uint8Array {
  let got = 0;
  while (got < length) {
    const n = readSync(fd, into, got, length - got, pos + got);
    if (n === 0) break;
    got += n;
  }
  return into.subarray(0, got);
}

/**
 * One buffer a thread reads file ranges into, again for each read that `reset()`
 * starts: a new ArrayBuffer per column chunk counts as V8 external memory, and each
 * ~64 MB of it started a full garbage collection (SF 10 Q5 from Parquet: a dozen a
 * second in each worker, ~12% of its CPU time).
 *
 * @example
 * arena.reset();
 * const chunk = arena.read(fd, start, length); // valid until the next reset()
 */
export class ReadArena {
  private buffer = new Uint8Array(0);
  private used = 0;

  /** Starts over: what was read before may be overwritten. */
  reset(): void {
    this.used = 0;
  }

  /** `length` bytes of the file from `pos`, valid until the next `reset()`. */
  read(fd: number, pos: number, length: number): Uint8Array {
    if (this.used + length > this.buffer.length) {
      // What was handed out keeps the old buffer alive; the next read starts in this one.
      this.buffer = new Uint8Array(Math.max(2 * this.buffer.length, this.used + length, 1 << 20));
      this.used = 0;
    }
    const into = this.buffer.subarray(this.used, this.used + length);
    this.used += length;
    return readAt(fd, pos, length, into);
  }
}
