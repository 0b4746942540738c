// A write that fails midway leaves the old file at the path untouched and, after the
// next run, no temp file: a real "file too large" (a file-size limit, `ulimit -f`, with
// SIGXFSZ ignored so the write fails with EFBIG as a full disk fails with ENOSPC) and a
// real SIGKILL of `basin run --output` while it writes.
import { execFile } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { BASIN_BIN, exited, makeTempDir, removeDir, runBasin, spawnBasin, writeText } from "../helpers/cli.js";

let dir: string;
const OLD = "old,answer\n1,2\n";
const temps = () => readdirSync(dir).filter((n) => n.includes(".partial-"));

beforeAll(() => {
  dir = makeTempDir("basin-write-fail-");
  // ~8 MB of CSV in, about as much out: beyond a 1 MB file-size limit.
  const lines = ["k,v,s"];
  for (let i = 0; i < 200_000; i++) lines.push(`${i},${i * 0.25},name-${i % 977}`);
  writeFileSync(join(dir, "in.csv"), lines.join("\n") + "\n");
  writeText(
    dir,
    "copy.ts",
    `import { readCsv, col } from "basin";\nexport default readCsv("in.csv", { blocksize: "1MB" }).withColumns({ w: col("v").mul(3) });\n`,
  );
});
afterAll(() => removeDir(dir));

it("the file system refuses the write midway (file too large): BASIN_IO naming the file, the old file kept, no temp file", async () => {
  for (const [output, what] of [
    ["out.csv", "CSV by the workers"],
    ["out.parquet", "Parquet"],
  ] as const) {
    writeFileSync(join(dir, output), OLD);
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) =>
      execFile(
        "bash",
        [
          "-c",
          `ulimit -f 1024; trap '' XFSZ; exec "${process.execPath}" "${BASIN_BIN}" run copy.ts --output ${output}`,
        ],
        { cwd: dir, timeout: 60_000, encoding: "utf8" },
        (err, _out, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stderr }),
      ),
    );
    expect(r.code, `${what}: ${r.stderr}`).not.toBe(0);
    expect(r.stderr, what).toContain("error [BASIN_IO]");
    expect(r.stderr, what).toMatch(/too large/i);
    expect(r.stderr, what).toContain(output);
    expect(readFileSync(join(dir, output), "utf8"), what).toBe(OLD);
    expect(temps(), what).toEqual([]);
  }
});

it("SIGKILL while writing: the old file kept; the next run removes the temp file and writes the whole answer", async () => {
  writeFileSync(join(dir, "killed.csv"), OLD);
  const run = spawnBasin(["run", "copy.ts", "--output", "killed.csv"], { cwd: dir });
  const end = exited(run.child);
  // Killed once its temp file exists (it is made before the first partition is written).
  const t0 = Date.now();
  while (temps().length === 0 && Date.now() - t0 < 30_000) await new Promise((r) => setTimeout(r, 2));
  expect(temps()).toHaveLength(1);
  run.child.kill("SIGKILL");
  expect((await end).signal).toBe("SIGKILL");
  expect(readFileSync(join(dir, "killed.csv"), "utf8")).toBe(OLD);
  expect(temps()).toHaveLength(1);
  const again = await runBasin(["run", "copy.ts", "--output", "killed.csv"], { cwd: dir, timeoutMs: 60_000 });
  expect(again.code, again.stderr).toBe(0);
  expect(temps()).toEqual([]);
  const text = readFileSync(join(dir, "killed.csv"), "utf8").trim().split("\n");
  expect(text[0]).toBe("k,v,s,w");
  expect(text).toHaveLength(200_001);
  expect(text[200_000]).toBe("199999,49999.75,name-691,149999.25");
});

it("SIGKILL while a folder of parts is written: the old parts kept; the next run removes the temp folder and replaces them", async () => {
  const parts = join(dir, "parts");
  const first = await runBasin(["run", "copy.ts", "--output", "parts/"], { cwd: dir, timeoutMs: 60_000 });
  expect(first.code, first.stderr).toBe(0);
  const old = readdirSync(parts).sort();
  const oldBytes = old.map((n) => readFileSync(join(parts, n)));
  const tempFolders = () => readdirSync(dir).filter((n) => n.startsWith(".parts.partial-"));
  const run = spawnBasin(["run", "copy.ts", "--output", "parts/"], { cwd: dir });
  const end = exited(run.child);
  const t0 = Date.now();
  while (tempFolders().length === 0 && Date.now() - t0 < 30_000) await new Promise((r) => setTimeout(r, 2));
  run.child.kill("SIGKILL");
  expect((await end).signal).toBe("SIGKILL");
  expect(readdirSync(parts).sort()).toEqual(old);
  old.forEach((n, i) => expect(readFileSync(join(parts, n)).equals(oldBytes[i])).toBe(true));
  expect(tempFolders()).toHaveLength(1);
  const again = await runBasin(["run", "copy.ts", "--output", "parts/"], { cwd: dir, timeoutMs: 60_000 });
  expect(again.code, again.stderr).toBe(0);
  expect(tempFolders()).toEqual([]);
  expect(readdirSync(dir).filter((n) => n.startsWith(".parts."))).toEqual([]);
  expect(readdirSync(parts).sort()).toEqual(old);
});
