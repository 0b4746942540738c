// A saved slurm profile as a user drives it, on a real single-node SLURM started
// here: `basin run --cluster PROFILE` prints the local engine's table and leaves no
// job behind; SIGTERM while its job waits in the queue cancels it, and so does a
// plain process exit; `basin serve
// --cluster PROFILE` shows the jobs' Dask workers in the workbench's cluster status
// and cancels them when it stops; bad profiles are refused by field.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterStatus } from "../../engine/common/rpc.js";
import { saveProfile, type SlurmProfile } from "../../engine/cluster/profiles.js";
import { openCluster } from "../../engine/cluster/open.js";
import { BASIN_BIN, exited, makeTempDir, printedUrl, removeDir, runBasin, writeText } from "../helpers/cli.js";
import { RpcClient } from "../helpers/rpc_client.js";
import { PYTHON, requireDask } from "./dask_procs.js";
import { startSlurm, until, type Slurm } from "./slurm_procs.js";

const PIPELINE = `import { col, count, fromColumns } from "basin";
const n = 501;
const k = Array.from({ length: n }, (_, i) => (i % 9 === 0 ? null : ["α", "東京", "x"][i % 3]));
const v = Array.from({ length: n }, (_, i) => (i * 31) % 97);
export default fromColumns({ k, v }, { partitions: [0, 250, 1, 250] }).groupBy("k").agg(col("v").sum().alias("s"), count().alias("n")).sort("k");
`;

let slurm: Slurm;
let dir: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  requireDask();
  slurm = await startSlurm(4);
  dir = makeTempDir("basin-slurm-cli-");
  writeText(dir, "p.ts", PIPELINE);
  env = { SLURM_CONF: slurm.conf, BASIN_CONFIG_DIR: `${dir}/config`, BASIN_PYTHON: PYTHON };
  const profile: SlurmProfile = {
    kind: "slurm",
    name: "hpc",
    walltime: "00:10:00",
    cores: 1,
    memory: "400M",
    python: PYTHON,
    jobs: 1,
    directory: slurm.jobs,
    startTimeout: 90,
  };
  saveProfile(profile, `${dir}/config/profiles.json`);
}, 60_000);

afterAll(async () => {
  await slurm?.stop();
  if (dir) removeDir(dir);
});

describe("slurm profiles from the command line", () => {
  it("basin run --cluster PROFILE prints the local engine's table, reports its job, and leaves squeue empty", async () => {
    const onSlurm = await runBasin(["run", "p.ts", "--cluster", "hpc"], { cwd: dir, env, timeoutMs: 120_000 });
    expect(onSlurm.code, onSlurm.stderr).toBe(0);
    const onLocal = await runBasin(["run", "p.ts"], { cwd: dir, env });
    expect(onSlurm.stdout).toBe(onLocal.stdout);
    expect(onSlurm.stderr).toMatch(/SLURM job \d+ submitted \(Dask scheduler and a worker\)/);
    const m = /connected to the Dask scheduler at tcp:\S+ ([\d.]+) s after submitting/.exec(onSlurm.stderr);
    expect(m, onSlurm.stderr).not.toBeNull();
    console.log(
      `basin run on SLURM: ${(onSlurm.ms / 1000).toFixed(2)} s in all, submit → connected ${m![1]} s; local: ${(onLocal.ms / 1000).toFixed(2)} s`,
    );
    expect(slurm.queue()).toEqual([]);
  });

  it("SIGTERM while the job waits in the queue cancels it before the process ends", async () => {
    slurm.command("scontrol", ["update", "PartitionName=debug", "State=DOWN"]);
    const child = spawn(process.execPath, [BASIN_BIN, "run", "p.ts", "--cluster", "hpc"], {
      cwd: dir,
      env: { ...process.env, ...env },
    });
    let err = "";
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    try {
      await until("the job is queued", 30_000, () => slurm.queue().length === 1);
      expect([...slurm.states().values()]).toEqual(["PENDING"]);
      const done = exited(child);
      child.kill("SIGTERM");
      expect(await done, err).toEqual({ code: null, signal: "SIGTERM" });
      await until("squeue is empty", 10_000, () => slurm.queue().length === 0);
    } finally {
      child.kill("SIGKILL");
      slurm.command("scontrol", ["update", "PartitionName=debug", "State=UP"]);
    }
  });

  it("a process that exits without closing its cluster still scancels its jobs", async () => {
    const dist = (f: string) =>
      JSON.stringify(fileURLToPath(new URL(`../../dist/engine/cluster/slurm/${f}`, import.meta.url)));
    const script = writeText(
      dir,
      "exits.mjs",
      `import { SlurmCluster } from ${dist("slurm_cluster.js")};
const c = new SlurmCluster({ spec: { name: "exits", walltime: "00:10:00", cores: 1, memory: "400M", python: ${JSON.stringify(PYTHON)} },
  scale: { jobs: 2 }, directory: ${JSON.stringify(slurm.jobs)}, startTimeout: 90, python: ${JSON.stringify(PYTHON)} });
await c.start();
console.log(c.liveJobs.map((j) => j.id).join(" "));
process.exit(0);
`,
    );
    const child = spawn(process.execPath, [script], { cwd: dir, env: { ...process.env, ...env } });
    let out = "",
      err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    expect((await exited(child)).code, err).toBe(0);
    expect(out.trim().split(" ")).toHaveLength(2);
    // scancel ran before the process went; SLURM ends the jobs right after
    await until("squeue is empty", 10_000, () => slurm.queue().length === 0);
  });

  it("basin serve --cluster PROFILE: the cluster status lists the jobs' Dask workers; stopping it cancels them", async () => {
    const child = spawn(process.execPath, [BASIN_BIN, "serve", dir, "--port", "0", "--cluster", "hpc"], {
      cwd: "/",
      env: { ...process.env, ...env, BASIN_WORKERS: "1" },
    });
    let err = "";
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    try {
      const { url, out } = await printedUrl(child, 90_000);
      expect(out).toMatch(/runs on Dask at SLURM profile hpc \(scheduler tcp:\S+\)/);
      const [job] = slurm.queue();
      const client = await RpcClient.connect(`ws://${url.host}/?token=${url.searchParams.get("token")}`, url.origin);
      const status = await client.call<ClusterStatus>("cluster");
      client.close();
      expect(status.kind).toBe("dask");
      expect(status.workers.map((w) => w.name)).toEqual([`basin-${job}`]);
      expect(status.slurm).toEqual({ jobs: [{ id: job, state: "RUNNING", scheduler: true }] });
      const done = exited(child);
      child.kill("SIGTERM");
      expect((await done).code, err).toBe(0);
      expect(slurm.queue()).toEqual([]);
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("refuses bad slurm profiles by field, and an ssh field naming no ssh profile", async () => {
    const base: SlurmProfile = { kind: "slurm", name: "x", walltime: "01:00:00", cores: 2, memory: "4G" };
    const file = `${dir}/config/bad.json`;
    expect(() => saveProfile({ ...base, jobs: 2, minJobs: 1, maxJobs: 3 }, file)).toThrow(
      /slurm profile "x": give either jobs \(a fixed number\) or minJobs and maxJobs \(adaptive\), not both/,
    );
    expect(() => saveProfile({ ...base, minJobs: 1 }, file)).toThrow(/adaptive scaling needs both minJobs and maxJobs/);
    expect(() => saveProfile({ ...base, minJobs: 3, maxJobs: 2 }, file)).toThrow(
      /minJobs ≤ maxJobs, got \{"minJobs":3,"maxJobs":2\}/,
    );
    expect(() => saveProfile({ ...base, walltime: undefined } as unknown as SlurmProfile, file)).toThrow(
      /needs walltime, cores and memory/,
    );
    expect(() => saveProfile({ ...base, memory: "4 GB" }, file)).toThrow(/memory "4 GB" is not a SLURM size/);
    expect(() => saveProfile({ ...base, idleSeconds: 0 }, file)).toThrow(/idleSeconds must be positive/);
    process.env.BASIN_CONFIG_DIR = `${dir}/config`;
    try {
      saveProfile({ kind: "dask", name: "d", scheduler: "tcp://127.0.0.1:1" });
      await expect(openCluster({ ...base, ssh: "d" })).rejects.toThrow(
        /slurm profile "x": "ssh": "d" names a dask profile; name an ssh profile of the login node/,
      );
      await expect(openCluster({ ...base, ssh: "nope" })).rejects.toThrow(/no cluster profile named "nope"/);
    } finally {
      delete process.env.BASIN_CONFIG_DIR;
    }
  });
});
