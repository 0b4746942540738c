// SlurmCluster on a real single-node SLURM (slurmctld, slurmd, munge) started here:
// a pipeline runs on a Basin-submitted allocation with the local engine's answers;
// adaptive scaling adds a job under load and removes it when idle; a job that dies is
// reported and replaced; the scheduler's job dying fails later runs with the reason;
// close() leaves squeue empty; and each way of failing to start
// (job pending forever, job failing, sbatch refusing, sbatch missing) says what and why.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { col, count, fromColumns, LocalCluster } from "../../engine/api/index.js";
import { LocalRunner } from "../../engine/cluster/slurm/command_runner.js";
import { SlurmCluster, type SlurmClusterOptions, type SlurmEvent } from "../../engine/cluster/slurm/slurm_cluster.js";
import type { SlurmJobSpec } from "../../engine/cluster/slurm/batch_script.js";
import { native } from "../../engine/native/addon.js";
import { expectSameRows, tableRows } from "../helpers/oracle.js";
import { PYTHON, requireDask } from "./dask_procs.js";
import { startSlurm, until, type Slurm } from "./slurm_procs.js";

let slurm: Slurm;
let local: LocalCluster;

beforeAll(async () => {
  requireDask();
  slurm = await startSlurm(4);
  local = new LocalCluster({ workers: 1 });
}, 60_000);

afterAll(async () => {
  await local?.close();
  await slurm?.stop();
  expect(native().storeStats()).toMatchObject({ handles: 0, buffers: 0 });
});

const spec = (over: Partial<SlurmJobSpec> = {}): SlurmJobSpec => ({
  name: "t",
  walltime: "00:10:00",
  cores: 1,
  memory: "400M",
  python: PYTHON,
  ...over,
});

function cluster(over: Partial<SlurmClusterOptions> & { events?: SlurmEvent[] } = {}): SlurmCluster {
  return new SlurmCluster({
    spec: spec(),
    runner: new LocalRunner({ SLURM_CONF: slurm.conf }),
    directory: slurm.jobs,
    pollInterval: 0.5,
    startTimeout: 90,
    python: PYTHON,
    onEvent: (e) => over.events?.push(e),
    ...over,
  });
}

const n = 600;
const pipeline = () =>
  fromColumns(
    {
      k: Array.from({ length: n }, (_, i) => (i % 13 === 0 ? null : `κ${i % 4}`)),
      v: Array.from({ length: n }, (_, i) => (i % 7 === 0 ? null : i)),
    },
    { partitions: [0, 1, n - 1] },
  )
    .filter(col("v").gt(5))
    .groupBy("k")
    .agg(col("v").sum().alias("s"), count().alias("n"), col("v").mean().alias("m"));

describe("a Dask cluster in SLURM jobs", () => {
  it("runs a pipeline on a Basin-submitted allocation with the local engine's answers; reports a dead job without replacing it; close() leaves squeue empty", async () => {
    const events: SlurmEvent[] = [];
    const c = cluster({ scale: { jobs: 2 }, events });
    const scripts = await c.scripts();
    expect(scripts.scheduler).toContain("dask_scheduler --scheduler-file");
    expect(scripts.worker).not.toContain("dask_scheduler");
    try {
      const seconds = await c.start();
      console.log(`submit → connected: ${seconds.toFixed(2)} s`);
      const ids = events.filter((e) => e.type === "submitted").map((e) => (e as { jobId: string }).jobId);
      expect(ids).toHaveLength(2);
      expect(slurm.queue().sort()).toEqual([...ids].sort());
      await until("both jobs' workers joined", 60_000, async () => (await c.dask.status()).workers.length === 2);
      expect((await c.dask.status()).workers.map((w) => w.name).sort()).toEqual(ids.map((id) => `basin-${id}`).sort());
      expectSameRows(
        tableRows(await pipeline().compute({ cluster: c.dask })),
        tableRows(await pipeline().compute({ cluster: local })),
        "SLURM vs local",
      );
      // A fixed-size cluster reports a job that dies, and does not replace it.
      slurm.command("scancel", [ids[1]]);
      await until("the dead job was reported", 30_000, () => events.some((e) => e.type === "jobEnded"));
      expect(events.find((e) => e.type === "jobEnded")).toMatchObject({
        jobId: ids[1],
        state: "CANCELLED",
        replaced: false,
        message: expect.stringMatching(
          /this fixed-size cluster goes on with one job less \(reconnect for a full one, or use minJobs\/maxJobs/,
        ),
      });
      expect(c.liveJobs.map((j) => j.id)).toEqual([ids[0]]);
      expect(events.filter((e) => e.type === "submitted")).toHaveLength(2);
    } finally {
      await c.close();
    }
    expect(slurm.queue()).toEqual([]);
    expect(existsSync(await c.directory())).toBe(false);
  });

  it("adaptive: adds a job when tasks queue beyond the workers' threads, and removes it once idle", async () => {
    const events: SlurmEvent[] = [];
    const c = cluster({ scale: { minJobs: 1, maxJobs: 2, idleSeconds: 2 }, events });
    try {
      await c.start();
      expect(c.liveJobs).toHaveLength(1);
      const first = c.liveJobs[0].id;
      // Real load on the real scheduler: 16 one-second tasks for one thread (long enough for a second worker to start on a busy machine).
      const load = spawn(
        PYTHON,
        [
          "-c",
          `import distributed, time
c = distributed.Client(${JSON.stringify(c.dask.address)}, timeout=30)
c.gather(c.map(time.sleep, [1.0] * 16, pure=False))
c.close()`,
        ],
        { stdio: ["ignore", "ignore", "pipe"] },
      );
      let loadErr = "";
      load.stderr.on("data", (d: Buffer) => (loadErr += d.toString()));
      const loadDone = new Promise<number | null>((r) => load.once("exit", r));
      await until("a second job was submitted under load", 30_000, () => c.liveJobs.length === 2);
      const added = c.liveJobs.find((j) => j.id !== first)!.id;
      expect(slurm.queue()).toContain(added);
      await until("the added job's worker joined", 60_000, async () =>
        (await c.dask.status()).workers.some((w) => w.name === `basin-${added}`),
      );
      expect(await loadDone, loadErr).toBe(0);
      await until("the idle job was removed", 60_000, () =>
        events.some((e) => e.type === "removed" && e.jobId === added),
      );
      await until("squeue no longer lists it", 20_000, () => !slurm.queue().includes(added));
      expect(c.liveJobs.map((j) => j.id)).toEqual([first]);
      expect(slurm.queue()).toEqual([first]);
      // A removal is not a death: nothing was reported as ended
      expect(events.filter((e) => e.type === "jobEnded")).toEqual([]);
    } finally {
      await c.close();
    }
    expect(slurm.queue()).toEqual([]);
  });

  it("adaptive: a job that dies (scancel) is reported with its state and replaced", async () => {
    const events: SlurmEvent[] = [];
    const c = cluster({ scale: { minJobs: 2, maxJobs: 2, idleSeconds: 600 }, events });
    try {
      await c.start();
      await until("both workers joined", 60_000, async () => (await c.dask.status()).workers.length === 2);
      const victim = c.liveJobs.find((j) => !j.scheduler)!.id;
      slurm.command("scancel", [victim]);
      await until("the dead job was reported", 30_000, () => events.some((e) => e.type === "jobEnded"));
      const ended = events.find((e) => e.type === "jobEnded") as Extract<SlurmEvent, { type: "jobEnded" }>;
      expect(ended).toMatchObject({ jobId: victim, state: "CANCELLED", replaced: true });
      expect(ended.message).toMatch(
        new RegExp(`SLURM job ${victim} of profile "t" ended \\(CANCELLED.*\\); a new job replaces it`),
      );
      await until(
        "a replacement was submitted",
        30_000,
        () => c.liveJobs.length === 2 && !c.liveJobs.some((j) => j.id === victim),
      );
      const replacement = c.liveJobs.find((j) => !j.scheduler)!.id;
      await until("the replacement's worker joined", 60_000, async () =>
        (await c.dask.status()).workers.some((w) => w.name === `basin-${replacement}`),
      );
      expectSameRows(
        tableRows(await pipeline().compute({ cluster: c.dask })),
        tableRows(await pipeline().compute({ cluster: local })),
        "after replacement",
      );
    } finally {
      await c.close();
    }
    expect(slurm.queue()).toEqual([]);
  });

  it("the scheduler's job ending is reported as the cluster lost, and later runs fail saying so", async () => {
    const events: SlurmEvent[] = [];
    const c = cluster({ scale: { minJobs: 1, maxJobs: 2 }, events });
    try {
      await c.start();
      const [job] = c.liveJobs;
      slurm.command("scancel", [job.id]);
      await until("the loss was reported", 30_000, () => events.some((e) => e.type === "lost"));
      const lost = new RegExp(
        `SLURM job ${job.id} of profile "t" ended \\(CANCELLED.*\\); it ran the Dask scheduler, so this cluster is gone: reconnect to start a new one`,
      );
      expect(c.lost?.message).toMatch(lost);
      await expect(pipeline().compute({ cluster: c.dask })).rejects.toThrow(lost);
      // no job was submitted to replace it: a new cluster is the user's call
      expect(events.filter((e) => e.type === "submitted")).toHaveLength(1);
    } finally {
      await c.close();
    }
    expect(slurm.queue()).toEqual([]);
  });
});

describe("a SLURM cluster that cannot start says what failed and what to do", () => {
  it("a job pending past the start timeout: names the job, its state and reason, and cancels it", async () => {
    slurm.command("scontrol", ["update", "PartitionName=debug", "State=DOWN"]);
    try {
      const c = cluster({ startTimeout: 2 });
      await expect(c.start()).rejects.toThrow(
        /SLURM job \d+ \(the Dask scheduler of profile "t"\) is still PENDING \(PartitionDown\) after 2 s; the job was cancelled\. Check the partition and the queue \(squeue -j \d+\)/,
      );
      expect(slurm.queue()).toEqual([]);
    } finally {
      slurm.command("scontrol", ["update", "PartitionName=debug", "State=UP"]);
    }
  });

  it("a job that fails before its scheduler starts: gives its state and the tail of its log, which is kept", async () => {
    const c = cluster({ spec: spec({ python: "/opt/no-such/python3" }) });
    const err = (await c.start().catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(
      /SLURM job \d+ \(the Dask scheduler of profile "t"\) ended \(FAILED.*\) before its scheduler started; its log \S+basin-t-\d+\.log \(kept\) ends with:\n[^]*\/opt\/no-such\/python3[^]*Fix the profile \(python, modules, conda\)/,
    );
    expect(slurm.queue()).toEqual([]);
    const log = /its log (\S+\.log) \(kept\)/.exec(err.message)![1]!;
    expect(readFileSync(log, "utf8")).toContain("/opt/no-such/python3");
  });

  it("sbatch refusing the job: passes on SLURM's reason and names the fields to check", async () => {
    const c = cluster({ spec: spec({ memory: "64G" }) });
    await expect(c.start()).rejects.toThrow(
      /sbatch refused \S+scheduler\.sh on this machine: .*(memory|node configuration).*; check the profile's partition, account, cores, memory and walltime/i,
    );
    expect(slurm.queue()).toEqual([]);
  });

  it("no sbatch on the PATH: says to install the SLURM client", async () => {
    const c = cluster({ runner: new LocalRunner({ SLURM_CONF: slurm.conf, PATH: "/nonexistent" }) });
    await expect(c.start()).rejects.toThrow(
      /sbatch is not found on this machine; install the SLURM client there \(Debian: slurm-client\)/,
    );
  });
});
