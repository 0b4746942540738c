// `basin run --stats` counts what worker processes did: with --worker-processes all the
// tables live and spill in the workers' own stores, which the engine's statistics alone
// do not see. The numbers are read before the workers close.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { makeTempDir, removeDir, runBasin, writeText } from "../helpers/cli.js";

const dir = makeTempDir("basin-stats-");
afterAll(() => removeDir(dir));

const spilled = (stderr: string): number => {
  const m = /spilled\s+(\d+) tables/.exec(stderr);
  if (!m) throw new Error(`no spill line in: ${stderr}`);
  return Number(m[1]);
};

it("--stats with worker processes counts the tables they spilled under --memory-limit", async () => {
  const rows = 300_000;
  const lines = ["id,city,fare"];
  for (let i = 0; i < rows; i++) lines.push(`${(i * 7919) % rows},c${i % 97},${((i * 31) % 1000) / 10}`);
  writeFileSync(join(dir, "big.csv"), lines.join("\n") + "\n"); // ~5 MB
  writeText(
    dir,
    "sorted.ts",
    `import { readCsv } from "basin";\nexport default readCsv("big.csv", { blocksize: "1MB" }).sort("id");\n`,
  );
  const opts = { cwd: dir, timeoutMs: 120_000 };
  const args = ["run", "sorted.ts", "--workers", "2", "--memory-limit", "2MB", "--stats"];
  const procs = await runBasin([...args, "--worker-processes", "all"], opts);
  const threads = await runBasin(args, opts);
  expect(procs.code, procs.stderr).toBe(0);
  expect(procs.stdout).toBe(threads.stdout);
  expect(spilled(threads.stderr), "worker threads spill in the engine's store").toBeGreaterThan(0);
  expect(spilled(procs.stderr), "worker processes spill in their own stores").toBeGreaterThan(0);
});
