// Disk full → BASIN_SPILL naming the folder, with nothing of other runs lost; a
// killed engine's spill folder is removed at the next start, a live one's never.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { col, fromColumns, LocalCluster, readCsv } from "../../engine/api/index.js";
import { native, type JsTable } from "../../engine/native/addon.js";
import { parseBytes } from "../../engine/memory/bytes.js";
import { applyMemory, resolveMemory } from "../../engine/memory/limits.js";
import { processSpillDirectory, removeStaleSpillDirectories } from "../../engine/memory/spill_dir.js";
import { makeTrips, writeTripsCsv } from "../helpers/data.js";
import { errorLines, runBasin, writeText } from "../helpers/cli.js";

const root = mkdtempSync(join(tmpdir(), "basin-spill-err-"));
let trips: string;
const frame = () => readCsv(`${trips}/*.csv`, { blocksize: 8192, dtypes: { k: "int64", v: "int64" } });
/** Shuffles every row: all of it sits in the store at once. */
const shuffled = () => frame().groupBy("rid", "k").agg(col("v").sum().alias("v"));

const keep: JsTable = {
  rows: 3,
  names: ["s"],
  columns: [{ type: "string", values: ["a", "ü", null], validity: null }],
};

beforeAll(() => {
  trips = writeTripsCsv(makeTrips(20_000, 5), 4);
});
afterAll(() => {
  applyMemory(resolveMemory());
  rmSync(root, { recursive: true, force: true });
});

async function expectSpillError(cluster: LocalCluster, folder: string, why: RegExp): Promise<void> {
  // A table of another run, spilled before: it must survive the failure.
  applyMemory(cluster.memory);
  const other = native().tableFromJs(keep);
  native().memorySpill(1);
  expect(native().isSpilled(other)).toBe(true);
  try {
    const err = await shuffled()
      .compute({ cluster })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toMatchObject({ name: "BasinError", code: "BASIN_SPILL" });
    const message = (err as Error).message;
    expect(message).toContain(folder);
    expect(message).toMatch(why);
    expect(message, message).toMatch(/spill_errors\.test\.ts:\d+/); // the pipeline step that was running
    expect(native().tableToJs(other).columns[0].values).toMatchObject({ ascii: false });
    expect(native().tableInfo(other).rows).toBe(3);
  } finally {
    native().release(other);
    await cluster.close();
  }
  expect(native().memoryStats().diskTables).toBe(0);
}

describe("spill errors", () => {
  it("fails with BASIN_SPILL naming the folder when the spill limit is reached", async () => {
    const base = join(root, "limited");
    const cluster = new LocalCluster({ workers: 2, memoryLimit: 200_000, spillLimit: 300_000, localDirectory: base });
    await expectSpillError(cluster, base, /is full: its limit of 300000 bytes/);
  });

  it("fails with BASIN_SPILL naming the folder when the disk is full (a 256 kB tmpfs)", async () => {
    const tmpfs = mkdtempSync(join(tmpdir(), "basin-tmpfs-"));
    try {
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", tmpfs], { stdio: "ignore" });
    } catch {
      rmSync(tmpfs, { recursive: true, force: true });
      throw new Error("this test mounts a 256 kB tmpfs to fill a disk for real: run the tests as root (CI does)");
    }
    try {
      const cluster = new LocalCluster({ workers: 2, memoryLimit: 200_000, localDirectory: tmpfs });
      await expectSpillError(cluster, tmpfs, /no space left on the device/);
    } finally {
      execFileSync("umount", [tmpfs]);
      rmSync(tmpfs, { recursive: true, force: true });
    }
  });

  it("rejects sizes that are not sizes, naming the option", () => {
    expect(parseBytes("4GB", "memoryLimit")).toBe(4e9);
    expect(parseBytes("1.5 GiB", "memoryLimit")).toBe(1.5 * 2 ** 30);
    expect(parseBytes(0.25, "memoryLimit", 1000)).toBe(250);
    for (const bad of ["lots", "-1GB", "4XB", 0])
      expect(() => new LocalCluster({ workers: 1, memoryLimit: bad })).toThrow(
        expect.objectContaining({ code: "BASIN_PLAN", message: expect.stringContaining("memoryLimit must be a size") }),
      );
  });

  it('a size with a unit is bytes, never a fraction ("1B" is one byte), and a limit no partition fits is BASIN_PLAN', () => {
    expect(parseBytes("1B", "memoryLimit", 1000)).toBe(1);
    expect(parseBytes("1", "memoryLimit", 1000)).toBe(1000); // a bare 1: all of it
    for (const tiny of ["1B", "1KB", 100])
      expect(() => new LocalCluster({ workers: 1, memoryLimit: tiny })).toThrow(
        expect.objectContaining({ code: "BASIN_PLAN", message: expect.stringContaining("too small") }),
      );
  });

  it("a spill folder under /proc (where Node's recursive mkdir never returns): BASIN_SPILL at once", async () => {
    const cwd = join(root, "proc-case");
    mkdirSync(cwd);
    writeText(cwd, "p.ts", 'import { fromColumns } from "basin";\nexport default fromColumns({ a: [1, 2] });\n');
    const t0 = performance.now();
    const r = await runBasin(["run", "p.ts", "--local-directory", "/proc/nope/spill"], { cwd, timeoutMs: 15_000 });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/error \[BASIN_SPILL\]: cannot make a spill folder in \/proc\/nope\/spill/);
    expect(performance.now() - t0).toBeLessThan(10_000);
  });

  it("a join that multiplies rows past the memory limit is BASIN_OOM at the join's line, before the memory is taken", async () => {
    const cluster = new LocalCluster({ workers: 1, memoryLimit: "50MB", localDirectory: join(root, "oom") });
    try {
      // 20,000 rows over 10 keys joined with themselves: 40 million rows.
      const t = fromColumns({
        k: Array.from({ length: 20_000 }, (_, i) => i % 10),
        v: Array.from({ length: 20_000 }, (_, i) => i),
      });
      const rssBefore = process.memoryUsage().rss;
      const err = await t
        .join(t, { on: "k" })
        .agg(col("v").sum().alias("s"))
        .compute({ cluster })
        .then(
          () => undefined,
          (e: unknown) => e as Error & { code?: string },
        );
      expect(err).toMatchObject({ code: "BASIN_OOM" });
      expect(err?.message).toMatch(/spill_errors\.test\.ts:\d+:\d+: this join's output passed \d+ rows/);
      expect(err?.message).toContain("--memory-limit");
      expect(process.memoryUsage().rss - rssBefore, "stopped near the limit, not at 40 million rows").toBeLessThan(
        300e6,
      );
    } finally {
      await cluster.close();
    }
  });

  it("a join where one key fills most of one side (skew, nothing multiplies) completes past the limit, not BASIN_OOM", async () => {
    const cluster = new LocalCluster({ workers: 1, memoryLimit: "20MB", localDirectory: join(root, "skew") });
    try {
      // 1.3 million right rows, all but 1,000 on key 7, join 1.5 million unique left keys: both sides
      // are hash-partitioned, the smaller (skewed) side is the hash table, and the task with key 7
      // makes 1.3 million rows (about 45 MB), more than the limit, but no more rows than its inputs.
      const n = 1_300_000;
      const right = fromColumns({
        k: Array.from({ length: n }, (_, i) => (i < 1000 ? 1000 + i : 7)),
        rv: Array.from({ length: n }, (_, i) => i % 1000),
      });
      const m = 1_500_000;
      const left = fromColumns({
        k: Array.from({ length: m }, (_, i) => i),
        lv: Array.from({ length: m }, (_, i) => 2 * i),
      });
      const result = await left
        .join(right, { on: "k" })
        .agg(col("rv").sum().alias("s"), col("lv").sum().alias("l"), col("k").count().alias("n"))
        .compute({ cluster });
      let s = 0;
      let l = 0;
      for (let i = 0; i < n; i++) {
        s += i % 1000;
        l += 2 * (i < 1000 ? 1000 + i : 7);
      }
      expect(result.toRows()).toEqual([{ s, l, n }]);
    } finally {
      await cluster.close();
    }
  });

  it("cannot make a spill folder in a file: BASIN_SPILL naming it", async () => {
    const file = join(root, "a-file");
    writeFileSync(file, "x");
    const cluster = new LocalCluster({ workers: 1, localDirectory: file });
    await expect(frame().compute({ cluster })).rejects.toMatchObject({
      code: "BASIN_SPILL",
      message: expect.stringContaining(file),
    });
    await cluster.close();
  });
});

/** A second engine process that spills a table into `base`, then waits. */
function engine(base: string): Promise<{ child: ChildProcess; dir: string }> {
  const addon = fileURLToPath(new URL("../../dist/engine/native/addon.js", import.meta.url));
  const limits = fileURLToPath(new URL("../../dist/engine/memory/limits.js", import.meta.url));
  const code = `
    const { native } = await import(${JSON.stringify(addon)});
    const { applyMemory, resolveMemory } = await import(${JSON.stringify(limits)});
    applyMemory(resolveMemory({ localDirectory: ${JSON.stringify(base)} }));
    native().tableFromJs({ rows: 2, names: ["x"], columns: [{ type: "float64", values: new Float64Array(2), validity: null }] });
    native().memorySpill(1);
    console.log(native().memoryStats().directory);
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", code], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    child.stdout!.once("data", (d: Buffer) => resolve({ child, dir: d.toString().trim() }));
    child.once("exit", (c) => reject(new Error(`engine exited with ${c}`)));
  });
}

describe("spill folders of other processes", () => {
  it("removes a killed engine's folder at start-up and never touches a live engine's", async () => {
    const base = join(root, "shared");
    mkdirSync(base, { recursive: true });
    const killed = await engine(base);
    const live = await engine(base);
    try {
      expect(readdirSync(killed.dir)).toHaveLength(1); // its spilled table
      killed.child.kill("SIGKILL");
      await new Promise((r) => killed.child.once("exit", r));
      expect(existsSync(killed.dir)).toBe(true); // left behind
      const mine = processSpillDirectory(base); // this process starts using the folder
      expect(existsSync(killed.dir)).toBe(false);
      expect(readdirSync(live.dir)).toHaveLength(1);
      expect(mine).not.toBe(live.dir);
      expect(removeStaleSpillDirectories(base)).toEqual([]);
    } finally {
      live.child.kill("SIGKILL");
    }
  });
});

describe("basin run --memory-limit --local-directory --spill-compression --stats", () => {
  it("spills, gives the same answer, and prints the memory statistics", async () => {
    const dir = join(root, "cli");
    mkdirSync(dir, { recursive: true });
    writeText(
      dir,
      "p.ts",
      `import { readCsv, col } from "basin";
export default readCsv(${JSON.stringify(`${trips}/*.csv`)}, { blocksize: 8192, dtypes: { k: "int64", v: "int64" } })
  .groupBy("rid", "k").agg(col("v").sum().alias("v")).sort("rid").head(30);
`,
    );
    const free = await runBasin(["run", "p.ts", "--workers", "2"], { cwd: dir, timeoutMs: 120_000 });
    const spill = join(dir, "spill");
    const limited = await runBasin(
      [
        "run",
        "p.ts",
        "--workers",
        "2",
        "--memory-limit",
        "300kB",
        "--local-directory",
        spill,
        "--spill-compression",
        "zstd",
        "--stats",
      ],
      { cwd: dir, timeoutMs: 120_000 },
    );
    expect(errorLines(limited.stderr)).toEqual([]);
    expect(limited.code).toBe(0);
    expect(limited.stdout).toBe(free.stdout);
    expect(limited.stderr, limited.stderr).toMatch(/host .* \(limit 300 kB\)/);
    const spilled = Number(/spilled\s+(\d+) tables/.exec(limited.stderr)?.[1]);
    expect(spilled).toBeGreaterThan(0);
    expect(limited.stderr).toMatch(/written \(zstd\)/);
    expect(limited.stderr).toContain(spill);
    expect(readdirSync(spill)).toEqual([]); // the process removed its folder on exit
    const bad = await runBasin(["run", "p.ts", "--memory-limit", "lots"], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--memory-limit");
    const badCodec = await runBasin(["run", "p.ts", "--spill-compression", "gzip"], { cwd: dir });
    expect(badCodec.code).toBe(2);
    expect(badCodec.stderr).toContain("--spill-compression needs one of lz4, zstd, none");
  });
});
