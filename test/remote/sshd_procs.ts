// An OpenSSH server on 127.0.0.1 for the tests (recipe: shared notes/test-infra.md):
// its own host key, a client key in authorized_keys, a known_hosts file with the right
// key and one with a wrong key; stopped by PID.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SshSession } from "../../engine/cluster/ssh/ssh_session.js";
import { freePort } from "./dask_procs.js";

/** The error a connection attempt fails with (a session that opens fails the test). */
export async function refused(attempt: Promise<SshSession>): Promise<Error> {
  const r = await attempt.catch((e: Error) => e);
  if (r instanceof SshSession) {
    r.close();
    throw new Error("the connection was accepted");
  }
  return r;
}

export function requireSshd(): void {
  if (!existsSync("/usr/sbin/sshd") || !existsSync("/usr/bin/ssh-keygen"))
    throw new Error(
      "the SSH tests need Debian's openssh-server: apt-get install -y openssh-server (.ci/run does this)",
    );
}

/**
 * Runs a long command on `ssh` and drops `sshd`'s connections while it runs: the
 * error the command failed with, and the one whenDropped reported.
 */
export async function dropMidCommand(ssh: SshSession, sshd: Sshd): Promise<{ failed: Error; reported: Error }> {
  const reported = new Promise<Error>((r) => ssh.whenDropped(r));
  const running = ssh.exec("sleep 20").catch((e: Error) => e);
  await new Promise((r) => setTimeout(r, 300));
  sshd.dropConnections();
  return { failed: (await running) as Error, reported: await reported };
}

export interface Sshd {
  port: number;
  dir: string;
  clientKey: string;
  knownHosts: string;
  wrongKnownHosts: string;
  proc: ChildProcess;
  /** Kills the per-connection sshd processes: every open connection drops. */
  dropConnections(): void;
  stop(): Promise<void>;
}

/** `extraConfig`: more sshd_config lines (e.g. `SetEnv SLURM_CONF=...` for the sessions' commands). */
export async function startSshd(extraConfig: string[] = []): Promise<Sshd> {
  requireSshd();
  const dir = mkdtempSync(join(tmpdir(), "basin-sshd-"));
  mkdirSync("/run/sshd", { recursive: true });
  for (const k of ["host_key", "client_key", "other_key"])
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", join(dir, k)]);
  writeFileSync(join(dir, "authorized_keys"), readFileSync(join(dir, "client_key.pub")), { mode: 0o600 });
  const port = await freePort();
  writeFileSync(
    join(dir, "sshd_config"),
    [
      `Port ${port}`,
      "ListenAddress 127.0.0.1",
      `HostKey ${dir}/host_key`,
      `PidFile ${dir}/sshd.pid`,
      `AuthorizedKeysFile ${dir}/authorized_keys`,
      "PermitRootLogin prohibit-password",
      "PubkeyAuthentication yes",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "UsePAM no",
      "StrictModes no",
      "AllowTcpForwarding yes",
      "X11Forwarding no",
      "ClientAliveInterval 2",
      ...extraConfig,
    ].join("\n") + "\n",
  );
  const line = (pub: string) =>
    `[127.0.0.1]:${port} ${readFileSync(join(dir, pub), "utf8").trim().split(" ").slice(0, 2).join(" ")}\n`;
  writeFileSync(join(dir, "known_hosts"), line("host_key.pub"));
  writeFileSync(join(dir, "wrong_known_hosts"), line("other_key.pub"));
  const proc = spawn("/usr/sbin/sshd", ["-D", "-e", "-f", join(dir, "sshd_config")], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  proc.stderr?.on("data", (d: Buffer) => (log += d.toString()));
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`sshd did not start in 10 s:\n${log}`)), 10_000);
    const poll = setInterval(() => {
      if (/Server listening/.test(log)) {
        clearInterval(poll);
        clearTimeout(t);
        resolve();
      }
    }, 50);
    proc.once("exit", (c) => {
      clearInterval(poll);
      clearTimeout(t);
      reject(new Error(`sshd exited with ${c}:\n${log}`));
    });
  });
  const children = (): number[] => {
    try {
      return execFileSync("ps", ["-o", "pid=", "--ppid", String(proc.pid)], { encoding: "utf8" })
        .split("\n")
        .map(Number)
        .filter((n) => n > 0);
    } catch {
      return [];
    }
  };
  const dropConnections = (): void => {
    for (const pid of children()) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // it ended on its own meanwhile (a connection closing)
      }
    }
  };
  return {
    port,
    dir,
    proc,
    dropConnections,
    clientKey: join(dir, "client_key"),
    knownHosts: join(dir, "known_hosts"),
    wrongKnownHosts: join(dir, "wrong_known_hosts"),
    async stop() {
      dropConnections();
      if (proc.exitCode === null) {
        const gone = new Promise((r) => proc.once("exit", r));
        proc.kill("SIGTERM");
        await gone;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
