// The sbatch script of one SLURM job of a Basin Dask cluster: the first job also
// runs the Dask scheduler, which writes its address to a scheduler file on shared
// storage; every job runs one Dask worker (`dask cuda worker` when the job has GPUs)
// that retires itself before the walltime. Rendered text is shown to the user (and
// may be edited) before sbatch gets it.
import { BasinError } from "../../common/errors.js";
import { shellQuote } from "../ssh/shell_quote.js";
import type { CommandRunner } from "./command_runner.js";

/** How jobs are asked of SLURM (a profile's fields; no secrets). */
export interface SlurmJobSpec {
  /** The profile's name, for job names and messages. */
  name: string;
  partition?: string;
  account?: string;
  /** HH:MM:SS, MM:SS or D-HH:MM:SS. */
  walltime: string;
  /** CPU cores per job (the worker's threads). */
  cores: number;
  /** Memory per job, e.g. "16G" or "4000M". */
  memory: string;
  /** GPUs per job: >0 runs `dask cuda worker`, one process per GPU. */
  gpus?: number;
  /** Environment modules to load, in order. */
  modules?: string[];
  /** A conda environment to activate. */
  conda?: string;
  /** The cluster's Python with dask and distributed (default python3). */
  python?: string;
  /** "ucx" for InfiniBand/NVLink clusters (needs ucx-py); default "tcp". */
  protocol?: "tcp" | "ucx";
}

export interface BatchScriptOptions {
  /** Shared-storage path of the scheduler file (the address, read by workers and by Basin). */
  schedulerFile: string;
  /** The first job runs the scheduler too. */
  withScheduler: boolean;
  /** Folder for the job's log (default: sbatch's working directory). */
  logDir?: string;
}

const WORD = /^[\w.+-]+$/;

/** Seconds in a SLURM time limit. */
export function walltimeSeconds(t: string): number {
  const m = /^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)$/.exec(t);
  if (!m) throw new BasinError("BASIN_PLAN", `walltime "${t}" must be HH:MM:SS, MM:SS or D-HH:MM:SS`);
  const [d, h, min, s] = [m[1], m[2], m[3], m[4]].map((x) => Number(x ?? 0));
  if (min >= 60 || s >= 60) throw new BasinError("BASIN_PLAN", `walltime "${t}" has minutes or seconds past 59`);
  return ((d * 24 + h) * 60 + min) * 60 + s;
}

/**
 * Refuses a profile's bad job fields, naming the profile and the field.
 *
 * @example
 * checkJobSpec({ name: "hpc", walltime: "01:00:00", cores: 0, memory: "4G" }); // throws: cores must be a positive integer
 */
export function checkJobSpec(spec: Omit<SlurmJobSpec, "walltime">, kind = "SLURM profile"): void {
  const bad = (what: string, fix: string) => new BasinError("BASIN_PLAN", `${kind} "${spec.name}": ${what}; ${fix}`);
  if (!Number.isInteger(spec.cores) || spec.cores < 1)
    throw bad(`cores must be a positive integer, got ${spec.cores}`, "give the CPU cores per job");
  if (!/^\d+[KMGT]?$/.test(spec.memory))
    throw bad(`memory "${spec.memory}" is not a SLURM size`, 'write it like "16G" or "4000M"');
  if (spec.gpus !== undefined && (!Number.isInteger(spec.gpus) || spec.gpus < 0))
    throw bad(`gpus must be a whole number, got ${spec.gpus}`, "give the GPUs per job, or 0");
  for (const [k, v] of [
    ["partition", spec.partition],
    ["account", spec.account],
    ["conda", spec.conda],
    ...(spec.modules ?? []).map((m) => ["module", m]),
  ] as const)
    if (v !== undefined && !(k === "module" ? /^[\w.+/-]+$/ : WORD).test(v))
      throw bad(`${k} "${v}" has characters SLURM names do not`, "check the spelling");
  if (spec.protocol !== undefined && spec.protocol !== "tcp" && spec.protocol !== "ucx")
    throw bad(
      `protocol "${String(spec.protocol)}" is not tcp or ucx`,
      'use "ucx" for InfiniBand/NVLink, else leave it out',
    );
  if (!WORD.test(spec.name))
    throw bad("the name has characters a job name cannot", 'use letters, digits, ".", "-" or "_"');
}

/**
 * @example
 * const text = renderBatchScript({ name: "hpc", walltime: "01:00:00", cores: 8, memory: "32G", gpus: 1 },
 *   { schedulerFile: "/shared/basin/hpc.json", withScheduler: true });
 */
export function renderBatchScript(spec: SlurmJobSpec, options: BatchScriptOptions): string {
  checkJobSpec(spec);
  const gpus = spec.gpus ?? 0;
  const protocol = spec.protocol ?? "tcp";
  const seconds = walltimeSeconds(spec.walltime);
  // Retire the worker before SLURM kills it: 5 minutes early, or 10% of a short job.
  const lifetime = Math.max(30, seconds - Math.min(300, Math.round(seconds * 0.1)));
  const file = shellQuote(options.schedulerFile);
  const memory = daskMemory(spec.memory);
  const lines = [
    "#!/bin/bash",
    `#SBATCH --job-name=basin-${spec.name}`,
    ...(spec.partition ? [`#SBATCH --partition=${spec.partition}`] : []),
    ...(spec.account ? [`#SBATCH --account=${spec.account}`] : []),
    `#SBATCH --time=${spec.walltime}`,
    "#SBATCH --nodes=1",
    "#SBATCH --ntasks=1",
    `#SBATCH --cpus-per-task=${spec.cores}`,
    `#SBATCH --mem=${spec.memory}`,
    ...(gpus > 0 ? [`#SBATCH --gres=gpu:${gpus}`] : []),
    ...(options.logDir ? [`#SBATCH --output=${options.logDir.replace(/\/$/, "")}/basin-${spec.name}-%j.log`] : []),
    "set -eu",
    ...(spec.modules?.length ? [`module load ${spec.modules.join(" ")}`] : []),
    ...(spec.conda ? [`eval "$(conda shell.bash hook)"`, `conda activate ${spec.conda}`] : []),
    `PY=${shellQuote(spec.python ?? "python3")}`,
    // scancel signals the job's processes, then SIGKILLs those SLURM still finds; a Dask
    // process slow to stop whose shell went first could escape that (proctrack/linuxproc),
    // so the shell kills them itself at once.
    `trap 'kill -KILL $(jobs -p) 2>/dev/null; exit 143' TERM INT`,
  ];
  if (options.withScheduler)
    lines.push(
      `rm -f ${file}`,
      // a free port: another session's scheduler may share the node (the scheduler file says which)
      `"$PY" -m distributed.cli.dask_scheduler --scheduler-file ${file} --protocol ${protocol} --port 0 --dashboard-address :0 &`,
      // A scheduler that cannot start (no Dask in this Python) fails the job now, not after the wait.
      `for i in $(seq 600); do [ -s ${file} ] && break; kill -0 $! 2>/dev/null || { echo "basin: the Dask scheduler exited; see the lines above" >&2; exit 1; }; sleep 0.1; done`,
    );
  const workerArgs = `--scheduler-file ${file} --name "basin-$SLURM_JOB_ID" --lifetime ${lifetime}s --lifetime-stagger 30s`;
  lines.push(
    gpus > 0
      ? `"$PY" -m dask cuda worker ${workerArgs} --protocol ${protocol} --memory-limit ${memory} &`
      : `"$PY" -m distributed.cli.dask_worker ${workerArgs} --protocol ${protocol} --nworkers 1 --nthreads ${spec.cores} --memory-limit ${memory} --no-nanny &`,
    // A job ends when its worker retires; with the scheduler, when either stops.
    "wait -n",
    "kill $(jobs -p) 2>/dev/null || true",
    "",
  );
  return lines.join("\n");
}

/**
 * A SLURM size as Dask reads it: SLURM sizes are binary and default to megabytes.
 *
 * @example
 * daskMemory("16G"); // "16GiB"
 */
export function daskMemory(memory: string): string {
  return `${memory}${/\d$/.test(memory) ? "M" : ""}iB`;
}

/**
 * A SLURM size in whole megabytes.
 *
 * @example
 * slurmMegabytes("2G"); // 2048
 */
export function slurmMegabytes(memory: string): number {
  const m = /^(\d+)([KMGT]?)$/.exec(memory);
  if (!m) throw new BasinError("BASIN_PLAN", `memory "${memory}" is not a SLURM size; write it like "16G" or "4000M"`);
  const scale = { K: 1 / 1024, M: 1, G: 1024, T: 1024 * 1024 }[m[2] || "M"] ?? 1;
  return Math.floor(Number(m[1]) * scale);
}

/** The scheduler's address from the scheduler file it wrote. */
export function schedulerAddress(fileText: string, file: string): string {
  let address: unknown;
  try {
    address = (JSON.parse(fileText) as { address?: unknown }).address;
  } catch {
    address = undefined;
  }
  if (typeof address !== "string" || !/^(tcp|ucx|tls):\/\/\S+$/.test(address))
    throw new BasinError(
      "BASIN_IO",
      `${file} holds no Dask scheduler address; the scheduler job may have failed: see its log`,
    );
  return address;
}

/**
 * The address in a scheduler file, or undefined while the file is missing or still being written.
 *
 * @example
 * const address = await readSchedulerFile(runner, "/shared/basin/hpc-1/scheduler.json");
 */
export async function readSchedulerFile(runner: CommandRunner, file: string): Promise<string | undefined> {
  const text = await runner.readFile(file);
  if (!text?.trim()) return undefined;
  try {
    return schedulerAddress(text, file);
  } catch {
    return undefined;
  }
}
