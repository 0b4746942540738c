// How a CSV scan is cut: every worker parses, in whole rounds, never past the blocksize.
import { describe, expect, it } from "vitest";
import { csvBlockBytes } from "../../engine/lower/lower.js";

const MiB = 1 << 20;
const blocks = (total: number, size: number) => Math.ceil(total / size);

describe("csvBlockBytes", () => {
  it("gives every worker a block of a file smaller than a block per worker", () => {
    // G1_1e7 (509 MB) on 16 workers: 16 blocks of ~32 MB, not 8 of 64 MiB.
    expect(blocks(509e6, csvBlockBytes(509e6, 64 * MiB, 16, 0))).toBe(16);
    expect(blocks(50e6, csvBlockBytes(50e6, 64 * MiB, 2, 0))).toBe(2);
  });

  it("cuts a large file into whole rounds of blocks, each at most the blocksize", () => {
    // G1_1e8 (5.1 GB): 76 blocks of 64 MiB would leave 12 of 16 workers a fifth round; 80 fill it.
    const size = csvBlockBytes(5.1e9, 64 * MiB, 16, 0);
    expect(size).toBeLessThanOrEqual(64 * MiB);
    expect(blocks(5.1e9, size)).toBe(80);
  });

  it("keeps persist()'s partition count as the least, and never cuts below 1 MiB", () => {
    expect(blocks(509e6, csvBlockBytes(509e6, 64 * MiB, 2, 64))).toBe(64);
    expect(csvBlockBytes(10_000, 64 * MiB, 16, 0)).toBe(MiB);
    expect(csvBlockBytes(0, 64 * MiB, 16, 0)).toBe(64 * MiB);
  });

  it("gives one worker as many blocks as the blocksize makes, evened out", () => {
    expect(blocks(509e6, csvBlockBytes(509e6, 64 * MiB, 1, 0))).toBe(blocks(509e6, 64 * MiB));
    expect(csvBlockBytes(509e6, 64 * MiB, 1, 0)).toBeLessThanOrEqual(64 * MiB);
  });
});
