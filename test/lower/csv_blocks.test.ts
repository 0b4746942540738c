// Block boundaries are remembered per file version, and a changed file is split again.
import { mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { col, readCsv } from "../../engine/api/index.js";
import { csvBlocks } from "../../engine/lower/csv_blocks.js";

const OPTS = { delimiter: ",", header: true, nullValues: [""] };

function rows(n: number, from = 0): string {
  return "a,b\n" + Array.from({ length: n }, (_, i) => `${from + i},"x\n${i}"`).join("\n") + "\n";
}

describe("csvBlocks", () => {
  it("returns the same blocks for an unchanged file without splitting it again", () => {
    const f = join(mkdtempSync(join(tmpdir(), "basin-blocks-")), "t.csv");
    writeFileSync(f, rows(200));
    const first = csvBlocks(f, 256, OPTS);
    expect(first.length).toBeGreaterThan(3);
    expect(csvBlocks(f, 256, OPTS)).toBe(first);
    expect(csvBlocks(f, 512, OPTS)).not.toBe(first);
  });

  it("splits a rewritten file again, so a pipeline sees the new rows", async () => {
    const f = join(mkdtempSync(join(tmpdir(), "basin-blocks-")), "t.csv");
    writeFileSync(f, rows(100));
    const sum = () =>
      readCsv(f, { blocksize: 300 }).select(col("a").sum().alias("s"), col("a").count().alias("n")).compute();
    expect((await sum()).toRows()).toEqual([{ s: 4950, n: 100 }]);
    writeFileSync(f, rows(150, 1000));
    utimesSync(f, new Date(), new Date(Date.now() + 5000));
    expect((await sum()).toRows()).toEqual([{ s: 150 * 1000 + 11175, n: 150 }]);
  });
});
