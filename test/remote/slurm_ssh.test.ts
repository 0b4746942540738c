// A slurm profile whose sbatch runs on a login node over SSH (a real sshd and a real
// single-node SLURM on 127.0.0.1): the jobs are submitted through the ssh2 session,
// the scheduler is reached through its tunnel, a pipeline gives the local engine's
// answers, and closing cancels the jobs.
import { mkdirSync, symlinkSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalCluster, col, count, fromColumns } from "../../engine/api/index.js";
import { openCluster } from "../../engine/cluster/open.js";
import type { SlurmCluster } from "../../engine/cluster/slurm/slurm_cluster.js";
import { saveProfile, type SlurmProfile } from "../../engine/cluster/profiles.js";
import { native } from "../../engine/native/addon.js";
import { makeTempDir, removeDir } from "../helpers/cli.js";
import { expectSameRows, tableRows } from "../helpers/oracle.js";
import { PYTHON, requireDask } from "./dask_procs.js";
import { startSlurm, type Slurm } from "./slurm_procs.js";
import { startSshd, type Sshd } from "./sshd_procs.js";

let slurm: Slurm;
let sshd: Sshd;
let dir: string;
let local: LocalCluster;
const saved = process.env.BASIN_CONFIG_DIR;

beforeAll(async () => {
  requireDask();
  slurm = await startSlurm(4);
  // The login node's shell finds this SLURM as a real login node finds its own.
  sshd = await startSshd([`SetEnv SLURM_CONF=${slurm.conf}`]);
  dir = makeTempDir("basin-slurm-ssh-");
  mkdirSync(`${dir}/config`);
  process.env.BASIN_CONFIG_DIR = `${dir}/config`;
  saveProfile({
    kind: "ssh",
    name: "login",
    host: "127.0.0.1",
    port: sshd.port,
    user: "root",
    keyPath: sshd.clientKey,
    knownHosts: sshd.knownHosts,
  });
  local = new LocalCluster({ workers: 1 });
}, 60_000);

afterAll(async () => {
  process.env.BASIN_CONFIG_DIR = saved;
  if (saved === undefined) delete process.env.BASIN_CONFIG_DIR;
  await local?.close();
  await sshd?.stop();
  await slurm?.stop();
  if (dir) removeDir(dir);
  expect(native().storeStats()).toMatchObject({ handles: 0, buffers: 0 });
});

describe("SLURM on a login node over SSH", () => {
  it("submits over the SSH session, runs a pipeline through the tunnel with the local engine's answers, and cancels on close", async () => {
    const profile: SlurmProfile = {
      kind: "slurm",
      name: "hpc-ssh",
      ssh: "login",
      walltime: "00:10:00",
      cores: 1,
      memory: "400M",
      python: PYTHON,
      jobs: 2,
      directory: slurm.jobs,
      startTimeout: 90,
    };
    const lines: string[] = [];
    const t0 = performance.now();
    const open = await openCluster(profile, { python: PYTHON, log: (l) => lines.push(l) });
    try {
      console.log(`over ssh: submit → connected ${((performance.now() - t0) / 1000).toFixed(2)} s`);
      expect(open.label).toMatch(
        /^SLURM profile hpc-ssh \(scheduler tcp:\/\/127\.0\.0\.1:\d+ via ssh root@127\.0\.0\.1:\d+\)$/,
      );
      const ids = (open as SlurmCluster).liveJobs.map((j) => j.id);
      expect(ids).toHaveLength(2);
      expect(slurm.queue().sort()).toEqual([...ids].sort());
      expect(lines.filter((l) => /^SLURM job \d+ submitted/.test(l))).toHaveLength(2);
      const n = 300;
      const df = fromColumns(
        {
          k: Array.from({ length: n }, (_, i) => (i % 5 === 0 ? null : `k${i % 3}`)),
          v: Array.from({ length: n }, (_, i) => i),
        },
        { partitions: [0, 150, 150] },
      )
        .groupBy("k")
        .agg(col("v").sum().alias("s"), count().alias("n"));
      expectSameRows(
        tableRows(await df.compute({ cluster: open })),
        tableRows(await df.compute({ cluster: local })),
        "SLURM over SSH vs local",
      );
    } finally {
      await open.close();
    }
    expect(slurm.queue()).toEqual([]);
  });

  it("reaches the login node through a jump host: submits, runs through the tunnel, and cancels on close", async () => {
    const bastion = await startSshd();
    try {
      saveProfile({
        kind: "ssh",
        name: "bastion",
        host: "127.0.0.1",
        port: bastion.port,
        user: "root",
        keyPath: bastion.clientKey,
        knownHosts: bastion.knownHosts,
      });
      saveProfile({
        kind: "ssh",
        name: "login-via",
        host: "127.0.0.1",
        port: sshd.port,
        user: "root",
        keyPath: sshd.clientKey,
        knownHosts: sshd.knownHosts,
        jump: "bastion",
      });
      const profile: SlurmProfile = {
        kind: "slurm",
        name: "hpc-jump",
        ssh: "login-via",
        walltime: "00:10:00",
        cores: 1,
        memory: "400M",
        python: PYTHON,
        jobs: 1,
        directory: slurm.jobs,
        startTimeout: 90,
      };
      const open = await openCluster(profile, { python: PYTHON });
      try {
        expect(open.label).toMatch(
          new RegExp(`via ssh root@127\\.0\\.0\\.1:${sshd.port} via root@127\\.0\\.0\\.1:${bastion.port}\\)$`),
        );
        expect(slurm.queue()).toEqual((open as SlurmCluster).liveJobs.map((j) => j.id));
        const df = fromColumns({ k: ["a", "b", "a", null], v: [1, 2, 3, 4] })
          .groupBy("k")
          .agg(col("v").sum().alias("s"));
        expectSameRows(
          tableRows(await df.compute({ cluster: open })),
          tableRows(await df.compute({ cluster: local })),
          "SLURM through a jump host vs local",
        );
      } finally {
        await open.close();
      }
      expect(slurm.queue()).toEqual([]);
    } finally {
      await bastion.stop();
    }
  });

  it("a login node without sbatch: says so, naming the host", async () => {
    // A PATH with the shell tools Basin uses, but no SLURM client.
    mkdirSync(`${dir}/bin`);
    for (const tool of ["mkdir", "chmod", "cat", "rm"]) symlinkSync(`/usr/bin/${tool}`, `${dir}/bin/${tool}`);
    await sshd.stop();
    sshd = await startSshd([`SetEnv PATH=${dir}/bin SLURM_CONF=${slurm.conf}`]);
    saveProfile({
      kind: "ssh",
      name: "bare",
      host: "127.0.0.1",
      port: sshd.port,
      user: "root",
      keyPath: sshd.clientKey,
      knownHosts: sshd.knownHosts,
    });
    const profile: SlurmProfile = {
      kind: "slurm",
      name: "x",
      ssh: "bare",
      walltime: "00:10:00",
      cores: 1,
      memory: "400M",
      directory: `${dir}/jobs`,
    };
    await expect(openCluster(profile)).rejects.toThrow(
      /sbatch is not found on root@127\.0\.0\.1; install the SLURM client there/,
    );
  });
});
