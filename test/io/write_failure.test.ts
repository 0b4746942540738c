// A write that fails leaves the old file as it was and no temp file beside it, even
// when it fails before the temp file's asynchronous open has completed; through
// `basin run --output`, a real "file too large" (a file-size limit, `ulimit -f`, with
// SIGXFSZ ignored so the write fails with EFBIG as a full disk fails with ENOSPC) and a
// real SIGKILL while it writes (a file, or a folder of parts), after which the next
// run removes the temp file. A write that replaces a file leaves no link to the old one.
import { execFile } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OutputFormat } from "../../engine/io/write.js";
import { writeFile, type ChunkSource } from "../../engine/io/write.js";
import { BASIN_BIN, exited, makeTempDir, removeDir, runBasin, spawnBasin, writeText } from "../helpers/cli.js";

const dir = makeTempDir("basin-write-fail-");
afterAll(() => removeDir(dir));

function failing(afterChunks: number): ChunkSource {
  return {
    schema: [{ name: "v", type: "float64" }],
    rows: 10,
    async *chunks() {
      for (let i = 0; i < afterChunks; i++)
        yield { rows: 1, names: ["v"], columns: [{ type: "float64", values: new Float64Array([i]), validity: null }] };
      throw new Error("the source broke");
    },
  };
}

describe("a failed write", () => {
  it.each(["csv", "parquet", "arrow"] as OutputFormat[])(
    "keeps the old %s file and leaves no temp file, failing at once or midway",
    async (format) => {
      const path = join(dir, `out.${format}`);
      writeFileSync(path, "old");
      for (const after of [0, 2]) {
        await expect(writeFile(failing(after), path, format)).rejects.toMatchObject({
          code: "BASIN_IO",
          message: expect.stringContaining("the source broke"),
        });
        await new Promise((r) => setTimeout(r, 50)); // a late open would show up by now
        expect(readFileSync(path, "utf8")).toBe("old");
        expect(readdirSync(dir).filter((f) => f.includes("partial"))).toEqual([]);
      }
    },
  );
});

describe("a failed basin run --output", () => {
  let cli: string;
  const OLD = "old,answer\n1,2\n";
  const temps = () => readdirSync(cli).filter((n) => n.includes(".partial-"));

  beforeAll(() => {
    cli = makeTempDir("basin-write-fail-cli-");
    // ~8 MB of CSV in, about as much out: beyond a 1 MB file-size limit.
    const lines = ["k,v,s"];
    for (let i = 0; i < 200_000; i++) lines.push(`${i},${i * 0.25},name-${i % 977}`);
    writeFileSync(join(cli, "in.csv"), lines.join("\n") + "\n");
    writeText(
      cli,
      "copy.ts",
      `import { readCsv, col } from "basin";\nexport default readCsv("in.csv", { blocksize: "1MB" }).withColumns({ w: col("v").mul(3) });\n`,
    );
  });
  afterAll(() => removeDir(cli));

  it("the file system refuses the write midway (file too large): BASIN_IO naming the file, the old file kept, no temp file", async () => {
    for (const [output, what] of [
      ["out.csv", "CSV by the workers"],
      ["out.parquet", "Parquet by the workers"],
      ["out.arrow", "Arrow by the workers"],
    ] as const) {
      writeFileSync(join(cli, output), OLD);
      const r = await new Promise<{ code: number | null; stderr: string }>((resolve) =>
        execFile(
          "bash",
          [
            "-c",
            `ulimit -f 1024; trap '' XFSZ; exec "${process.execPath}" "${BASIN_BIN}" run copy.ts --output ${output}`,
          ],
          { cwd: cli, timeout: 60_000, encoding: "utf8" },
          (err, _out, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stderr }),
        ),
      );
      expect(r.code, `${what}: ${r.stderr}`).not.toBe(0);
      expect(r.stderr, what).toContain("error [BASIN_IO]");
      expect(r.stderr, what).toMatch(/too large/i);
      expect(r.stderr, what).toContain(output);
      expect(readFileSync(join(cli, output), "utf8"), what).toBe(OLD);
      expect(temps(), what).toEqual([]);
    }
  });

  it("SIGKILL while writing: the old file kept; the next run removes the temp file and writes the whole answer", async () => {
    writeFileSync(join(cli, "killed.csv"), OLD);
    const run = spawnBasin(["run", "copy.ts", "--output", "killed.csv"], { cwd: cli });
    const end = exited(run.child);
    // Killed once its temp file exists (it is made before the first partition is written).
    const t0 = Date.now();
    while (temps().length === 0 && Date.now() - t0 < 30_000) await new Promise((r) => setTimeout(r, 2));
    expect(temps()).toHaveLength(1);
    run.child.kill("SIGKILL");
    expect((await end).signal).toBe("SIGKILL");
    expect(readFileSync(join(cli, "killed.csv"), "utf8")).toBe(OLD);
    expect(temps()).toHaveLength(1);
    const again = await runBasin(["run", "copy.ts", "--output", "killed.csv"], { cwd: cli, timeoutMs: 60_000 });
    expect(again.code, again.stderr).toBe(0);
    expect(temps()).toEqual([]);
    const text = readFileSync(join(cli, "killed.csv"), "utf8").trim().split("\n");
    expect(text[0]).toBe("k,v,s,w");
    expect(text).toHaveLength(200_001);
    expect(text[200_000]).toBe("199999,49999.75,name-691,149999.25");
  });

  it("replacing a file leaves no link to the old one, and removes one a killed run left", async () => {
    const path = join(cli, "replaced.csv");
    writeFileSync(path, OLD);
    // What a run killed between linking the old file aside and removing the link leaves.
    const dead = await new Promise<number>((ok) => {
      const c = execFile(process.execPath, ["-e", ""], () => ok(c.pid!));
    });
    const stale = `.replaced.csv.old-${dead}-AAAAAAAAAAAA`;
    writeFileSync(join(cli, stale), OLD);
    const olds = () => readdirSync(cli).filter((n) => n.startsWith(".replaced.csv.old-"));
    const run = await runBasin(["run", "copy.ts", "--output", "replaced.csv"], { cwd: cli, timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(path, "utf8").split("\n")[0]).toBe("k,v,s,w");
    // The run's own link went before it exited; the stale one with it.
    expect(olds()).toEqual([]);
    // In one process: the link goes once the removal (off the JS thread) is done.
    const rows = {
      rows: 1,
      names: ["v"],
      columns: [{ type: "float64" as const, values: new Float64Array([1]), validity: null }],
    };
    const src: ChunkSource = {
      schema: [{ name: "v", type: "float64" }],
      rows: 1,
      chunks: async function* () {
        yield rows;
      },
    };
    await writeFile(src, path, "csv");
    await new Promise((r) => setTimeout(r, 100));
    expect(olds()).toEqual([]);
    expect(readFileSync(path, "utf8")).toBe("v\n1\n");
  });

  it("SIGKILL while a folder of parts is written: the old parts kept; the next run removes the temp folder and replaces them", async () => {
    const parts = join(cli, "parts");
    const first = await runBasin(["run", "copy.ts", "--output", "parts/"], { cwd: cli, timeoutMs: 60_000 });
    expect(first.code, first.stderr).toBe(0);
    const old = readdirSync(parts).sort();
    const oldBytes = old.map((n) => readFileSync(join(parts, n)));
    const tempFolders = () => readdirSync(cli).filter((n) => n.startsWith(".parts.partial-"));
    const run = spawnBasin(["run", "copy.ts", "--output", "parts/"], { cwd: cli });
    const end = exited(run.child);
    const t0 = Date.now();
    while (tempFolders().length === 0 && Date.now() - t0 < 30_000) await new Promise((r) => setTimeout(r, 2));
    run.child.kill("SIGKILL");
    expect((await end).signal).toBe("SIGKILL");
    expect(readdirSync(parts).sort()).toEqual(old);
    old.forEach((n, i) => expect(readFileSync(join(parts, n)).equals(oldBytes[i])).toBe(true));
    expect(tempFolders()).toHaveLength(1);
    const again = await runBasin(["run", "copy.ts", "--output", "parts/"], { cwd: cli, timeoutMs: 60_000 });
    expect(again.code, again.stderr).toBe(0);
    expect(tempFolders()).toEqual([]);
    expect(readdirSync(cli).filter((n) => n.startsWith(".parts."))).toEqual([]);
    expect(readdirSync(parts).sort()).toEqual(old);
  });
});
