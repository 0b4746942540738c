// A runner started with real Open MPI on this machine (`submit: "none"`: mpirun -n 4
// runs here, --allow-run-as-root and --oversubscribe added as needed): `basin run`
// prints the local engine's groupby and join; every worker rank dying fails the run
// with an error naming the ranks and their logs; `basin serve` shows the runner's
// workers and stops them; an edited job script is the one that runs; protocol ucx is
// refused up front without ucx-py; bad profiles are refused by field. Nothing the
// job started outlives a test.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { col, count, fromColumns, LocalCluster } from "../../engine/api/index.js";
import type { ClusterStatus } from "../../engine/common/rpc.js";
import { saveProfile, type RunnerProfile } from "../../engine/cluster/profiles.js";
import { RunnerCluster } from "../../engine/cluster/runner/runner_cluster.js";
import { native } from "../../engine/native/addon.js";
import {
  BASIN_BIN,
  exited,
  makeTempDir,
  printedUrl,
  removeDir,
  runBasin,
  spawnBasin,
  writeText,
} from "../helpers/cli.js";
import { expectSameRows, tableRows } from "../helpers/oracle.js";
import { RpcClient } from "../helpers/rpc_client.js";
import { PYTHON, requireDask } from "./dask_procs.js";
import { requireMpi, RUNNER_PIPELINE, WAITING_PIPELINE, workerPid } from "./runner_procs.js";
import { processesUsing, until } from "./slurm_procs.js";
import { startSshd } from "./sshd_procs.js";

let dir: string;
let jobs: string;
let env: NodeJS.ProcessEnv;
let local: string;

const profile = (over: Partial<RunnerProfile> = {}): RunnerProfile => ({
  kind: "runner",
  name: "mpi",
  launcher: "mpirun",
  submit: "none",
  tasks: 4,
  cores: 1,
  memory: "500M",
  python: PYTHON,
  directory: jobs,
  startTimeout: 60,
  ...over,
});

beforeAll(async () => {
  requireDask();
  requireMpi();
  dir = makeTempDir("basin-runner-mpi-");
  jobs = join(dir, "jobs");
  mkdirSync(jobs);
  writeText(dir, "p.ts", RUNNER_PIPELINE);
  writeText(dir, "wait.ts", WAITING_PIPELINE);
  env = { BASIN_CONFIG_DIR: `${dir}/config`, BASIN_PYTHON: PYTHON };
  const file = `${dir}/config/profiles.json`;
  saveProfile(profile(), file);
  saveProfile(profile({ name: "ucx", protocol: "ucx" }), file);
  const r = await runBasin(["run", "p.ts"], { cwd: dir, env });
  expect(r.code, r.stderr).toBe(0);
  local = r.stdout;
}, 60_000);

afterEach(() => {
  // Nothing a runner started may outlive its test.
  const left = processesUsing(jobs);
  for (const p of left) process.kill(p.pid, "SIGKILL");
  expect(left.map((p) => p.cmd)).toEqual([]);
});

afterAll(() => {
  if (dir) removeDir(dir);
  expect(native().storeStats()).toMatchObject({ handles: 0, buffers: 0 });
});

describe("a runner started with mpirun on this machine", () => {
  it("mpirun -n 4: scheduler, driver and two workers answer the groupby and the join as the local engine does", async () => {
    const r = await runBasin(["run", "p.ts", "--cluster", "mpi"], { cwd: dir, env, timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(local);
    expect(r.stderr).toMatch(
      /runner session \d+ on this machine started: 4 tasks with mpirun \(scheduler, driver, 2 workers\)/,
    );
    console.log(`mpirun runner: ${(r.ms / 1000).toFixed(2)} s in all`);
    expect(readdirSync(jobs)).toEqual([]);
  }, 150_000);

  it("every worker rank dying fails the run with an error naming the ranks and their logs, and stops the job", async () => {
    const { child, err } = spawnBasin(["run", "wait.ts", "--cluster", "mpi"], { cwd: dir, env });
    try {
      const done = exited(child);
      await until("the driver waits for go", 90_000, () => existsSync(join(dir, "ready")), err);
      for (const rank of [2, 3]) process.kill(workerPid(jobs, rank), "SIGKILL");
      expect((await done).code, err()).toBe(1);
      expect(err()).toMatch(
        /error \[BASIN_IO\]: every Dask worker of runner session \d+ on this machine \(runner profile "mpi": ranks 2, 3\) exited before the pipeline finished, so it cannot go on; the job was cancelled\. rank 2 \(a Dask worker\): its log \S+\/rank-2\.log ends with:[\s\S]*basin: rank 2 \(a Dask worker\) exited with status 137[\s\S]*rank 3 \(a Dask worker\): its log \S+\/rank-3\.log ends with:/,
      );
      // the folder named in the error stays, with its logs
      const kept = readdirSync(jobs);
      expect(kept).toHaveLength(1);
      expect(readFileSync(join(jobs, kept[0], "rank-3.log"), "utf8")).toMatch(/exited with status 137/);
      removeDir(join(jobs, kept[0]));
    } finally {
      child.kill("SIGKILL");
      removeDir(join(dir, "ready"));
    }
  }, 150_000);

  it("basin serve --cluster RUNNER lists the runner's workers in the cluster status, and stopping it stops the job", async () => {
    const { child, err } = spawnBasin(["serve", dir, "--port", "0", "--cluster", "mpi"], {
      cwd: "/",
      env: { ...env, BASIN_WORKERS: "1" },
    });
    try {
      const { url, out } = await printedUrl(child, 90_000);
      expect(out).toMatch(/runs on Dask at runner profile mpi \(4 tasks with mpirun, scheduler tcp:\S+\)/);
      const client = await RpcClient.connect(`ws://${url.host}/?token=${url.searchParams.get("token")}`, url.origin);
      const status = await client.call<ClusterStatus>("cluster");
      client.close();
      expect(status.kind).toBe("dask");
      expect(status.workers.map((w) => w.name).sort()).toEqual(["basin-rank-2", "basin-rank-3"]);
      expect(processesUsing(jobs).length).toBeGreaterThan(0);
      const done = exited(child);
      child.kill("SIGTERM");
      expect((await done).code, err()).toBe(0);
      expect(readdirSync(jobs)).toEqual([]);
    } finally {
      child.kill("SIGKILL");
    }
  }, 150_000);

  it("runs the job script as edited before it starts, and answers frames through the Cluster interface", async () => {
    const runner = new RunnerCluster({ spec: profile(), directory: jobs, startTimeout: 60, python: PYTHON });
    const localCluster = new LocalCluster({ workers: 1 });
    try {
      const script = await runner.script();
      expect(script).toMatch(/^LAUNCH=\(mpirun -n 4 --bind-to none\)$/m);
      expect(script).toContain('RANK="${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${PMIX_RANK:-}}}"');
      await runner.start(script.replace("\n# The job:", '\necho "edited by the test"\n# The job:'));
      const df = fromColumns(
        {
          k: Array.from({ length: 300 }, (_, i) => (i % 7 === 0 ? null : `κ${i % 3}`)),
          v: Array.from({ length: 300 }, (_, i) => i),
        },
        { partitions: [0, 150, 150] },
      )
        .groupBy("k")
        .agg(col("v").sum().alias("s"), count().alias("n"));
      expectSameRows(
        tableRows(await df.compute({ cluster: runner })),
        tableRows(await df.compute({ cluster: localCluster })),
        "groupby on the runner",
      );
      expect(await runner.job.read("runner.log")).toContain("edited by the test");
    } finally {
      await runner.close();
      await localCluster.close();
    }
    expect(readdirSync(jobs)).toEqual([]);
  }, 150_000);

  it("on a login node over SSH: the pipeline's text goes to the shared folder and reads its data from the workspace, with the local answers", async () => {
    const sshd = await startSshd();
    try {
      const file = `${dir}/config/profiles.json`;
      saveProfile(
        {
          kind: "ssh",
          name: "login",
          host: "127.0.0.1",
          port: sshd.port,
          user: "root",
          keyPath: sshd.clientKey,
          knownHosts: sshd.knownHosts,
        },
        file,
      );
      // the nodes start this checkout's CLI; data paths are the workspace's
      saveProfile(
        profile({ name: "mpi-ssh", ssh: "login", workspace: dir, basin: `${process.execPath} ${BASIN_BIN}` }),
        file,
      );
      // a pipeline that reads a file by a relative path: the workspace's, not the submitting folder's
      const csvPipeline = `import { col, count, readCsv } from "basin";\nexport default readCsv("kv.csv").groupBy("k").agg(col("v").sum().alias("s"), count().alias("n")).sort("k");\n`;
      writeText(
        dir,
        "kv.csv",
        `k,v\n${Array.from({ length: 200 }, (_, i) => `${["a", "β", ""][i % 3]},${i}`).join("\n")}\n`,
      );
      writeText(dir, "csv.ts", csvPipeline);
      const here = await runBasin(["run", "csv.ts"], { cwd: dir, env });
      expect(here.code, here.stderr).toBe(0);
      const elsewhere = makeTempDir("basin-runner-elsewhere-");
      writeText(elsewhere, "csv.ts", csvPipeline);
      try {
        const r = await runBasin(["run", "csv.ts", "--cluster", "mpi-ssh"], {
          cwd: elsewhere,
          env,
          timeoutMs: 120_000,
        });
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toBe(here.stdout);
        expect(r.stdout).toMatch(/3 rows × 3 columns/);
        expect(r.stderr).toMatch(/runner session \d+ on root@127\.0\.0\.1 started: 4 tasks with mpirun/);
        expect(readdirSync(jobs)).toEqual([]);
      } finally {
        removeDir(elsewhere);
      }
    } finally {
      await sshd.stop();
    }
  }, 150_000);

  it('protocol "ucx" is refused before anything starts when the Python cannot import ucx-py', async () => {
    const r = await runBasin(["run", "p.ts", "--cluster", "ucx"], { cwd: dir, env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `error [BASIN_PLAN]: runner profile "ucx": protocol "ucx" needs ucx-py, but ${PYTHON} on this machine cannot import it (ModuleNotFoundError: No module named 'ucp'); install ucx-py in that environment`,
    );
    expect(r.stderr).not.toMatch(/started/);
    expect(readdirSync(jobs)).toEqual([]);
  });

  it("refuses bad runner profiles by field", () => {
    const file = `${dir}/config/bad.json`;
    const base = profile({ name: "x" });
    expect(() => saveProfile({ ...base, tasks: 2 }, file)).toThrow(
      /runner profile "x": tasks must be a whole number ≥ 3 \(rank 0 the scheduler, rank 1 the driver, ranks 2… the workers\), got 2/,
    );
    expect(() => saveProfile({ ...base, launcher: "mpiexec" as "mpirun" }, file)).toThrow(
      /runner profile "x": launcher must be "srun" or "mpirun", got "mpiexec"/,
    );
    expect(() => saveProfile({ ...base, submit: undefined }, file)).toThrow(
      /runner profile "x": needs a walltime for its sbatch job/,
    );
    expect(() => saveProfile({ ...base, memory: "1 GB" }, file)).toThrow(
      /runner profile "x": memory "1 GB" is not a SLURM size/,
    );
    expect(() => saveProfile({ ...base, launcherArgs: "--oversubscribe" as unknown as string[] }, file)).toThrow(
      /launcherArgs must be a list of strings/,
    );
    writeFileSync(file, "[]");
  });
});
