// The process's peak RSS stays within its own footprint (Node and a V8 heap per
// worker, measured on a trivial pipeline) plus the memory limit, plus as much again
// for the running tasks' working sets: scan blocks shrink to fit the limit, shuffles
// go out of core, the rest spills. The answer is the one an unlimited run gives.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { seededRandom } from "../../engine/common/random.js";
import { makeTempDir, removeDir, runBasin, writeText } from "../helpers/cli.js";

const dir = makeTempDir("basin-rss-");
afterAll(() => removeDir(dir));

const peak = (stderr: string) => {
  const m = /peak RSS ([\d.]+) (kB|MB|GB)/.exec(stderr);
  if (!m) throw new Error(`no peak RSS in: ${stderr}`);
  return Number(m[1]) * { kB: 1e3, MB: 1e6, GB: 1e9 }[m[2] as "kB" | "MB" | "GB"];
};

it("a group-by of 2e6 distinct keys (75 MB of CSV) under --memory-limit 40MB peaks within the process footprint + 2 × the limit, with the unlimited answer", async () => {
  const rnd = seededRandom(3);
  const lines = ["k,v,s"];
  for (let i = 0; i < 2_000_000; i++) lines.push(`${Math.floor(rnd() * 1e9)},${rnd()},name${i % 1000}`);
  writeFileSync(join(dir, "m.csv"), lines.join("\n") + "\n"); // ~75 MB
  writeText(
    dir,
    "gb.ts",
    `import { readCsv, col } from "basin";\nexport default readCsv("m.csv").groupBy("k").agg(col("v").sum().alias("s"), col("s").max().alias("m")).sort("s").head(5);\n`,
  );
  writeText(dir, "tiny.ts", `import { fromColumns } from "basin";\nexport default fromColumns({ a: [1, 2, 3] });\n`);
  const opts = { cwd: dir, timeoutMs: 120_000 };
  const base = await runBasin(["run", "tiny.ts", "--workers", "2", "--stats"], opts);
  const limited = await runBasin(["run", "gb.ts", "--workers", "2", "--memory-limit", "40MB", "--stats"], opts);
  const free = await runBasin(["run", "gb.ts", "--workers", "2"], opts);
  expect(limited.code, limited.stderr).toBe(0);
  expect(limited.stdout).toBe(free.stdout);
  const footprint = peak(base.stderr);
  console.log(
    `footprint ${(footprint / 1e6).toFixed(0)} MB, limited run ${(peak(limited.stderr) / 1e6).toFixed(0)} MB`,
  );
  expect(peak(limited.stderr)).toBeLessThan(footprint + 2 * 40e6);
});
