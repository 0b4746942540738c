// One SSH connection (ssh2, pure JS) to a remote host, directly or through jump
// hosts (each hop's channel is the next hop's socket): every host key verified
// against known_hosts, key file or ssh-agent auth, commands, and local TCP tunnels.
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { createServer, type Server, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { Client, type ClientChannel } from "ssh2";
import { BasinError } from "../../common/errors.js";
import { checkHostKey, knownHostName, type HostKeyVerdict } from "./known_hosts.js";
import { jumpChain, type Profile, type SshProfile } from "../profiles.js";

export interface Tunnel {
  /** The local port that leads to the remote address. */
  port: number;
  close(): Promise<void>;
}

export interface ExecResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** "user@host:port", for messages. */
export function sshAddress(p: SshProfile): string {
  return `${p.user}@${p.host}:${p.port ?? 22}`;
}

export interface SshConnectOptions {
  /** Bound on the whole connection, every jump host included. Default 10 s. */
  timeoutMs?: number;
  /** Where a `jump` profile name is looked up (default: the saved profiles). */
  profiles?: readonly Profile[];
}

/** A client's settings that do not depend on the hop. */
const KEEPALIVE = { keepaliveInterval: 2000, keepaliveCountMax: 3 };

/**
 * Logs in to one hop: over `sock` (a channel forwarded by the previous hop) or
 * directly. `role` prefixes every error ("jump host user@h:22 (to reach …): ")
 * so a refused key or an unreachable host says which hop it was.
 */
function connectHop(hop: SshProfile, sock: Duplex | undefined, timeoutMs: number, role: string): Promise<Client> {
  const port = hop.port ?? 22;
  const knownHosts = hop.knownHosts ?? join(homedir(), ".ssh", "known_hosts");
  let verdict: HostKeyVerdict = { ok: true };
  return new Promise((resolve, reject) => {
    const client = new Client();
    let settled = false;
    client.once("ready", () => {
      settled = true;
      resolve(client);
    });
    // Later errors (a dropped socket after a failure, or once connected) end in "close", which SshSession reports.
    client.on("error", (e: Error & { level?: string }) => {
      if (settled) return;
      settled = true;
      client.destroy();
      if (!verdict.ok) {
        const what =
          verdict.reason === "unknown"
            ? `the host key of ${knownHostName(hop.host, port)} is not in ${knownHosts}`
            : `the host key of ${knownHostName(hop.host, port)} differs from the one in ${knownHosts} (it may have been reinstalled, or someone is in the middle)`;
        reject(
          new BasinError(
            "BASIN_IO",
            `${role}${what}; it offered ${verdict.fingerprint}. Check that fingerprint with the host's administrator, then add the key to known_hosts (ssh-keyscan -p ${port} ${hop.host})`,
          ),
        );
        return;
      }
      const hint =
        e.level !== "client-authentication"
          ? networkHint(e, hop, timeoutMs)
          : !hop.keyPath && !process.env.SSH_AUTH_SOCK
            ? `; the profile has no keyPath and no ssh-agent is running here (SSH_AUTH_SOCK is not set): give the profile a keyPath, or start an agent and ssh-add the key`
            : `; check the user ("${hop.user}"), the key (${hop.keyPath ?? "ssh-agent"}) and that the key is in that user's authorized_keys on the host`;
      reject(
        new BasinError(
          "BASIN_IO",
          `${role}profile "${hop.name}": cannot connect to ${sshAddress(hop)}: ${e.message}${hint}`,
        ),
      );
    });
    let privateKey: Buffer | undefined;
    if (hop.keyPath) {
      try {
        privateKey = readFileSync(hop.keyPath);
      } catch (e) {
        settled = true;
        reject(new BasinError("BASIN_IO", `${role}cannot read the SSH key ${hop.keyPath}: ${(e as Error).message}`));
        return;
      }
    }
    const unusable = (e: unknown) => {
      settled = true;
      client.destroy();
      reject(keyError(role, hop.keyPath ?? "", e));
    };
    // ssh2 refuses a key it cannot use by throwing here, before any connection.
    try {
      client.connect({
        ...(sock ? { sock } : { host: hop.host, port }),
        username: hop.user,
        privateKey,
        agent: privateKey ? undefined : process.env.SSH_AUTH_SOCK,
        readyTimeout: Math.max(1, timeoutMs),
        ...KEEPALIVE,
        hostVerifier: (key: Buffer) => {
          verdict = checkHostKey(knownHosts, hop.host, port, key);
          return verdict.ok;
        },
      });
    } catch (e) {
      unusable(e);
    }
  });
}

/** What a connection that failed before any login likely means, and what to check. */
function networkHint(e: Error & { code?: string }, hop: SshProfile, timeoutMs: number): string {
  const at = `${hop.host}:${hop.port ?? 22}`;
  const check = `check the profile's host and port (try ssh -p ${hop.port ?? 22} ${hop.user}@${hop.host})`;
  if (e.code === "ECONNREFUSED") return `; nothing accepts connections at ${at}: ${check}, and that sshd runs there`;
  if (e.code === "ENOTFOUND" || e.code === "EAI_AGAIN") return `; the name ${hop.host} does not resolve here: ${check}`;
  if (e.code === "EHOSTUNREACH" || e.code === "ENETUNREACH" || e.code === "ETIMEDOUT")
    return `; ${at} cannot be reached from here (network, VPN or firewall): ${check}`;
  if (/handshake/i.test(e.message))
    return `; ${at} took the connection but did not answer as an SSH server within ${(timeoutMs / 1000).toFixed(0)} s (a wrong port, a firewall that drops it, or a very busy host): ${check}`;
  return "";
}

/** Why the key at `keyPath` cannot be used, and what to do (a BASIN_IO error: the user's key, not Basin). */
function keyError(role: string, keyPath: string, e: unknown): BasinError {
  const why = e instanceof Error ? e.message : String(e);
  if (/passphrase/i.test(why))
    return new BasinError(
      "BASIN_IO",
      `${role}the SSH key ${keyPath} is protected by a passphrase, which Basin does not ask for; load it into the ssh-agent (ssh-add ${keyPath}) and remove "keyPath" from the profile, so that the agent is used`,
    );
  if (/private key/i.test(why))
    return new BasinError(
      "BASIN_IO",
      `${role}${keyPath} is not a private SSH key (${why}); point keyPath at the private key${keyPath.endsWith(".pub") ? ` (${keyPath.slice(0, -4)}, without .pub)` : ""}`,
    );
  return new BasinError("BASIN_IO", `${role}cannot use the SSH key ${keyPath}: ${why}`);
}

/** A channel from the jump host `via` to `to`'s host and port, within `timeoutMs`. */
function forwardThrough(client: Client, via: string, to: SshProfile, timeoutMs: number): Promise<ClientChannel> {
  const target = `${to.host}:${to.port ?? 22}`;
  return new Promise((resolve, reject) => {
    let late = false;
    const timer = setTimeout(
      () => {
        late = true;
        reject(
          new BasinError(
            "BASIN_IO",
            `jump host ${via} did not reach ${target} within ${timeoutMs} ms; check that ${target} is reachable from the jump host`,
          ),
        );
      },
      Math.max(1, timeoutMs),
    );
    client.forwardOut("127.0.0.1", 0, to.host, to.port ?? 22, (err, ch) => {
      clearTimeout(timer);
      if (late) return ch?.destroy();
      if (err)
        reject(
          new BasinError(
            "BASIN_IO",
            `jump host ${via} cannot open a connection to ${target}: ${err.message}; check "host" and "port" of profile "${to.name}" as the jump host sees them, and that the jump host allows TCP forwarding (AllowTcpForwarding)`,
          ),
        );
      else resolve(ch);
    });
  });
}

/**
 * @example
 * const ssh = await SshSession.connect(profile);
 * const t = await ssh.tunnel("127.0.0.1", 8786);
 * const dask = new DaskCluster(`tcp://127.0.0.1:${t.port}`, { viaScheduler: true });
 */
export class SshSession {
  private closed = false;
  private dropped?: BasinError;
  private readonly channels = new Set<ClientChannel>();
  private readonly servers = new Set<Server>();
  private readonly onDrop = new Set<(e: BasinError) => void>();

  /**
   * `jumps`: the jump hosts' connections, first hop first; the session owns them.
   * `where`: "user@host:port", with " via user@jump:port" for each jump host.
   */
  private constructor(
    private readonly client: Client,
    readonly profile: SshProfile,
    private readonly jumps: readonly Client[],
    readonly where: string,
  ) {
    const drop = () => {
      if (this.closed || this.dropped) return;
      this.dropped = new BasinError("BASIN_IO", `the SSH connection to ${where} dropped; reconnect to go on`);
      for (const f of this.onDrop) f(this.dropped);
      for (const s of this.servers) s.close();
      // A jump host that went away takes the rest of the chain with it.
      this.client.destroy();
      for (const j of this.jumps) j.destroy();
    };
    client.on("close", drop);
    for (const j of jumps) j.on("close", drop);
  }

  /**
   * Connects, through the profile's jump hosts if it names one (`jump`); every
   * hop's host key is checked against that hop's known_hosts, and an unknown or
   * changed one is refused (with its fingerprint, to check and add to known_hosts).
   */
  static async connect(profile: SshProfile, options: SshConnectOptions = {}): Promise<SshSession> {
    const chain = profile.jump === undefined ? [] : jumpChain(profile, options.profiles);
    const deadline = Date.now() + (options.timeoutMs ?? 10_000);
    const left = () => deadline - Date.now();
    const hops: Client[] = [];
    const where = [profile, ...[...chain].reverse()].map(sshAddress).join(" via ");
    try {
      let sock: Duplex | undefined;
      for (let i = 0; i < chain.length; i++) {
        const role = `jump host ${sshAddress(chain[i])} (on the way to ${sshAddress(profile)}): `;
        hops.push(await connectHop(chain[i], sock, left(), role));
        sock = await forwardThrough(hops[i], sshAddress(chain[i]), chain[i + 1] ?? profile, left());
      }
      const role =
        chain.length > 0 ? `${sshAddress(profile)} through jump host ${sshAddress(chain[chain.length - 1])}: ` : "";
      const client = await connectHop(profile, sock, left(), role);
      return new SshSession(client, profile, hops, where);
    } catch (e) {
      for (const c of hops.reverse()) c.destroy();
      throw e;
    }
  }

  /** Called once if the connection drops (not on close()). */
  whenDropped(f: (e: BasinError) => void): () => void {
    this.onDrop.add(f);
    return () => this.onDrop.delete(f);
  }

  /** Runs a command on the host and collects its output. */
  exec(command: string): Promise<ExecResult> {
    return new Promise((resolve, reject) => {
      if (this.dropped) return reject(this.dropped);
      this.client.exec(command, (err, ch) => {
        if (err) return reject(new BasinError("BASIN_IO", `ssh ${this.profile.host}: ${command}: ${err.message}`));
        let stdout = "",
          stderr = "";
        ch.on("data", (d: Buffer) => (stdout += d.toString()));
        ch.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
        const off = this.whenDropped(reject);
        ch.on("close", (code: number | null) => {
          off();
          resolve({ code, stdout, stderr });
        });
      });
    });
  }

  /** Starts a command and leaves it running (e.g. `basin serve`); its output goes to `onOutput`. */
  spawn(command: string, onOutput: (text: string) => void): Promise<ClientChannel> {
    return new Promise((resolve, reject) => {
      this.client.exec(command, (err, ch) => {
        if (err) return reject(new BasinError("BASIN_IO", `ssh ${this.profile.host}: ${command}: ${err.message}`));
        this.channels.add(ch);
        ch.on("data", (d: Buffer) => onOutput(d.toString()));
        ch.stderr.on("data", (d: Buffer) => onOutput(d.toString()));
        ch.on("close", () => this.channels.delete(ch));
        resolve(ch);
      });
    });
  }

  /**
   * A local port on 127.0.0.1 forwarding each connection to `host:port` as seen from
   * the remote machine; `localPort` 0 picks a free one (give the old one to reconnect).
   */
  tunnel(host: string, port: number, localPort = 0): Promise<Tunnel> {
    const sockets = new Set<Socket>();
    const server = createServer((sock) => {
      sockets.add(sock);
      sock.on("close", () => sockets.delete(sock));
      this.client.forwardOut("127.0.0.1", 0, host, port, (err, ch) => {
        if (err) return sock.destroy();
        this.channels.add(ch);
        sock.pipe(ch).pipe(sock);
        const done = () => {
          this.channels.delete(ch);
          ch.destroy(); // end() would wait for the peer, which may never close
          sock.destroy();
        };
        sock.on("close", done);
        ch.on("close", done);
        sock.on("error", done);
      });
    });
    this.servers.add(server);
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(localPort, "127.0.0.1", () =>
        resolve({
          port: (server.address() as { port: number }).port,
          close: () => {
            for (const s of sockets) s.destroy();
            this.servers.delete(server);
            return new Promise<void>((r) => server.close(() => r()));
          },
        }),
      );
    });
  }

  close(): void {
    this.closed = true;
    for (const ch of this.channels) ch.destroy();
    for (const s of this.servers) s.close();
    this.client.end();
    for (const j of this.jumps) j.end();
  }
}
