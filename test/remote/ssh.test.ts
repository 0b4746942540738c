// SSH to a real OpenSSH server on 127.0.0.1: host keys checked against known_hosts
// (unknown and wrong keys refused, with the fingerprint), commands, a Dask scheduler
// reached through the tunnel, a dropped connection reported, and profiles saved
// without secrets.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { col, count, fromColumns, LocalCluster, type DaskCluster } from "../../engine/api/index.js";
import { openCluster } from "../../engine/cluster/open.js";
import { fingerprint } from "../../engine/cluster/ssh/known_hosts.js";
import { findProfile, loadProfiles, saveProfile, type SshProfile } from "../../engine/cluster/profiles.js";
import { SshSession } from "../../engine/cluster/ssh/ssh_session.js";
import { native } from "../../engine/native/addon.js";
import { expectSameRows, tableRows } from "../helpers/oracle.js";
import { PYTHON, startDask, type DaskProcs } from "./dask_procs.js";
import { dropMidCommand, refused, startSshd, type Sshd } from "./sshd_procs.js";

let sshd: Sshd;
let profile: SshProfile;

beforeAll(async () => {
  sshd = await startSshd();
  profile = {
    kind: "ssh",
    name: "local",
    host: "127.0.0.1",
    port: sshd.port,
    user: process.env.USER ?? "root",
    keyPath: sshd.clientKey,
    knownHosts: sshd.knownHosts,
  };
}, 30_000);

afterAll(async () => {
  await sshd?.stop();
  expect(native().storeStats()).toMatchObject({ handles: 0, buffers: 0 });
});

describe("SSH sessions", () => {
  it("connects with a key, verifying the host key, and runs commands", async () => {
    const ssh = await SshSession.connect(profile);
    try {
      const r = await ssh.exec("echo hello; echo oops >&2; exit 3");
      expect(r).toEqual({ code: 3, stdout: "hello\n", stderr: "oops\n" });
    } finally {
      ssh.close();
    }
  });

  it("refuses an unknown host key, showing its fingerprint", async () => {
    const hostKey = Buffer.from(readFileSync(join(sshd.dir, "host_key.pub"), "utf8").split(" ")[1], "base64");
    const err = await refused(SshSession.connect({ ...profile, knownHosts: join(sshd.dir, "missing_known_hosts") }));
    expect(err.message).toContain(`the host key of [127.0.0.1]:${sshd.port} is not in`);
    expect(err.message).toContain(fingerprint(hostKey));
    expect(err.message).toMatch(/ssh-keyscan -p \d+ 127\.0\.0\.1/);
  });

  it("refuses a host key that differs from known_hosts", async () => {
    const err = await refused(SshSession.connect({ ...profile, knownHosts: sshd.wrongKnownHosts }));
    expect(err.message).toMatch(/differs from the one in .*wrong_known_hosts.*someone is in the middle/);
  });

  it("refuses a key the host does not authorize", async () => {
    const err = await refused(SshSession.connect({ ...profile, keyPath: join(sshd.dir, "other_key") }));
    expect(err.message).toMatch(/profile ".*": cannot connect to .*127\.0\.0\.1.*check the user \(".*"\), the key/);
  });

  it("a passphrase-protected key, a .pub file or no key and no agent: BASIN_IO saying what to do", async () => {
    const locked = join(sshd.dir, "locked_key");
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "secret words", "-f", locked]);
    const encrypted = await refused(SshSession.connect({ ...profile, keyPath: locked }));
    expect(encrypted).toMatchObject({ code: "BASIN_IO" });
    expect(encrypted.message).toContain(`the SSH key ${locked} is protected by a passphrase`);
    expect(encrypted.message).toContain(`ssh-add ${locked}`);
    const pub = await refused(SshSession.connect({ ...profile, keyPath: `${sshd.clientKey}.pub` }));
    expect(pub).toMatchObject({ code: "BASIN_IO" });
    expect(pub.message).toContain(`is not a private SSH key`);
    expect(pub.message).toContain(`(${sshd.clientKey}, without .pub)`);
    const agent = process.env.SSH_AUTH_SOCK;
    delete process.env.SSH_AUTH_SOCK;
    try {
      const none = await refused(SshSession.connect({ ...profile, keyPath: undefined }));
      expect(none.message).toContain("no keyPath and no ssh-agent is running here");
    } finally {
      if (agent !== undefined) process.env.SSH_AUTH_SOCK = agent;
    }
  });

  it("a dropped connection fails the command in flight with a clear error; a new session works", async () => {
    const ssh = await SshSession.connect(profile);
    const { failed, reported } = await dropMidCommand(ssh, sshd);
    expect(failed.message).toMatch(/the SSH connection to .*127\.0\.0\.1:\d+ dropped; reconnect to go on/);
    expect(reported.message).toBe(failed.message);
    const again = await SshSession.connect(profile);
    expect((await again.exec("echo back")).stdout).toBe("back\n");
    again.close();
  });
});

describe("Dask through an SSH tunnel", () => {
  let dask: DaskProcs;
  beforeAll(async () => {
    dask = await startDask(2);
  }, 60_000);
  afterAll(async () => {
    await dask?.stop();
  });

  it("runs a pipeline on a scheduler reached only through the tunnel", async () => {
    const open = await openCluster({ ...profile, scheduler: `tcp://127.0.0.1:${dask.port}` }, { python: PYTHON });
    const cluster = open as DaskCluster;
    expect(open.label).toMatch(/via ssh/);
    const local = new LocalCluster({ workers: 1 });
    try {
      const n = 500;
      const df = fromColumns(
        {
          k: Array.from({ length: n }, (_, i) => (i % 9 === 0 ? null : `k${i % 4}`)),
          v: Array.from({ length: n }, (_, i) => i),
        },
        { partitions: 3 },
      )
        .groupBy("k")
        .agg(col("v").sum().alias("s"), count().alias("n"));
      expectSameRows(
        tableRows(await df.compute({ cluster })),
        tableRows(await df.compute({ cluster: local })),
        "tunnelled Dask",
      );
      expect((await cluster.status()).workers.length).toBe(2);
    } finally {
      await open.close();
      await local.close();
    }
  });

  it("a dropped SSH connection fails the tunnelled run at once, naming the host; the session reconnects and runs again", async () => {
    const open = await openCluster({ ...profile, scheduler: `tcp://127.0.0.1:${dask.port}` }, { python: PYTHON });
    const cluster = open as DaskCluster;
    const local = new LocalCluster({ workers: 1 });
    try {
      const n = 300;
      const df = fromColumns(
        {
          k: Array.from({ length: n }, (_, i) => `k${i % 5}`),
          v: Array.from({ length: n }, (_, i) => (i % 7 === 0 ? null : i)),
        },
        { partitions: [0, 1, n - 1] },
      )
        .groupBy("k")
        .agg(col("v").sum().alias("s"));
      // The bridge is still starting (Python imports) when the connection drops: the run is in flight.
      const t0 = performance.now();
      const running = df.compute({ cluster }).catch((e: Error) => e);
      await new Promise((r) => setTimeout(r, 300));
      sshd.dropConnections();
      const err = (await running) as Error;
      expect(err.message).toMatch(
        new RegExp(
          `the Dask run at tcp://127\\.0\\.0\\.1:${dask.port} on 127\\.0\\.0\\.1 stopped: the SSH connection to .*127\\.0\\.0\\.1:${sshd.port} dropped; this session reconnects by itself`,
        ),
      );
      expect(performance.now() - t0).toBeLessThan(5000);
      const expected = tableRows(await df.compute({ cluster: local }));
      // Reconnected on the same local port: the next run goes through.
      let rows: unknown[][] | undefined;
      for (let i = 0; i < 20 && !rows; i++) {
        rows = await df.compute({ cluster }).then(tableRows, async () => {
          await new Promise((r) => setTimeout(r, 500));
          return undefined;
        });
      }
      expectSameRows(rows ?? [], expected, "after the reconnect");
    } finally {
      await open.close();
      await local.close();
    }
  });
});

describe("profiles", () => {
  it("an ssh profile without a scheduler is refused with what to add", async () => {
    await expect(openCluster(profile)).rejects.toThrow(/ssh profile "local" has no Dask scheduler; add "scheduler"/);
  });

  it("saves profiles privately, finds them by name, and refuses secrets", () => {
    const dir = mkdtempSync(join(tmpdir(), "basin-profiles-"));
    const file = join(dir, "basin", "profiles.json");
    try {
      saveProfile(profile, file);
      saveProfile({ kind: "dask", name: "lab", scheduler: "tcp://10.0.0.5:8786" }, file);
      expect(loadProfiles(file).map((p) => p.name)).toEqual(["local", "lab"]);
      expect(findProfile("local", file)).toEqual(profile);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(() => saveProfile({ ...profile, password: "hunter2" } as SshProfile, file)).toThrow(
        /profiles keep no secrets: give a keyPath or use the ssh-agent/,
      );
      expect(() => findProfile("nope", file)).toThrow(/no cluster profile named "nope" .*saved: local, lab/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
