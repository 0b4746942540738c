// A result written with --output is streamed from the workers to the file, never
// gathered whole: peak RSS while writing stays within the process's footprint (a
// trivial pipeline's peak) + the largest partition × workers + 256 MB, where printing
// the same result (which keeps all of it in the store) goes well past that bound.
import { closeSync, openSync, readSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { makeTempDir, removeDir, runBasin, writeText } from "../helpers/cli.js";

const dir = makeTempDir("basin-write-rss-");
afterAll(() => removeDir(dir));

const peak = (stderr: string) => {
  const m = /peak RSS ([\d.]+) (kB|MB|GB)/.exec(stderr);
  if (!m) throw new Error(`no peak RSS in: ${stderr}`);
  return Number(m[1]) * { kB: 1e3, MB: 1e6, GB: 1e9 }[m[2] as "kB" | "MB" | "GB"];
};

it("writing an 8e6-row result (280 MB of CSV, ~24 partitions) peaks within footprint + 2 partitions + 256 MB; printing it does not", async () => {
  const lines = ["k,s,v"];
  for (let i = 0; i < 200_000; i++) lines.push(`${i % 10},name-${i}-abcdefghij,${i * 0.5}`);
  writeFileSync(join(dir, "a.csv"), lines.join("\n") + "\n"); // 6.3 MB, 24 blocks of 256 KB
  // Each row meets 40 rows of the right side: 8e6 rows, ~350 MB in the store.
  writeText(
    dir,
    "big.ts",
    `import { readCsv, fromColumns } from "basin";\n` +
      `const right = fromColumns({ k: Array.from({ length: 400 }, (_, i) => i % 10), r: Array.from({ length: 400 }, (_, i) => i) });\n` +
      `export default readCsv("a.csv", { blocksize: "256KB" }).join(right, { on: "k" });\n`,
  );
  writeText(dir, "tiny.ts", `import { fromColumns } from "basin";\nexport default fromColumns({ a: [1, 2, 3] });\n`);
  const opts = { cwd: dir, timeoutMs: 120_000 };
  const base = await runBasin(["run", "tiny.ts", "--workers", "2", "--stats"], opts);
  const written = await runBasin(["run", "big.ts", "--workers", "2", "--stats", "--output", "out.csv"], opts);
  expect(written.code, written.stderr).toBe(0);
  expect(written.stderr).toContain("wrote 8000000 rows to out.csv");
  expect(statSync(join(dir, "out.csv")).size).toBeGreaterThan(250e6);
  const head = Buffer.alloc(64);
  const fd = openSync(join(dir, "out.csv"), "r");
  readSync(fd, head, 0, 64, 0);
  closeSync(fd);
  expect(head.toString().split("\n")[0]).toBe("k,s,v,r");
  const printed = await runBasin(["run", "big.ts", "--workers", "2", "--stats"], opts);
  expect(printed.code, printed.stderr).toBe(0);
  // A partition: 8e6 / 24 rows of 4 columns (~15 MB); 40 MB is generous.
  const bound = peak(base.stderr) + 2 * 40e6 + 256e6;
  console.log(
    `footprint ${(peak(base.stderr) / 1e6).toFixed(0)} MB, written ${(peak(written.stderr) / 1e6).toFixed(0)} MB, printed ${(peak(printed.stderr) / 1e6).toFixed(0)} MB, bound ${(bound / 1e6).toFixed(0)} MB`,
  );
  expect(peak(written.stderr)).toBeLessThan(bound);
  // The bound is one a gathered result breaks: the test can tell streaming from gathering.
  expect(peak(printed.stderr)).toBeGreaterThan(bound);
});
