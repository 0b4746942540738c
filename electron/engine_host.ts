// The desktop main process's side of the engine: forks engine/server/engine_process
// and relays the workbench contract between it and every window's MessagePort.
// Request ids are renumbered so several windows (or a reloaded one) never mix up
// their answers. When the engine process dies, waiting requests fail with a clear
// error and every window hears { engineProcess: { state: "crashed" } }; a window's
// { control: "restartEngine" } starts a fresh engine. Plain Node (no Electron), so
// it is tested with Node's own MessageChannel.
import { fork, type ChildProcess } from "node:child_process";
import { BasinError } from "../engine/common/errors.js";
import type { EngineProcessMessage, EngineProcessState, RpcRequest, RpcResponse } from "../engine/common/rpc.js";

/** One window's end of the channel, as the host sees it (Electron's MessagePortMain, adapted). */
export interface HostPort {
  send(message: unknown): void;
  onMessage(listener: (message: unknown) => void): void;
  onClose(listener: () => void): void;
  close(): void;
}

export interface EngineHostOptions {
  /** The compiled engine_process.js. */
  script: string;
  /** The workspace folder. */
  root: string;
  env?: NodeJS.ProcessEnv;
  /** Each line the engine process writes to stderr (default: to this process's stderr). */
  onStderr?: (line: string) => void;
  /** The engine process started listening or stopped. */
  onState?: (state: EngineProcessState) => void;
}

interface Inflight {
  port: HostPort;
  id: number;
  method: string;
}

const STDERR_LINES = 8;

/**
 * @example
 * const host = new EngineHost({ script: "dist/engine/server/engine_process.js", root: "." });
 * host.attach(portOfWindow);
 * // … later
 * await host.close();
 */
export class EngineHost {
  private child: ChildProcess | undefined;
  private ready = false;
  private readonly queue: object[] = [];
  private readonly ports = new Set<HostPort>();
  private readonly inflight = new Map<number, Inflight>();
  private next = 1;
  private stderrTail: string[] = [];
  private closed = false;
  private root: string;
  state: EngineProcessState = { state: "running" };

  constructor(private readonly options: EngineHostOptions) {
    this.root = options.root;
    this.start();
  }

  /** The engine process's id (undefined while none runs). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  get workspaceRoot(): string {
    return this.root;
  }

  /** Relays a window's port until it closes. */
  attach(port: HostPort): void {
    this.ports.add(port);
    port.onMessage((m) => this.fromWindow(port, m));
    port.onClose(() => this.detach(port));
    if (this.state.state === "crashed") port.send({ engineProcess: this.state } satisfies EngineProcessMessage);
  }

  /** Forgets a port (its window closed or reloaded); answers meant for it are dropped. */
  detach(port: HostPort): void {
    if (!this.ports.delete(port)) return;
    for (const [k, f] of this.inflight) if (f.port === port) this.inflight.delete(k);
    port.close();
  }

  /** Stops the engine process (if it runs) and starts a fresh one, optionally on another folder. */
  async restart(root?: string): Promise<void> {
    if (root !== undefined) this.root = root;
    await this.stopChild();
    if (!this.closed) this.start();
  }

  /** Stops the engine process for good and closes every port. */
  async close(): Promise<void> {
    this.closed = true;
    await this.stopChild();
    for (const p of [...this.ports]) this.detach(p);
  }

  private start(): void {
    this.ready = false;
    this.stderrTail = [];
    const child = fork(this.options.script, [this.root], {
      stdio: ["ignore", "inherit", "pipe", "ipc"],
      execArgv: ["--enable-source-maps"],
      // Under Electron, fork() runs the Electron binary: this makes it plain Node.
      env: { ...process.env, ...this.options.env, ELECTRON_RUN_AS_NODE: "1" },
    });
    this.child = child;
    let partial = "";
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (text: string) => {
      const lines = (partial + text).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        this.stderrTail = [...this.stderrTail.slice(1 - STDERR_LINES), line];
        (this.options.onStderr ?? ((l: string) => process.stderr.write(`engine: ${l}\n`)))(line);
      }
    });
    child.on("message", (m) => this.fromEngine(child, m));
    child.on("error", (e) => this.stderrTail.push(e.message));
    // "close" comes after the last stderr bytes, so the message has the whole tail.
    child.once("close", (code, signal) => {
      if (this.child !== child) return; // a restart replaced it on purpose
      this.child = undefined;
      this.ready = false;
      if (this.closed) return;
      const how = signal ? `was killed (${signal})` : `exited with code ${code}`;
      const tail = [...this.stderrTail, partial].filter((l) => l.trim() !== "").slice(-STDERR_LINES);
      const message = `The engine process ${how}.${tail.length > 0 ? `\n${tail.join("\n")}` : ""}\nRestart it to go on; results of earlier runs are gone.`;
      this.setState({ state: "crashed", message });
      this.failWaiting(`the engine process ${how} before it answered; restart the engine and try again`);
    });
  }

  private async stopChild(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = undefined; // its exit is expected now
    this.failWaiting("the engine was restarted before it answered; try again");
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((ok) => child.once("exit", () => ok()));
    if (child.connected) child.disconnect(); // the engine closes its cluster and exits
    const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
    await exited;
    clearTimeout(timer);
  }

  private fromWindow(port: HostPort, message: unknown): void {
    if (typeof message !== "object" || message === null) return;
    if ((message as { control?: unknown }).control === "restartEngine") {
      void this.restart();
      return;
    }
    const req = message as RpcRequest;
    if (typeof req.id !== "number") return;
    if (!this.child) {
      port.send({
        id: req.id,
        error: new BasinError(
          "BASIN_WORKER",
          `${req.method}: the engine process is not running; restart the engine`,
        ).toJSON(),
      } satisfies RpcResponse);
      return;
    }
    const id = this.next++;
    this.inflight.set(id, { port, id: req.id, method: String(req.method) });
    const forward = { ...req, id };
    if (this.ready && this.child?.connected) this.child.send(forward);
    else this.queue.push(forward);
  }

  private fromEngine(child: ChildProcess, message: unknown): void {
    if (child !== this.child || typeof message !== "object" || message === null) return;
    if ("ready" in message) {
      this.ready = true;
      this.setState({ state: "running" });
      for (const m of this.queue.splice(0)) child.send(m);
      return;
    }
    if ("event" in message) {
      for (const p of this.ports) p.send(message);
      return;
    }
    const reply = message as RpcResponse;
    const f = this.inflight.get(reply.id);
    if (!f) return;
    this.inflight.delete(reply.id);
    f.port.send({ ...reply, id: f.id });
  }

  private failWaiting(why: string): void {
    this.queue.length = 0;
    const waiting = [...this.inflight.values()];
    this.inflight.clear();
    for (const f of waiting)
      f.port.send({
        id: f.id,
        error: new BasinError("BASIN_WORKER", `${f.method}: ${why}`).toJSON(),
      } satisfies RpcResponse);
  }

  private setState(state: EngineProcessState): void {
    this.state = state;
    this.options.onState?.(state);
    for (const p of this.ports) p.send({ engineProcess: state } satisfies EngineProcessMessage);
  }
}
