// One SSH connection (ssh2, pure JS) to a remote host: host key verified against
// known_hosts, key file or ssh-agent auth, commands, and local TCP tunnels through it.
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { createServer, type Server, type Socket } from "node:net";
import { Client, type ClientChannel } from "ssh2";
import { BasinError } from "../../common/errors.js";
import { checkHostKey, knownHostName, type HostKeyVerdict } from "./known_hosts.js";
import type { SshProfile } from "./profiles.js";

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

  private constructor(private readonly client: Client, readonly profile: SshProfile) {
    client.on("close", () => {
      if (this.closed) return;
      this.dropped = new BasinError("BASIN_IO", `the SSH connection to ${profile.user}@${profile.host}:${profile.port ?? 22} dropped; reconnect to go on`);
      for (const f of this.onDrop) f(this.dropped);
      for (const s of this.servers) s.close();
    });
  }

  /** Connects; an unknown or changed host key is refused (with its fingerprint, to check and add to known_hosts). */
  static connect(profile: SshProfile, options: { timeoutMs?: number } = {}): Promise<SshSession> {
    const port = profile.port ?? 22;
    const knownHosts = profile.knownHosts ?? join(homedir(), ".ssh", "known_hosts");
    const where = `${profile.user}@${profile.host}:${port}`;
    let verdict: HostKeyVerdict = { ok: true };
    return new Promise((resolve, reject) => {
      const client = new Client();
      client.once("ready", () => resolve(new SshSession(client, profile)));
      client.once("error", (e: Error & { level?: string }) => {
        if (!verdict.ok) {
          const what = verdict.reason === "unknown"
            ? `the host key of ${knownHostName(profile.host, port)} is not in ${knownHosts}`
            : `the host key of ${knownHostName(profile.host, port)} differs from the one in ${knownHosts} (it may have been reinstalled, or someone is in the middle)`;
          reject(new BasinError("BASIN_IO", `${what}; it offered ${verdict.fingerprint}. Check that fingerprint with the host's administrator, then add the key to known_hosts (ssh-keyscan -p ${port} ${profile.host})`));
          return;
        }
        const hint = e.level === "client-authentication" ? `; check the key (${profile.keyPath ?? "ssh-agent"}) and that it is in the host's authorized_keys` : "";
        reject(new BasinError("BASIN_IO", `cannot connect to ${where}: ${e.message}${hint}`));
      });
      let privateKey: Buffer | undefined;
      if (profile.keyPath) {
        try {
          privateKey = readFileSync(profile.keyPath);
        } catch (e) {
          reject(new BasinError("BASIN_IO", `cannot read the SSH key ${profile.keyPath}: ${(e as Error).message}`));
          return;
        }
      }
      client.connect({
        host: profile.host,
        port,
        username: profile.user,
        privateKey,
        agent: privateKey ? undefined : process.env.SSH_AUTH_SOCK,
        readyTimeout: options.timeoutMs ?? 10_000,
        keepaliveInterval: 2000,
        keepaliveCountMax: 3,
        hostVerifier: (key: Buffer) => {
          verdict = checkHostKey(knownHosts, profile.host, port, key);
          return verdict.ok;
        },
      });
    });
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
        let stdout = "", stderr = "";
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
  }
}
