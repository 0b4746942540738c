// Jump hosts over two real OpenSSH servers on 127.0.0.1 (different ports, different
// host keys): the target is reached through the first one's forwarded channel, both
// host keys are checked, a wrong or unknown jump-host key is refused like a target's,
// an unreachable or silent jump host fails within the bound naming it, and the
// remote Basin engine and tunnelled Dask ride on the jump host as they do directly.
import { readFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { col, count, fromColumns } from "../../engine/api/index.js";
import { fingerprint } from "../../engine/cluster/ssh/known_hosts.js";
import { openCluster } from "../../engine/cluster/open.js";
import { jumpChain, saveProfile, type Profile, type SshProfile } from "../../engine/cluster/profiles.js";
import { RemoteEngine } from "../../engine/cluster/remote/remote_engine.js";
import { SshSession } from "../../engine/cluster/ssh/ssh_session.js";
import { BASIN_BIN, makeTempDir, removeDir, writeText } from "../helpers/cli.js";
import { expectSameRows, tableRows } from "../helpers/oracle.js";
import { daskFixture, freePort, PYTHON } from "./dask_procs.js";
import { dropMidCommand, refused, startSshd, type Sshd } from "./sshd_procs.js";

let bastion: Sshd;
let target: Sshd;
let configDir: string;
let workspace: string;
let jump: SshProfile;
let box: SshProfile;
const user = process.env.USER ?? "root";

const hostKey = (s: Sshd) => Buffer.from(readFileSync(join(s.dir, "host_key.pub"), "utf8").split(" ")[1], "base64");

/** Milliseconds `f` took, and its value. */
async function timed<T>(f: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await f();
  return { ms: Math.round(performance.now() - t0), value };
}

beforeAll(async () => {
  [bastion, target] = await Promise.all([startSshd(), startSshd()]);
  configDir = makeTempDir("basin-jump-config-");
  workspace = makeTempDir("basin-jump-ws-");
  writeText(workspace, "numbers.csv", "n\n1\n2\n3\n");
  process.env.BASIN_CONFIG_DIR = configDir;
  jump = {
    kind: "ssh",
    name: "bastion",
    host: "127.0.0.1",
    port: bastion.port,
    user,
    keyPath: bastion.clientKey,
    knownHosts: bastion.knownHosts,
  };
  box = {
    kind: "ssh",
    name: "box",
    host: "127.0.0.1",
    port: target.port,
    user,
    keyPath: target.clientKey,
    knownHosts: target.knownHosts,
    jump: "bastion",
    basin: `BASIN_WORKERS=1 ${process.execPath} ${BASIN_BIN}`,
    workspace,
  };
  saveProfile(jump);
  saveProfile(box);
}, 30_000);

afterAll(async () => {
  const engine = await RemoteEngine.connect(box, { reconnect: false }).catch(() => undefined);
  await engine?.stopRemote();
  await bastion?.stop();
  await target?.stop();
  removeDir(configDir);
  removeDir(workspace);
  delete process.env.BASIN_CONFIG_DIR;
}, 60_000);

describe("SSH through a jump host", () => {
  it("reaches the target through the jump host, checking both host keys, and runs commands there", async () => {
    const direct = await timed(() => SshSession.connect({ ...box, jump: undefined }));
    direct.value.close();
    const { ms, value: ssh } = await timed(() => SshSession.connect(box));
    try {
      expect(ssh.where).toBe(`${user}@127.0.0.1:${target.port} via ${user}@127.0.0.1:${bastion.port}`);
      expect(await ssh.exec("echo hello from the target")).toEqual({
        code: 0,
        stdout: "hello from the target\n",
        stderr: "",
      });
      console.info(`connect: direct ${direct.ms} ms, through the jump host ${ms} ms`);
    } finally {
      ssh.close();
    }
  });

  it("the session rides on the jump host: dropping the jump host's connections drops it, naming both hops", async () => {
    const ssh = await SshSession.connect(box);
    const { failed, reported } = await dropMidCommand(ssh, bastion);
    expect(failed.message).toBe(
      `the SSH connection to ${user}@127.0.0.1:${target.port} via ${user}@127.0.0.1:${bastion.port} dropped; reconnect to go on`,
    );
    expect(reported.message).toBe(failed.message);
  });

  it("refuses an unknown jump-host key with the target's message, naming the jump host and its fingerprint", async () => {
    const profiles: Profile[] = [{ ...jump, knownHosts: join(bastion.dir, "missing_known_hosts") }, box];
    const err = await refused(SshSession.connect(box, { profiles }));
    expect(err.message).toMatch(
      new RegExp(
        `^jump host ${user}@127\\.0\\.0\\.1:${bastion.port} \\(on the way to ${user}@127\\.0\\.0\\.1:${target.port}\\): the host key of \\[127\\.0\\.0\\.1\\]:${bastion.port} is not in .*missing_known_hosts`,
      ),
    );
    expect(err.message).toContain(fingerprint(hostKey(bastion)));
    expect(err.message).toContain(`ssh-keyscan -p ${bastion.port} 127.0.0.1`);
  });

  it("refuses a jump-host key that differs from known_hosts", async () => {
    const err = await refused(
      SshSession.connect(box, { profiles: [{ ...jump, knownHosts: bastion.wrongKnownHosts }, box] }),
    );
    expect(err.message).toMatch(
      /^jump host .*: the host key of .* differs from the one in .*wrong_known_hosts.*someone is in the middle/,
    );
  });

  it("checks the target's key too when reached through the jump host", async () => {
    const err = await refused(SshSession.connect({ ...box, knownHosts: target.wrongKnownHosts }));
    expect(err.message).toMatch(
      new RegExp(
        `^${user}@127\\.0\\.0\\.1:${target.port} through jump host ${user}@127\\.0\\.0\\.1:${bastion.port}: the host key of \\[127\\.0\\.0\\.1\\]:${target.port} differs`,
      ),
    );
    expect(err.message).toContain(fingerprint(hostKey(target)));
  });

  it("an unreachable jump host fails at once, naming it", async () => {
    const closed = await freePort();
    const { ms, value: err } = await timed(() =>
      refused(SshSession.connect(box, { profiles: [{ ...jump, port: closed }, box], timeoutMs: 3000 })),
    );
    expect(err.message).toMatch(
      new RegExp(
        `^jump host ${user}@127\\.0\\.0\\.1:${closed} \\(on the way to .*\\): profile "bastion": cannot connect to ${user}@127\\.0\\.0\\.1:${closed}: .*ECONNREFUSED`,
      ),
    );
    expect(err.message).toContain(
      `nothing accepts connections at 127.0.0.1:${closed}: check the profile's host and port`,
    );
    expect(ms).toBeLessThan(3000);
  });

  it("a jump host that accepts but never speaks SSH fails within the timeout, naming it", async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((s) => sockets.add(s));
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", () => r()));
    const port = (silent.address() as { port: number }).port;
    try {
      const { ms, value: err } = await timed(() =>
        refused(SshSession.connect(box, { profiles: [{ ...jump, port }, box], timeoutMs: 1500 })),
      );
      expect(err.message).toMatch(
        new RegExp(
          `^jump host ${user}@127\\.0\\.0\\.1:${port} .*: profile "bastion": cannot connect to .*: Timed out while waiting for handshake`,
        ),
      );
      expect(err.message).toContain("took the connection but did not answer as an SSH server");
      expect(ms).toBeGreaterThanOrEqual(1400);
      expect(ms).toBeLessThan(3000);
      console.info(`silent jump host refused after ${ms} ms (timeout 1500 ms)`);
    } finally {
      for (const s of sockets) s.destroy();
      silent.close();
    }
  });

  it("a jump host that cannot reach the target says so, naming both", async () => {
    const closed = await freePort();
    const err = await refused(SshSession.connect({ ...box, port: closed }));
    expect(err.message).toMatch(
      new RegExp(
        `^jump host ${user}@127\\.0\\.0\\.1:${bastion.port} cannot open a connection to 127\\.0\\.0\\.1:${closed}: .*check "host" and "port" of profile "box"`,
      ),
    );
  });

  it("a jump that names no ssh profile, or loops, is refused before connecting", () => {
    expect(() => jumpChain({ ...box, jump: "nope" }, [jump])).toThrow(
      /ssh profile "box": its jump host profile "nope" is not saved/,
    );
    expect(() => jumpChain(box, [{ ...jump, jump: "box" }, box])).toThrow(
      /its jump hosts loop \(box → bastion → box\)/,
    );
    expect(() => jumpChain(box, [{ kind: "dask", name: "bastion", scheduler: "tcp://h:1" }])).toThrow(
      /names a dask profile/,
    );
    expect(
      jumpChain(box, [
        { ...jump, jump: "outer" },
        { ...jump, name: "outer" },
      ]).map((p) => p.name),
    ).toEqual(["outer", "bastion"]);
  });
});

describe("what rides on the jump host", () => {
  it("the remote Basin engine: started through the jump host, it lists and runs the host's workspace", async () => {
    const { ms, value: engine } = await timed(() => RemoteEngine.connect(box, { reconnect: false }));
    try {
      const ws = await engine.workspace();
      expect(ws).toEqual({ root: workspace, files: ["numbers.csv"], host: `${user}@127.0.0.1:${target.port}` });
      const run = await engine.runToEnd(
        "p.ts",
        `import { readCsv, col } from "basin";\nexport default readCsv("numbers.csv").agg(col("n").sum().alias("s"));\n`,
      );
      expect((await engine.page(run.result.id, 0, 10)).values).toEqual([[6]]);
      console.info(`remote engine through the jump host: ${engine.engineWas} in ${ms} ms`);
    } finally {
      engine.close();
    }
  }, 60_000);

  describe("tunnelled Dask", () => {
    const fx = daskFixture(1);

    it("runs a pipeline on a scheduler reached through the jump host's tunnel", async () => {
      const open = await openCluster({ ...box, scheduler: `tcp://127.0.0.1:${fx.procs.port}` }, { python: PYTHON });
      try {
        expect(open.label).toMatch(/via ssh/);
        const df = fromColumns(
          { k: Array.from({ length: 200 }, (_, i) => `k${i % 3}`), v: Array.from({ length: 200 }, (_, i) => i) },
          { partitions: 2 },
        )
          .groupBy("k")
          .agg(col("v").sum().alias("s"), count().alias("n"));
        expectSameRows(
          tableRows(await df.compute({ cluster: open })),
          tableRows(await df.compute({ cluster: fx.local })),
          "Dask through the jump host",
        );
      } finally {
        await open.close();
      }
    }, 60_000);
  });
});
