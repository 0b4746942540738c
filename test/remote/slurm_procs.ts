// A real single-node SLURM (Debian's slurmctld, slurmd, munge) on 127.0.0.1 for the
// tests (recipe: shared notes/test-infra.md), all in a temp folder: its own munge key
// and socket, free ports, state, spool and logs, so it touches nothing of the
// machine's. Daemons run in the foreground as our children, stopped by PID.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { freePort, stopProc } from "./dask_procs.js";

const BINARIES = [
  "/usr/sbin/slurmctld",
  "/usr/sbin/slurmd",
  "/usr/sbin/munged",
  "/usr/bin/sbatch",
  "/usr/bin/squeue",
  "/usr/bin/scancel",
  "/usr/bin/sinfo",
];

/** Fails with the apt-get line when a SLURM part is missing, or when not root (slurmd runs jobs as their user). */
export function requireSlurm(): void {
  const missing = BINARIES.filter((b) => !existsSync(b));
  if (missing.length > 0)
    throw new Error(
      `the SLURM tests need Debian's slurmctld, slurmd, slurm-client and munge (missing ${missing.join(", ")}): apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge (.ci/run does this)`,
    );
  if (process.getuid?.() !== 0)
    throw new Error("the SLURM tests start slurmd, which must run as root: run them as root (CI does)");
}

export interface Slurm {
  dir: string;
  /** A folder for the tests' jobs (scripts, scheduler files, logs): stop() checks no process using it is left. */
  jobs: string;
  /** SLURM_CONF for the client commands (sbatch, squeue, scancel). */
  conf: string;
  env: NodeJS.ProcessEnv;
  /** Job ids in the queue (pending or running), as squeue lists them. */
  queue(): string[];
  /** squeue's state of each job in the queue. */
  states(): Map<string, string>;
  /** Runs a SLURM client command (scancel, scontrol) with this SLURM's config. */
  command(cmd: string, args: string[]): string;
  stop(): Promise<void>;
}

/**
 * Polls `ok` every 100 ms until it holds; fails with `what` (and `detail()`) after `ms`.
 *
 * @example
 * await until("squeue is empty", 10_000, () => slurm.queue().length === 0);
 */
export async function until(
  what: string,
  ms: number,
  ok: () => boolean | Promise<boolean>,
  detail: () => string = () => "",
): Promise<void> {
  const t0 = Date.now();
  while (!(await ok())) {
    if (Date.now() - t0 > ms)
      throw new Error(`timed out after ${ms} ms waiting until ${what}${detail() ? `:\n${detail()}` : ""}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * munged, slurmctld and slurmd with a node of `cpus` CPUs (slurmd takes the
 * configured count, not the machine's) and 4000 MB; resolves once the node is idle.
 *
 * @example
 * const slurm = await startSlurm(); ... await slurm.stop();
 */
export async function startSlurm(cpus = 4): Promise<Slurm> {
  requireSlurm();
  const dir = mkdtempSync(join(tmpdir(), "basin-slurm-"));
  chmodSync(dir, 0o755); // munged wants its socket's folders searchable by all
  for (const d of ["munge", "state", "spool", "log"]) mkdirSync(join(dir, d), { mode: 0o755 });
  const key = join(dir, "munge", "munge.key");
  writeFileSync(key, randomBytes(128), { mode: 0o600 });
  const socket = join(dir, "munge", "munge.socket");
  const procs: ChildProcess[] = [];
  let log = "";
  const start = (cmd: string, args: string[]): ChildProcess => {
    const p = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
    const name = cmd.split("/").pop();
    p.stdout?.on("data", (d: Buffer) => (log += `${name}: ${d}`));
    p.stderr?.on("data", (d: Buffer) => (log += `${name}: ${d}`));
    procs.push(p);
    return p;
  };
  const stopAll = async () => {
    for (const p of procs.reverse()) await stopProc(p, 10_000);
  };
  try {
    start("/usr/sbin/munged", [
      "-F",
      `--key-file=${key}`,
      `--socket=${socket}`,
      `--pid-file=${dir}/munge/munged.pid`,
      `--log-file=${dir}/munge/munged.log`,
      `--seed-file=${dir}/munge/munged.seed`,
    ]);
    await until(
      "munged opened its socket",
      10_000,
      () => existsSync(socket),
      () => log,
    );
    const host = hostname().split(".")[0];
    const [ctldPort, dPort] = [await freePort(), await freePort()];
    const conf = join(dir, "slurm.conf");
    writeFileSync(
      conf,
      [
        "ClusterName=basintest",
        `SlurmctldHost=${host}(127.0.0.1)`,
        `SlurmctldPort=${ctldPort}`,
        `SlurmdPort=${dPort}`,
        "SlurmUser=root",
        "SlurmdUser=root",
        "AuthType=auth/munge",
        `AuthInfo=socket=${socket}`,
        "CryptoType=crypto/munge",
        "MpiDefault=none",
        `StateSaveLocation=${dir}/state`,
        `SlurmdSpoolDir=${dir}/spool`,
        `SlurmctldPidFile=${dir}/slurmctld.pid`,
        `SlurmdPidFile=${dir}/slurmd.pid`,
        `SlurmctldLogFile=${dir}/log/slurmctld.log`,
        `SlurmdLogFile=${dir}/log/slurmd.log`,
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "SchedulerType=sched/backfill",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core_Memory",
        "SlurmdParameters=config_overrides",
        // Without DefMemPerCPU each job takes the node's memory and jobs run one at a time.
        "DefMemPerCPU=500",
        "ReturnToService=2",
        "InactiveLimit=0",
        "MinJobAge=60",
        "KillWait=2",
        `NodeName=${host} NodeAddr=127.0.0.1 CPUs=${cpus} RealMemory=4000 State=UNKNOWN`,
        `PartitionName=debug Nodes=${host} Default=YES MaxTime=INFINITE State=UP`,
      ].join("\n") + "\n",
    );
    const env = { ...process.env, SLURM_CONF: conf };
    start("/usr/sbin/slurmctld", ["-D", "-f", conf]);
    start("/usr/sbin/slurmd", ["-D", "-f", conf]);
    const command = (cmd: string, args: string[]): string =>
      execFileSync(cmd, args, { env, encoding: "utf8", timeout: 15_000 });
    const idle = (): boolean => {
      try {
        return /^idle/.test(command("sinfo", ["-h", "-o", "%T"]).trim());
      } catch {
        return false;
      }
    };
    await until(
      "the SLURM node became idle",
      30_000,
      idle,
      () => `${log}\n${readLog(dir, "slurmctld.log")}\n${readLog(dir, "slurmd.log")}`,
    );
    const states = (): Map<string, string> =>
      new Map(
        command("squeue", ["-h", "-o", "%i %T"])
          .split("\n")
          .filter(Boolean)
          .map((l) => l.split(" ") as [string, string]),
      );
    return {
      dir,
      conf,
      env,
      command,
      states,
      jobs: join(dir, "jobs"),
      queue: () => [...states().keys()],
      async stop() {
        try {
          const left = [...states().keys()];
          if (left.length > 0) command("scancel", left);
          // slurmd must outlive its jobs' steps, or their processes are orphaned
          await until("its jobs ended", 10_000, () => states().size === 0).catch(() => {});
        } catch {
          // the controller is already gone
        }
        await stopAll();
        // Nothing a job started may outlive SLURM: such a process is a leak to fix.
        const left = processesUsing(dir);
        for (const p of left) process.kill(p.pid, "SIGKILL");
        rmSync(dir, { recursive: true, force: true });
        if (left.length > 0)
          throw new Error(`processes of SLURM jobs outlived them:\n${left.map((p) => `${p.pid} ${p.cmd}`).join("\n")}`);
      },
    };
  } catch (e) {
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

/** Live processes whose command line names a path under `dir` (this SLURM's jobs, scripts, daemons). */
export function processesUsing(dir: string): { pid: number; cmd: string }[] {
  const found: { pid: number; cmd: string }[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (
        readFileSync(`/proc/${entry}/stat`, "utf8")
          .replace(/^.*\) /, "")
          .startsWith("Z")
      )
        continue; // a zombie holds nothing
      const cmd = readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ").trim();
      if (cmd.includes(dir)) found.push({ pid: Number(entry), cmd });
    } catch {
      // it ended meanwhile
    }
  }
  return found;
}

function readLog(dir: string, name: string): string {
  try {
    return readFileSync(join(dir, "log", name), "utf8")
      .split("\n")
      .slice(-20)
      .join("\n");
  } catch {
    return "";
  }
}
