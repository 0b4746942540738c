// A Basin engine on another host, driven over SSH: `basin serve` is started there
// (or reused: its URL and pid sit in a private folder of the host's temp dir),
// its port is tunnelled, and the workbench contract (engine/common/rpc.ts) runs
// over a WebSocket through the tunnel. A dropped connection fails what was
// waiting with an error naming the host, then reconnects by itself; the remote
// engine keeps running, so the next session reuses it.
import WebSocket from "ws";
import { BasinError } from "../../common/errors.js";
import type { EngineEvent, ResultInfo, RunProgress, WorkspaceInfo } from "../../common/rpc.js";
import { RpcClient } from "../../common/rpc_client.js";
import type { SshProfile } from "../profiles.js";
import { shellQuote } from "../ssh/shell_quote.js";
import { sshAddress, SshSession, type Tunnel } from "../ssh/ssh_session.js";

export interface RemoteEngineOptions {
  /** Bound on connecting over SSH and on the remote engine's start. Default 30 s. */
  timeoutMs?: number;
  /** Reconnect by itself after a drop (first try after 200 ms, doubling up to 5 s). Default true. */
  reconnect?: boolean;
}

/** How a run ended well. */
export interface RemoteRunResult {
  runId: string;
  result: ResultInfo;
  shown: ResultInfo[];
  elapsedMs: number;
  tasks: number;
}

/** The remote engine's address, as its start script printed it. */
interface ServeUrl {
  port: number;
  token: string;
}

/** Shell lines that cd into the workspace (or run \`otherwise\`) and set $state, the prefix of its engine's files. */
function stateFiles(workspace: string | undefined, otherwise: string): string {
  return `ws=${workspace === undefined ? '"$HOME"' : shellQuote(workspace)}
cd "$ws" 2>/dev/null || { ${otherwise}; }
ws=$(pwd -P)
dir="\${TMPDIR:-/tmp}/basin-$(id -u)"
state="$dir/serve-$(printf %s "$ws" | cksum | cut -d' ' -f1)"`;
}

/**
 * The script that starts `basin serve` in `workspace` on the host, or finds the one
 * already serving it (keyed by the folder's absolute path), and prints its URL.
 * The state folder is private to the user: the URL holds the engine's token.
 */
export function startScript(basin: string, workspace: string | undefined, timeoutMs: number): string {
  const tries = Math.ceil(timeoutMs / 100);
  return `
${stateFiles(workspace, 'echo "no folder $ws to open as the workspace" >&2; exit 3')}
mkdir -p "$dir" && chmod 700 "$dir" || exit 4
if [ -s "$state.url" ] && kill -0 "$(cat "$state.pid" 2>/dev/null)" 2>/dev/null; then echo "reused $(cat "$state.url")"; exit 0; fi
rm -f "$state.url"
umask 077
if command -v setsid >/dev/null; then detach=setsid; else detach=; fi
: >"$state.log"
nohup $detach env ${basin} serve . --port 0 >"$state.log" 2>&1 </dev/null &
echo $! >"$state.pid"
i=0
while [ $i -lt ${tries} ]; do
  url=$(grep -o 'http://127\\.0\\.0\\.1:[0-9]*/?token=[A-Za-z0-9_-]*' "$state.log" 2>/dev/null | head -n 1)
  if [ -n "$url" ]; then echo "$url" >"$state.url"; echo "started $url"; exit 0; fi
  kill -0 "$(cat "$state.pid")" 2>/dev/null || { echo "basin serve exited:" >&2; tail -n 20 "$state.log" >&2; rm -f "$state.pid" "$state.log"; exit 5; }
  sleep 0.1; i=$((i + 1))
done
echo "basin serve printed no URL in ${Math.round(timeoutMs / 1000)} s:" >&2; tail -n 20 "$state.log" >&2
kill "$(cat "$state.pid")" 2>/dev/null; rm -f "$state.pid" "$state.log"; exit 6
`;
}

/** Stops the engine serving `workspace` on the host, if any; prints "stopped" when there was one. */
function stopScript(workspace: string | undefined): string {
  return `
${stateFiles(workspace, "exit 0")}
pid=$(cat "$state.pid" 2>/dev/null) && kill "$pid" 2>/dev/null && echo stopped
i=0; while [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
rm -f "$state.url" "$state.pid" "$state.log"
`;
}

type RunEnd = Extract<EngineEvent, { type: "runFinished" | "runFailed" }>;

interface RunWaiter {
  resolve: (r: RemoteRunResult) => void;
  reject: (e: Error) => void;
  onProgress?: (p: RunProgress) => void;
}

/**
 * @example
 * const engine = await RemoteEngine.connect(profile);
 * const { result } = await engine.runToEnd("p.ts", source);
 * const page = await engine.page(result.id, 0, 100);
 * engine.close();
 */
export class RemoteEngine extends RpcClient {
  private ssh: SshSession | undefined;
  private tunnel: Tunnel | undefined;
  private socket: WebSocket | undefined;
  private readonly queued: string[] = [];
  private readonly runs = new Map<string, RunWaiter>();
  private readonly ended = new Map<string, RunEnd>();
  private retry: ReturnType<typeof setTimeout> | undefined;
  private delay = 200;
  /** "started" or "reused": what the last connection found on the host. */
  engineWas: "started" | "reused" | undefined;

  private constructor(
    readonly sshProfile: SshProfile,
    private readonly options: RemoteEngineOptions,
  ) {
    super();
    this.onEvent((e) => {
      if (e.type === "progress") this.runs.get(e.runId)?.onProgress?.(e.progress);
      if (e.type === "runFinished" || e.type === "runFailed") this.settle(e);
    });
  }

  /** Ends the waiter of a run; an ending nobody waits for yet is kept a while (the last 20). */
  private settle(e: RunEnd): void {
    const w = this.runs.get(e.runId);
    if (!w) {
      this.ended.set(e.runId, e);
      if (this.ended.size > 20) this.ended.delete(this.ended.keys().next().value as string);
      return;
    }
    this.runs.delete(e.runId);
    this.ended.delete(e.runId);
    if (e.type === "runFailed") w.reject(BasinError.fromJSON(e.error));
    else w.resolve({ runId: e.runId, result: e.result, shown: e.shown ?? [], elapsedMs: e.elapsedMs, tasks: e.tasks });
  }

  /** "user@host:port", for messages. */
  get where(): string {
    return sshAddress(this.sshProfile);
  }

  /** The host's workspace folder and files (`host` says whose), as `basin serve` there lists them. */
  override async workspace(): Promise<WorkspaceInfo> {
    return { ...(await this.onHost(super.workspace())), host: this.where };
  }

  /** A file of the host's workspace; a failure names the host and the path. */
  override readFile(path: string): Promise<string> {
    return this.onHost(super.readFile(path));
  }

  /** Saves a file in the host's workspace (temp file and rename there); a failure names the host and the path. */
  override writeFile(path: string, text: string): Promise<void> {
    return this.onHost(super.writeFile(path, text));
  }

  /** The engine's errors say the path; this adds the host, once. */
  private async onHost<T>(request: Promise<T>): Promise<T> {
    try {
      return await request;
    } catch (e) {
      const err = BasinError.from(e);
      throw err.message.includes(this.where)
        ? err
        : new BasinError(err.code, `on ${this.where}: ${err.detail}`, err.location);
    }
  }

  /** Connects over SSH, starts or reuses the host's engine, and opens the RPC channel. */
  static async connect(profile: SshProfile, options: RemoteEngineOptions = {}): Promise<RemoteEngine> {
    const engine = new RemoteEngine(profile, options);
    try {
      await engine.open();
    } catch (e) {
      engine.close();
      throw e;
    }
    return engine;
  }

  /**
   * Runs a pipeline (its text as `source`, under `path` in the remote workspace)
   * and resolves when it finishes; a failed run rejects with the engine's error.
   */
  async runToEnd(
    path: string,
    source: string,
    options: { onProgress?: (p: RunProgress) => void; signal?: AbortSignal } = {},
  ): Promise<RemoteRunResult> {
    const { runId } = await this.run(path, source);
    return new Promise<RemoteRunResult>((resolve, reject) => {
      const onAbort = () => void this.cancel(runId).catch(() => {});
      options.signal?.addEventListener("abort", onAbort, { once: true });
      const done =
        <T>(f: (v: T) => void) =>
        (v: T) => {
          options.signal?.removeEventListener("abort", onAbort);
          f(v);
        };
      this.runs.set(runId, { resolve: done(resolve), reject: done(reject), onProgress: options.onProgress });
      // It may have ended before the reply that named it came.
      const ended = this.ended.get(runId);
      if (ended) this.settle(ended);
    });
  }

  /** Drops the current connection (if any) and opens a new one now. */
  async reconnect(): Promise<void> {
    clearTimeout(this.retry);
    this.teardown();
    await this.open();
  }

  /** Stops the engine on the host (the next connect starts a fresh one), then closes. */
  async stopRemote(): Promise<void> {
    try {
      await RemoteEngine.stopOnHost(this.sshProfile, this.options, this.ssh);
    } finally {
      this.close();
    }
  }

  /**
   * Stops the engine that sessions of `profile` left running on its host (they keep it
   * for the next one); resolves to whether one was running.
   *
   * @example
   * await RemoteEngine.stopOnHost(findProfile("gpu-box") as SshProfile) // true
   */
  static async stopOnHost(profile: SshProfile, options: RemoteEngineOptions = {}, via?: SshSession): Promise<boolean> {
    const ssh = via ?? (await SshSession.connect(profile, { timeoutMs: options.timeoutMs }));
    try {
      const r = await ssh.exec(stopScript(profile.workspace));
      return r.stdout.includes("stopped");
    } finally {
      if (ssh !== via) ssh.close();
    }
  }

  /** Closes for good; the engine on the host keeps running for the next session. */
  close(): void {
    this.closedByUser = true;
    clearTimeout(this.retry);
    this.teardown();
    this.lost(`the connection to the Basin engine on ${this.where} was closed`);
  }

  protected transmit(message: object): void {
    const text = JSON.stringify(message);
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(text);
    else this.queued.push(text);
  }

  private async open(): Promise<void> {
    this.setState("connecting");
    const timeoutMs = this.options.timeoutMs ?? 30_000;
    const ssh = await SshSession.connect(this.sshProfile, { timeoutMs });
    this.ssh = ssh;
    ssh.whenDropped((e) => {
      if (this.ssh !== ssh) return;
      this.teardown();
      this.lost(`${e.message}; the Basin engine there keeps running, and this session reconnects by itself`);
      this.scheduleReconnect();
    });
    const basin = this.sshProfile.basin ?? "basin";
    const r = await ssh.exec(startScript(basin, this.sshProfile.workspace, timeoutMs));
    const m = /^(started|reused) http:\/\/127\.0\.0\.1:(\d+)\/\?token=([\w-]+)$/m.exec(r.stdout);
    if (r.code !== 0 || !m)
      throw new BasinError(
        "BASIN_IO",
        `cannot start Basin on ${this.where} with \`${basin} serve\`: ${(r.stderr || r.stdout).trim() || `exit code ${r.code}`}; check the profile's "basin" command (e.g. "node /opt/basin/bin/basin.js") and "workspace" folder`,
      );
    this.engineWas = m[1] as "started" | "reused";
    const url: ServeUrl = { port: Number(m[2]), token: m[3] };
    this.tunnel = await ssh.tunnel("127.0.0.1", url.port);
    await this.openSocket(url, this.tunnel.port, timeoutMs);
    this.delay = 200;
  }

  private openSocket(url: ServeUrl, localPort: number, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      // The engine checks the Origin against its own address, as the host sees it.
      const ws = new WebSocket(`ws://127.0.0.1:${localPort}/?token=${url.token}`, {
        origin: `http://127.0.0.1:${url.port}`,
        handshakeTimeout: timeoutMs,
      });
      this.socket = ws;
      ws.once("unexpected-response", (_req, res) =>
        reject(
          new BasinError(
            "BASIN_IO",
            `the Basin engine on ${this.where} refused the connection (HTTP ${res.statusCode}); it may be another user's or stale: stop it and connect again`,
          ),
        ),
      );
      ws.once("error", (e) =>
        reject(
          new BasinError("BASIN_IO", `cannot reach the Basin engine on ${this.where} through the tunnel: ${e.message}`),
        ),
      );
      ws.once("open", () => {
        this.setState("open");
        for (const text of this.queued.splice(0)) ws.send(text);
        resolve();
      });
      ws.on("message", (data) => {
        let msg: unknown;
        try {
          msg = JSON.parse(String(data));
        } catch {
          return;
        }
        this.receive(msg);
      });
      ws.on("close", () => {
        if (this.socket !== ws) return;
        this.teardown();
        this.lost(
          `the Basin engine on ${this.where} closed the connection (did its \`basin serve\` stop?); this session reconnects by itself`,
        );
        this.scheduleReconnect();
      });
    });
  }

  /** Fails every request and run still waiting with `why`. */
  private lost(why: string): void {
    this.queued.length = 0;
    this.dropped(why);
    const runs = [...this.runs.values()];
    this.runs.clear();
    for (const w of runs) w.reject(new BasinError("BASIN_IO", `the run's outcome is unknown: ${why}`));
    if (!this.closedByUser) this.setState("closed");
  }

  private scheduleReconnect(): void {
    if (this.closedByUser || this.options.reconnect === false) return;
    clearTimeout(this.retry);
    this.retry = setTimeout(() => {
      this.open().catch((e: unknown) => {
        this.teardown();
        this.lost(BasinError.from(e).message);
        this.delay = Math.min(this.delay * 2, 5000);
        this.scheduleReconnect();
      });
    }, this.delay);
  }

  /** Closes the socket, tunnel and SSH session of the current connection (not the remote engine). */
  private teardown(): void {
    const { socket, tunnel, ssh } = this;
    this.socket = this.tunnel = this.ssh = undefined;
    socket?.terminate();
    void tunnel?.close();
    ssh?.close();
  }
}
