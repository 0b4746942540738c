// Starts a real Dask scheduler and workers (Debian's python3-distributed) on
// 127.0.0.1 for the remote tests, with bounded waits; stops them by PID.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import { DaskCluster, LocalCluster } from "../../engine/api/index.js";
import { native } from "../../engine/native/addon.js";

export const PYTHON = "/usr/bin/python3";

/** Whether this machine has Dask (CI installs python3-distributed; without it the Dask tests are skipped, except in strict mode). */
export function requireDask(): void {
  if (!spawnSyncOk(PYTHON, ["-c", "import dask.dataframe, distributed, pandas"]))
    throw new Error(
      "the Dask tests need Debian's python3-distributed, python3-dask and python3-pandas: apt-get install -y python3-distributed python3-dask python3-pandas (.ci/run does this)",
    );
}

function spawnSyncOk(cmd: string, args: string[]): boolean {
  try {
    return spawnSync(cmd, args, { stdio: "ignore", timeout: 30_000 }).status === 0;
  } catch {
    return false;
  }
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function waitForLine(p: ChildProcess, re: RegExp, what: string, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let log = "";
    const timer = setTimeout(() => reject(new Error(`${what} did not start within ${ms} ms:\n${log}`)), ms);
    const on = (d: Buffer) => {
      log += d.toString();
      if (re.test(log)) {
        clearTimeout(timer);
        p.stderr?.off("data", on);
        p.stdout?.off("data", on);
        resolve();
      }
    };
    p.stderr?.on("data", on);
    p.stdout?.on("data", on);
    p.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code}:\n${log}`));
    });
  });
}

export interface DaskProcs {
  address: string;
  port: number;
  scheduler: ChildProcess;
  workers: ChildProcess[];
  /** Starts one more worker; resolves once it has joined. */
  addWorker(): Promise<ChildProcess>;
  stop(): Promise<void>;
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process has exited. */
export function stopProc(p: ChildProcess, graceMs = 5000): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(() => p.kill("SIGKILL"), graceMs);
    p.once("exit", () => {
      clearTimeout(t);
      resolve();
    });
    p.kill("SIGTERM");
  });
}

/**
 * A scheduler on a free port and `workers` worker processes (one thread each).
 *
 * @example
 * const dask = await startDask(2); ... await dask.stop();
 */
export async function startDask(workers: number): Promise<DaskProcs> {
  requireDask();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "basin-dask-"));
  const address = `tcp://127.0.0.1:${port}`;
  const env = { ...process.env, DASK_DISTRIBUTED__WORKER__DAEMON: "False", PYTHONWARNINGS: "ignore" };
  const scheduler = spawn(
    PYTHON,
    [
      "-m",
      "distributed.cli.dask_scheduler",
      "--host",
      "127.0.0.1",
      "--port",
      String(port),
      "--dashboard-address",
      ":0",
      "--no-show",
    ],
    { env, cwd: dir, stdio: ["ignore", "pipe", "pipe"] },
  );
  await waitForLine(scheduler, /Scheduler at:/, "dask scheduler", 30_000);
  const procs: ChildProcess[] = [];
  const addWorker = async (): Promise<ChildProcess> => {
    const w = spawn(
      PYTHON,
      [
        "-m",
        "distributed.cli.dask_worker",
        address,
        "--nthreads",
        "1",
        "--nworkers",
        "1",
        "--host",
        "127.0.0.1",
        "--no-nanny",
        "--no-dashboard",
        "--local-directory",
        dir,
        "--memory-limit",
        "1GB",
      ],
      { env, cwd: dir, stdio: ["ignore", "pipe", "pipe"] },
    );
    procs.push(w);
    await waitForLine(w, /Registered to:/, "dask worker", 30_000);
    return w;
  };
  for (let i = 0; i < workers; i++) await addWorker();
  return {
    address,
    port,
    scheduler,
    workers: procs,
    addWorker,
    async stop() {
      await Promise.all(procs.map(stopProc));
      await stopProc(scheduler);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface DaskFixture {
  procs: DaskProcs;
  dask: DaskCluster;
  /** The local engine whose answers Dask must give. */
  local: LocalCluster;
}

/**
 * Registers hooks that start a scheduler and `workers` Dask workers, a DaskCluster
 * on them and a 2-worker local cluster, and stop them all after the file's tests
 * (checking the native store is empty then). Does nothing when Dask is missing.
 *
 * @example
 * const fx = daskFixture(2);
 * it("…", async () => { await df.compute({ cluster: fx.dask }); });
 */
export function daskFixture(workers: number): DaskFixture {
  const fx = {} as DaskFixture;
  beforeAll(async () => {
    fx.procs = await startDask(workers);
    fx.dask = new DaskCluster(fx.procs.address, { python: PYTHON });
    fx.local = new LocalCluster({ workers: 2 });
  }, 90_000);
  afterAll(async () => {
    await fx.dask?.close();
    await fx.procs?.stop();
    await fx.local?.close();
    expect(native().storeStats()).toMatchObject({ handles: 0, buffers: 0 });
  });
  return fx;
}
