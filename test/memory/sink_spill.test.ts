// A result written to one file arrives in parts, each encoded by the worker that made
// it, and lands in the file in part order (native/src/io/csv_write.h PartSink). Parts
// that finish before their turn wait in the store: they count against the memory
// limit and spill to disk under it, so a write whose later parts all finish first
// stays within the limit (the process's peak RSS, not only the store's count), and the
// file still holds every part in order.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { tableFromIPC } from "apache-arrow";
import { afterAll, expect, it } from "vitest";
import { LocalCluster } from "../../engine/api/index.js";
import type { Field } from "../../engine/common/types.js";
import type { Step } from "../../engine/graph/tasks.js";
import { writeArrowParts, writeCsvParts, type WriteSummary } from "../../engine/io/write.js";
import { writtenRows } from "../../engine/io/write_part.js";
import { native, type MemoryStats } from "../../engine/native/addon.js";
import { makeTempDir, removeDir } from "../helpers/cli.js";
import type { WorkerProcesses } from "../../engine/workers/pool.js";

const dir = makeTempDir("basin-sink-spill-");
afterAll(() => removeDir(dir));

const LIMIT = 48e6;
const ROWS = 40_000; // ~4.4 MB of CSV a part
const strings = Array.from({ length: ROWS }, (_, i) => `row ${i} ✓ ${"x".repeat(90 + (i % 17))}`);
const schema: Field[] = [
  { name: "part", type: "int64" },
  { name: "s", type: "string" },
];

/**
 * Writes `parts` parts on one worker under LIMIT, the last first: part p's table (its
 * first field p) is made just before its write step runs, so one input at a time is in
 * memory. Resolves with what the writer did and the store's state before part 0.
 */
async function writeLastFirst(
  parts: number,
  write: (run: (step: (part: number) => Step) => Promise<number>) => Promise<WriteSummary>,
  workerProcesses: WorkerProcesses = "none",
): Promise<{ summary: WriteSummary; waiting: MemoryStats }> {
  const cluster = new LocalCluster({ workers: 1, memoryLimit: LIMIT, localDirectory: dir, workerProcesses });
  const addon = native();
  let waiting: MemoryStats | undefined;
  try {
    const summary = await write(async (step) => {
      let rows = 0;
      for (let part = parts - 1; part >= 0; part--) {
        const input = addon.tableFromJs({
          rows: ROWS,
          names: ["part", "s"],
          columns: [
            { type: "int64", values: new BigInt64Array(ROWS).fill(BigInt(part)), validity: null },
            { type: "string", values: strings, validity: null },
          ],
        });
        const key = `write-${part}`;
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
    return { summary, waiting: waiting! };
  } finally {
    await cluster.close();
  }
}

it("CSV, 64 parts (280 MB) written last first under a 48 MB memory limit: the waiting parts spill, peak RSS stays within limit + 128 MB, the file is whole and in order", async () => {
  const parts = 64;
  const path = join(dir, "out.csv");
  const rssBefore = process.memoryUsage().rss;
  const { summary, waiting } = await writeLastFirst(parts, (run) => writeCsvParts(schema, path, undefined, run));
  expect(summary.rows).toBe(parts * ROWS);
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
  expect(lines.length).toBe(1 + parts * ROWS + 1);
  for (let p = 0; p < parts; p++) {
    expect(lines[1 + p * ROWS]).toBe(`${p},${strings[0]}`);
    expect(lines[(p + 1) * ROWS]).toBe(`${p},${strings[ROWS - 1]}`);
  }
  expect(native().memoryStats().diskTables).toBe(0);
});

// With worker processes the write tasks run on the engine's thread (the sink is its), as a worker would.
it.each(["none", "all"] as const)(
  "Arrow IPC, 16 parts written last first under the limit: the record batches that wait (views of their tables' buffers until then) spill, apache-arrow reads every row in order (worker processes: %s)",
  async (processes) => {
    const parts = 16;
    const path = join(dir, `out-${processes}.arrow`);
    const { summary, waiting } = await writeLastFirst(
      parts,
      (run) => writeArrowParts(schema, path, undefined, run),
      processes,
    );
    expect(summary.rows).toBe(parts * ROWS);
    expect(waiting.diskBytes).toBeGreaterThan(0);
    expect(waiting.hostBytes).toBeLessThan(LIMIT * 1.1);
    const t = tableFromIPC(readFileSync(path));
    expect(t.numRows).toBe(parts * ROWS);
    const part = t.getChild("part")!,
      s = t.getChild("s")!;
    for (let r = 0; r < t.numRows; r += 997) {
      expect(Number(part.get(r))).toBe(Math.floor(r / ROWS));
      expect(s.get(r)).toBe(strings[r % ROWS]);
    }
    expect(native().memoryStats().diskTables).toBe(0);
  },
);
