// A runner profile on the real single-node SLURM started here: `basin run --cluster
// RUNNER` submits one job of 4 tasks started with srun (scheduler, driver, two
// workers), prints the local engine's groupby and join, exits with the pipeline's
// status and leaves squeue empty (also with srun making its own allocation); a worker rank killed mid-run is reported with its
// log while the run still answers; SIGTERM to `basin run` while the job is pending
// or running cancels it; mpirun inside the allocation runs the same pipeline.
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { saveProfile, type RunnerProfile } from "../../engine/cluster/profiles.js";
import { exited, makeTempDir, removeDir, runBasin, spawnBasin, writeText } from "../helpers/cli.js";
import { PYTHON, requireDask } from "./dask_procs.js";
import { requireMpi, RUNNER_PIPELINE, WAITING_PIPELINE, workerPid } from "./runner_procs.js";
import { startSlurm, until, type Slurm } from "./slurm_procs.js";

let slurm: Slurm;
let dir: string;
let env: NodeJS.ProcessEnv;
let local: string;

const profile = (over: Partial<RunnerProfile>): RunnerProfile => ({
  kind: "runner",
  name: "srun4",
  launcher: "srun",
  tasks: 4,
  walltime: "00:10:00",
  cores: 1,
  memory: "400M",
  python: PYTHON,
  directory: slurm.jobs,
  startTimeout: 90,
  ...over,
});

beforeAll(async () => {
  requireDask();
  requireMpi();
  slurm = await startSlurm(4);
  dir = makeTempDir("basin-runner-slurm-");
  writeText(dir, "p.ts", RUNNER_PIPELINE);
  writeText(dir, "wait.ts", WAITING_PIPELINE);
  writeText(
    dir,
    "fails.ts",
    `import { fromColumns } from "basin";\nexport default fromColumns({ a: [1] }).select("nope");\n`,
  );
  env = { SLURM_CONF: slurm.conf, BASIN_CONFIG_DIR: `${dir}/config`, BASIN_PYTHON: PYTHON };
  const file = `${dir}/config/profiles.json`;
  saveProfile(profile({}), file);
  saveProfile(profile({ name: "mpi4", launcher: "mpirun" }), file);
  saveProfile(profile({ name: "srun-direct", submit: "none" }), file);
  const r = await runBasin(["run", "p.ts"], { cwd: dir, env });
  expect(r.code, r.stderr).toBe(0);
  local = r.stdout;
}, 60_000);

afterAll(async () => {
  await slurm?.stop();
  if (dir) removeDir(dir);
});

describe("a runner in one SLURM allocation", () => {
  it("srun -n 4: scheduler, driver and two workers answer the groupby and the join as the local engine does; squeue is empty after", async () => {
    const r = await runBasin(["run", "p.ts", "--cluster", "srun4"], { cwd: dir, env, timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(local);
    expect(r.stderr).toMatch(/SLURM job \d+ submitted: 4 tasks with srun \(scheduler, driver, 2 workers\)/);
    expect(r.stderr).toMatch(/ran on Dask at tcp:\S+ in/);
    console.log(`srun runner: ${(r.ms / 1000).toFixed(2)} s in all`);
    expect(slurm.queue()).toEqual([]);
    // the session folder goes with a run that succeeded
    expect(readdirSync(slurm.jobs)).toEqual([]);
  }, 150_000);

  it("the job ends with the pipeline's exit status, and basin run with it", async () => {
    const r = await runBasin(["run", "fails.ts", "--cluster", "srun4"], { cwd: dir, env, timeoutMs: 120_000 });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/error \[BASIN_PLAN\]: .*nope/);
    expect(slurm.queue()).toEqual([]);
    const id = /SLURM job (\d+) submitted/.exec(r.stderr)![1];
    const shown = slurm.command("scontrol", ["show", "job", id]);
    expect(shown).toMatch(/JobState=FAILED /);
    expect(shown).toMatch(/ ExitCode=1:0/);
  }, 150_000);

  it("mpirun -n 4 inside the allocation answers the same", async () => {
    const r = await runBasin(["run", "p.ts", "--cluster", "mpi4"], { cwd: dir, env, timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(local);
    expect(r.stderr).toMatch(/SLURM job \d+ submitted: 4 tasks with mpirun/);
    expect(slurm.queue()).toEqual([]);
  }, 150_000);

  it("submit none: srun outside an allocation asks SLURM for one itself, answers the same, and leaves squeue empty", async () => {
    const r = await runBasin(["run", "p.ts", "--cluster", "srun-direct"], { cwd: dir, env, timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(local);
    expect(r.stderr).toMatch(/runner session \d+ on this machine started: 4 tasks with srun/);
    expect(slurm.queue()).toEqual([]);
  }, 150_000);

  it("a worker rank killed mid-run is reported with its log, and the run still answers on the other worker", async () => {
    const { child, out, err } = spawnBasin(["run", "wait.ts", "--cluster", "srun4"], { cwd: dir, env });
    try {
      const done = exited(child);
      await until("the driver waits for go", 90_000, () => existsSync(join(dir, "ready")), err);
      process.kill(workerPid(slurm.jobs, 2), "SIGKILL");
      await until("the rank's death is reported", 30_000, () => /rank 2 \(a Dask worker\) exited/.test(err()), err);
      writeFileSync(join(dir, "go"), "");
      expect((await done).code, err()).toBe(0);
      expect(out()).toBe(local);
      expect(err()).toMatch(
        /rank 2 \(a Dask worker\) exited with status 137; the run goes on with the other workers \(Dask recomputes what it held\)\. rank 2 \(a Dask worker\): its log \S+rank-2\.log ends with:/,
      );
      expect(slurm.queue()).toEqual([]);
    } finally {
      child.kill("SIGKILL");
      for (const f of ["ready", "go"]) removeDir(join(dir, f));
    }
  }, 150_000);

  it("SIGTERM to basin run cancels the job, pending or running", async () => {
    for (const when of ["pending", "running"] as const) {
      if (when === "pending") slurm.command("scontrol", ["update", "PartitionName=debug", "State=DOWN"]);
      const { child, err } = spawnBasin(["run", "wait.ts", "--cluster", "srun4"], { cwd: dir, env });
      try {
        if (when === "pending") {
          await until("the job is queued", 30_000, () => slurm.queue().length === 1, err);
          expect([...slurm.states().values()]).toEqual(["PENDING"]);
        } else await until("the driver runs", 90_000, () => existsSync(join(dir, "ready")), err);
        const done = exited(child);
        child.kill("SIGTERM");
        expect(await done, err()).toEqual({ code: null, signal: "SIGTERM" });
        expect(err()).toContain("basin: stopped by SIGTERM; cancelled the cluster job it had started");
        await until(
          "squeue is empty",
          15_000,
          () => slurm.queue().length === 0,
          () => slurm.states().toString(),
        );
      } finally {
        child.kill("SIGKILL");
        if (when === "pending") slurm.command("scontrol", ["update", "PartitionName=debug", "State=UP"]);
        removeDir(join(dir, "ready"));
      }
    }
    // slurm.stop() (afterAll) fails if any process of these jobs outlived them
  }, 150_000);
});
