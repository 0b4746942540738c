// A result written to one file arrives in parts, each formatted by the worker that made
// it, and lands in the file in part order (native/src/io/csv_write.h PartSink). Parts
// that finish before their turn wait in the store: they count against the memory
// limit and spill to disk under it, so a write whose later parts all finish first
// stays within the limit (the process's peak RSS, not only the store's count), and the
// file still holds every part in order.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { LocalCluster } from "../../engine/api/index.js";
import type { Field } from "../../engine/common/types.js";
import { writeCsvParts } from "../../engine/io/write.js";
import { writtenRows } from "../../engine/io/write_part.js";
import { native } from "../../engine/native/addon.js";
import { makeTempDir, removeDir } from "../helpers/cli.js";

const dir = makeTempDir("basin-sink-spill-");
afterAll(() => removeDir(dir));

const LIMIT = 48e6;
const PARTS = 64;
const ROWS = 40_000; // ~4.4 MB of CSV a part: 280 MB in all, ~6x the limit

it("64 parts written last first under a 48 MB memory limit: the waiting parts spill, peak RSS stays within limit + 128 MB, the file is whole and in order", async () => {
  const cluster = new LocalCluster({ workers: 1, memoryLimit: LIMIT, localDirectory: dir });
  const addon = native();
  // Part p's table, made just before its write (one at a time in memory): its first field is p.
  const strings = Array.from({ length: ROWS }, (_, i) => `row ${i} ✓ ${"x".repeat(90 + (i % 17))}`);
  const schema: Field[] = [
    { name: "part", type: "int64" },
    { name: "s", type: "string" },
  ];
  const table = (p: number) =>
    addon.tableFromJs({
      rows: ROWS,
      names: ["part", "s"],
      columns: [
        { type: "int64", values: new BigInt64Array(ROWS).fill(BigInt(p)), validity: null },
        { type: "string", values: strings, validity: null },
      ],
    });
  const path = join(dir, "out.csv");
  const rssBefore = process.memoryUsage().rss;
  let waiting = { hostBytes: 0, diskBytes: 0 };
  try {
    const summary = await writeCsvParts(schema, path, undefined, async (step) => {
      let rows = 0;
      // Every part but the first is written, and waits, before part 0.
      for (let part = PARTS - 1; part >= 0; part--) {
        const key = `write-${part}`;
        const input = table(part);
        const r = await cluster.runGraph(
          {
            tasks: [{ key, group: "write", deps: [], steps: [{ kind: "stored", handle: input }, step(part)] }],
            output: key,
          },
          "a write",
        );
        rows += writtenRows(r.refs);
        addon.release(input);
        if (part === 1) waiting = addon.memoryStats();
      }
      return rows;
    });
    expect(summary.rows).toBe(PARTS * ROWS);
  } finally {
    await cluster.close();
  }
  // While part 0 was still to come, 63 parts (~275 MB) waited: most of them on disk.
  expect(waiting.diskBytes).toBeGreaterThan(0);
  expect(waiting.hostBytes).toBeLessThan(LIMIT * 1.1);
  const peak = process.resourceUsage().maxRSS * 1024;
  console.log(
    `RSS before ${(rssBefore / 1e6).toFixed(0)} MB, peak ${(peak / 1e6).toFixed(0)} MB, waiting parts on disk ${(waiting.diskBytes / 1e6).toFixed(0)} MB`,
  );
  expect(peak).toBeLessThan(rssBefore + LIMIT + 128e6);
  // Every part, whole and in order (read after the peak was taken: the text is larger than the bound).
  const lines = readFileSync(path, "utf8").split("\n");
  expect(lines[0]).toBe("part,s");
  expect(lines.length).toBe(1 + PARTS * ROWS + 1);
  for (let p = 0; p < PARTS; p++) {
    expect(lines[1 + p * ROWS]).toBe(`${p},${strings[0]}`);
    expect(lines[(p + 1) * ROWS]).toBe(`${p},${strings[ROWS - 1]}`);
  }
  expect(addon.memoryStats().diskTables).toBe(0);
});
