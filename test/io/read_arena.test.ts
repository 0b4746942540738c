// Scans read column chunks into one buffer per thread (io/read_at.ts ReadArena): each
// read returns the file's bytes, reads between two resets never overlap (a scan's
// chunks stay intact while it decodes, also when the buffer grows mid-scan), and a
// reset reuses the buffer instead of allocating.
import { closeSync, openSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { ReadArena } from "../../engine/io/read_at.js";
import { makeTempDir, removeDir } from "../helpers/cli.js";

const dir = makeTempDir();
afterAll(() => removeDir(dir));

it("hands out the file's bytes, never overwriting a read before the next reset", () => {
  const bytes = Uint8Array.from({ length: 3 << 20 }, (_, i) => (i * 7919) % 251);
  const path = join(dir, "f.bin");
  writeFileSync(path, bytes);
  const fd = openSync(path, "r");
  try {
    const arena = new ReadArena();
    const ranges: [number, number][] = [
      [5, 700_000],
      [1 << 20, 900_000],
      [100, 1],
      [(3 << 20) - 10, 10],
      [0, 2 << 20],
    ];
    const reads = ranges.map(([pos, n]) => arena.read(fd, pos, n));
    // Every read holds its own bytes after all the others (the buffer grew twice).
    ranges.forEach(([pos, n], i) => expect(reads[i]).toEqual(bytes.subarray(pos, pos + n)));
    // Past the end of the file: the bytes there are.
    expect(arena.read(fd, (3 << 20) - 4, 100)).toEqual(bytes.subarray((3 << 20) - 4));
    arena.reset();
    const again = arena.read(fd, 42, 1000);
    expect(again).toEqual(bytes.subarray(42, 1042));
    expect(again.buffer).toBe(reads[4].buffer); // the buffer it last grew into, reused
  } finally {
    closeSync(fd);
  }
});
