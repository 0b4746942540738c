// SLURM batch scripts rendered from a profile: the #SBATCH lines, modules and conda,
// `dask cuda worker` for GPU jobs and --protocol ucx, bad fields refused by name; and
// the rendered CPU script run as-is by bash (as sbatch would, without SLURM here):
// its scheduler writes the scheduler file and a pipeline runs on its worker.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { col, count, fromColumns, LocalCluster } from "../../engine/api/index.js";
import { DaskCluster } from "../../engine/cluster/dask/dask_cluster.js";
import {
  renderBatchScript,
  schedulerAddress,
  walltimeSeconds,
  type SlurmJobSpec,
} from "../../engine/cluster/slurm/batch_script.js";
import { native } from "../../engine/native/addon.js";
import { expectSameRows, tableRows } from "../helpers/oracle.js";
import { PYTHON, requireDask } from "./dask_procs.js";

const spec: SlurmJobSpec = {
  name: "hpc",
  partition: "gpu",
  account: "lab-42",
  walltime: "1-02:00:00",
  cores: 8,
  memory: "32G",
};

afterAll(() => {
  expect(native().storeStats()).toMatchObject({ handles: 0, buffers: 0 });
});

describe("SLURM batch scripts", () => {
  it("renders the job's resources, environment, scheduler and a worker that retires before the walltime", () => {
    const text = renderBatchScript(
      { ...spec, modules: ["cuda/12.2", "gcc"], conda: "rapids-24.08", python: "/opt/py/bin/python" },
      { schedulerFile: "/shared/basin it's.json", withScheduler: true, logDir: "/shared/logs/" },
    );
    const lines = text.split("\n");
    expect(lines.filter((l) => l.startsWith("#SBATCH"))).toEqual([
      "#SBATCH --job-name=basin-hpc",
      "#SBATCH --partition=gpu",
      "#SBATCH --account=lab-42",
      "#SBATCH --time=1-02:00:00",
      "#SBATCH --nodes=1",
      "#SBATCH --ntasks=1",
      "#SBATCH --cpus-per-task=8",
      "#SBATCH --mem=32G",
      "#SBATCH --output=/shared/logs/basin-hpc-%j.log",
    ]);
    expect(lines).toContain("module load cuda/12.2 gcc");
    expect(lines).toContain("conda activate rapids-24.08");
    expect(lines).toContain("PY='/opt/py/bin/python'");
    expect(text).toContain(`dask_scheduler --scheduler-file '/shared/basin it'\\''s.json' --protocol tcp`);
    // 26 h less 5 minutes
    expect(text).toContain(`--lifetime ${26 * 3600 - 300}s`);
    expect(text).toMatch(/dask_worker .* --nthreads 8 --memory-limit 32GiB/);
    expect(text).not.toMatch(/gres|cuda worker/);
    execFileSync("bash", ["-n"], { input: text }); // valid bash
  });

  it("runs `dask cuda worker` with --gres when the job has GPUs, and ucx on request; workers-only jobs start no scheduler", () => {
    const text = renderBatchScript(
      { ...spec, gpus: 2, protocol: "ucx", memory: "4000" },
      { schedulerFile: "/s/f.json", withScheduler: false },
    );
    expect(text).toContain("#SBATCH --gres=gpu:2");
    expect(text).toMatch(
      /"\$PY" -m dask cuda worker --scheduler-file '\/s\/f\.json' .* --protocol ucx --memory-limit 4000MiB &/,
    );
    expect(text).not.toContain("dask_scheduler");
    execFileSync("bash", ["-n"], { input: text });
  });

  it("refuses bad fields, naming the profile and the field", () => {
    const render = (s: Partial<SlurmJobSpec>) => () =>
      renderBatchScript({ ...spec, ...s }, { schedulerFile: "/s/f.json", withScheduler: true });
    expect(render({ walltime: "90 minutes" })).toThrow(/walltime "90 minutes" must be HH:MM:SS, MM:SS or D-HH:MM:SS/);
    expect(render({ walltime: "01:75:00" })).toThrow(/minutes or seconds past 59/);
    expect(render({ cores: 0 })).toThrow(/SLURM profile "hpc": cores must be a positive integer, got 0/);
    expect(render({ memory: "lots" })).toThrow(/memory "lots" is not a SLURM size; write it like "16G"/);
    expect(render({ gpus: 1.5 })).toThrow(/gpus must be a whole number/);
    expect(render({ partition: "gpu; rm -rf /" })).toThrow(/partition "gpu; rm -rf \/" has characters/);
    expect(render({ protocol: "ib" as "ucx" })).toThrow(/protocol "ib" is not tcp or ucx/);
    expect(walltimeSeconds("45:00")).toBe(2700);
    expect(() => schedulerAddress("{}", "/s/f.json")).toThrow(
      /\/s\/f\.json holds no Dask scheduler address; the scheduler job may have failed/,
    );
  });

  it("the rendered script, run by bash, starts a scheduler and a worker that run a pipeline", async () => {
    requireDask();
    const dir = mkdtempSync(join(tmpdir(), "basin-slurm-script-"));
    const file = join(dir, "scheduler.json");
    writeFileSync(
      join(dir, "job.sh"),
      renderBatchScript(
        { name: "t", walltime: "00:05:00", cores: 2, memory: "1G", python: PYTHON },
        { schedulerFile: file, withScheduler: true },
      ),
    );
    const job = spawn("bash", [join(dir, "job.sh")], {
      cwd: dir,
      env: { ...process.env, SLURM_JOB_ID: "7" },
      stdio: ["ignore", "ignore", "pipe"],
      detached: true,
    });
    let log = "";
    job.stderr.on("data", (d: Buffer) => (log += d.toString()));
    const local = new LocalCluster({ workers: 1 });
    let dask: DaskCluster | undefined;
    try {
      const t0 = Date.now();
      while (!existsSync(file) || readFileSync(file, "utf8").length === 0) {
        if (Date.now() - t0 > 40_000 || job.exitCode !== null) throw new Error(`no scheduler file:\n${log}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      dask = new DaskCluster(schedulerAddress(readFileSync(file, "utf8"), file), {
        python: PYTHON,
        connectTimeout: 30,
      });
      for (let i = 0; i < 100 && (await dask.status()).workers.length === 0; i++)
        await new Promise((r) => setTimeout(r, 200));
      const status = await dask.status();
      expect(status.workers.map((w) => [w.name, w.threads, w.memoryLimit])).toEqual([["basin-7", 2, 2 ** 30]]);
      const n = 400;
      const df = fromColumns(
        {
          k: Array.from({ length: n }, (_, i) => (i % 13 === 0 ? null : `κ${i % 3}`)),
          v: Array.from({ length: n }, (_, i) => i),
        },
        { partitions: [0, 1, n - 1] },
      )
        .groupBy("k")
        .agg(col("v").sum().alias("s"), count().alias("n"));
      expectSameRows(
        tableRows(await df.compute({ cluster: dask })),
        tableRows(await df.compute({ cluster: local })),
        "pipeline on the script's worker",
      );
    } finally {
      await dask?.close();
      await local.close();
      // The script's process group (bash, scheduler, worker): TERM, then wait for all of it (bounded), then KILL.
      const alive = () => {
        try {
          process.kill(-job.pid!, 0);
          return true;
        } catch {
          return false;
        }
      };
      if (alive()) process.kill(-job.pid!, "SIGTERM");
      for (let i = 0; i < 100 && alive(); i++) await new Promise((r) => setTimeout(r, 100));
      if (alive()) process.kill(-job.pid!, "SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
