// `basin info`: what the machine offers, as JSON and as text.
import { writeFileSync } from "node:fs";
import { availableParallelism, totalmem } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { native } from "../../engine/native/addon.js";
import { makeTempDir, removeDir, runBasin } from "../helpers/cli.js";

let dir: string;
beforeAll(() => {
  dir = makeTempDir();
});
afterAll(() => removeDir(dir));

describe("basin info", () => {
  it("--json reports cores, memory and GPUs as this machine has them", async () => {
    const r = await runBasin(["info", "--json"], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe("");
    const info = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(info.cores).toBe(availableParallelism());
    expect(info.memoryBytes).toBe(totalmem());
    const build = native().buildInfo();
    // The addon's own count (0 where there is no GPU driver), not a hard-coded number.
    expect(info.gpus).toBe(build.gpus);
    expect(Number.isInteger(info.gpus) && (info.gpus as number) >= 0).toBe(true);
    expect(info.native).toEqual({
      cuda: build.cuda,
      napiVersion: build.napiVersion,
      flavour: build.cuda ? "cuda" : "cpu",
      spillCompression: build.spillCompression,
    });
    expect(info.node).toBe(process.version);
    expect(info.defaultWorkers).toBe(availableParallelism());
    const free = info.freeMemoryBytes as number;
    expect(free).toBeGreaterThan(0);
    expect(free).toBeLessThanOrEqual(totalmem());
  });

  it("BASIN_WORKERS does not change what info reports as cores", async () => {
    const r = await runBasin(["info", "--json"], { cwd: dir, env: { BASIN_WORKERS: "3" } });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).cores).toBe(availableParallelism());
  });

  it("the text form names cores, memory, GPUs and the native build", async () => {
    const r = await runBasin(["info"], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    const gpus = native().buildInfo().gpus;
    expect(r.stdout).toMatch(new RegExp(`^GPUs\\s+${gpus}$`, "m"));
    expect(r.stdout).toMatch(new RegExp(`^cores\\s+${availableParallelism()}\\b`, "m"));
    expect(r.stdout).toMatch(/^memory\s+[\d.]+ GiB/m);
    expect(r.stdout).toMatch(/^native build\s+(cpu|cuda)/m);
    expect(r.stdout).toMatch(/^spill files\s+compressed with lz4 or zstd \(or none\)$/m); // this machine has liblz4-dev and libzstd-dev
    const gib = Number(/^memory\s+([\d.]+) GiB/m.exec(r.stdout)![1]);
    expect(Math.abs(gib - totalmem() / 1024 ** 3)).toBeLessThan(0.06);
    expect(() => JSON.parse(r.stdout)).toThrow();
  });
});

describe("basin info and run with GPUs", () => {
  it("--json has cuda: whether it is compiled in, driver and runtime versions, and each GPU", async () => {
    const r = await runBasin(["info", "--json"], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    const cuda = JSON.parse(r.stdout).cuda as {
      compiled: boolean;
      driverVersion: number;
      runtimeVersion: number;
      note: string;
      devices: unknown[];
    };
    expect(cuda).toEqual(native().gpuInfo());
    expect(cuda.devices.length).toBe(native().buildInfo().gpus);
  });

  it("--gpus naming a GPU that is not there fails the run with what the machine has, and exit code 1", async () => {
    const missing = native().gpuInfo().devices.length;
    const p = `import { fromColumns } from "basin";\nexport default fromColumns({ a: [1, 2] });\n`;
    const file = join(dir, "gpus.ts");
    writeFileSync(file, p);
    const r = await runBasin(["run", file, "--gpus", String(missing)], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(
        `error \\[BASIN_PLAN\\]: GPU ${missing} asked for, but this machine has .*check --gpus and CUDA_VISIBLE_DEVICES`,
      ),
    );
  });

  it("--gpus with something other than all, none or device numbers is refused", async () => {
    const r = await runBasin(["run", "x.ts", "--gpus", "first"], { cwd: dir });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('--gpus needs "all", "none" or device numbers like 0,2; got "first"');
  });
});
