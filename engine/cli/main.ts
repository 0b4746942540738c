// The `basin` command line: run | demo | info | help.
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { Cluster } from "../cluster/cluster.js";
import { closeDefaultCluster, configureDefaultCluster, startedDefaultCluster } from "../cluster/default.js";
import { LocalCluster } from "../cluster/local.js";
import { parseGpuList } from "../cluster/gpus.js";
import { WORKER_PROCESSES } from "../workers/pool.js";
import { CPU_TASKS } from "../scheduler/placement.js";
import { findProfile, type RunnerProfile, type SshProfile } from "../cluster/profiles.js";
import { BasinError } from "../common/errors.js";
import { parseBytes } from "../memory/bytes.js";
import { formatMemoryStats } from "../memory/format_stats.js";
import { SPILL_COMPRESSIONS } from "../memory/limits.js";
import { native } from "../native/addon.js";
import { collectResults } from "../run/take.js";
import { generateDemoData } from "./demo_data.js";
import { formatInfo, machineInfo } from "./info.js";
import { runFile } from "./run_file.js";
import { cancelledExitCode } from "./stop_signals.js";
// Clusters, SSH, the server and the runner load only when a command uses them: a
// plain `basin run` starts without ssh2, ws or the HTTP server (about 70 ms).

const HELP = `basin — lazy dataframe pipelines on a local cluster

usage:
  basin run <pipeline.ts> [--workers N] [--output result.csv|result.parquet|result.arrow|result.npy] [--explain] [--no-optimize]
            [--cluster tcp://host:8786|PROFILE]   run on a Dask cluster (its Python: BASIN_PYTHON), on the
                                                  Basin engine of an ssh profile's host (one without a scheduler),
                                                  on Dask in SLURM jobs of a slurm profile (cancelled at exit),
                                                  or inside one srun/mpirun allocation of a runner profile
                                                  (exits with the pipeline's status)
            [--memory-limit 4GB] [--spill-limit 100GB] [--local-directory DIR]
            [--spill-compression lz4|zstd|none] [--stats]
            [--gpus all|none|0,2] [--device-memory-limit 16GB] [--device-pool-size 20GB] [--device-async-allocator] [--device-direct-copies]
            [--device-results-to-host]          every GPU output to the host at once (default: outputs stay
                                                  on the GPU until read on the host or spilled)
            [--worker-processes none|gpu|all]   workers as processes with their own memory: one that
                                                  dies loses only its tables, recomputed (default none)
            [--cpu-tasks all|reads]             with GPUs, what CPU workers run: everything, or only
                                                  file reads (the rest on the GPUs alone; default all)
  basin serve [folder] [--port N] [--cluster tcp://host:8786|PROFILE]
                                the workbench in a browser (prints its URL); runs on Dask with --cluster;
                                with an ssh profile that has no scheduler, the host's Basin engine and workspace;
                                its local cluster takes run's --workers, --memory-limit, --spill-limit,
                                --local-directory, --spill-compression and --gpus/--device-* flags
  basin stop <profile>          stop the Basin engine that runs and workbenches of an ssh profile left on its host
  basin demo [--workers N]      generate taxi-like sample data and run examples/taxi.ts
  basin info [--json]           cores, memory, GPUs, native build flavour
  basin help
`;

class UsageError extends Error {}

/** A flag that takes one of `choices`; another value is a usage error naming them. */
function choiceOption<T extends string>(flag: string, choices: readonly T[], v: string | undefined): T | undefined {
  if (v === undefined) return undefined;
  if (!choices.includes(v as T)) throw new UsageError(`${flag} needs one of ${choices.join(", ")}, got "${v}"`);
  return v as T;
}

/** `--stats`: the local cluster's memory, its worker processes' included; else this process's. */
async function memoryStatsText(cluster: Cluster | undefined): Promise<string> {
  const local = cluster ? (cluster instanceof LocalCluster ? cluster : undefined) : startedDefaultCluster();
  const totals = local ? await local.memoryTotals() : { memory: native().memoryStats(), gpus: native().gpuStats() };
  return formatMemoryStats(totals.memory, totals.gpus);
}

function sizeOption(flag: string, v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  try {
    parseBytes(v, flag, 1);
  } catch {
    throw new UsageError(`${flag} needs a size such as 4GB, 512MiB or 0.5 (of memory), got "${v}"`);
  }
  return v;
}

function workersOption(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--workers needs a positive integer, got "${v}"`);
  return n;
}

/** The cluster named by --cluster: a Dask scheduler address or a saved profile's name. */
async function clusterOption(v: string | undefined): Promise<Cluster | undefined> {
  if (v === undefined) return undefined;
  if (!/^[a-z]+:\/\/\S+$/.test(v) && !/^[\w.-]+$/.test(v))
    throw new UsageError(
      `--cluster needs a Dask scheduler address such as tcp://127.0.0.1:8786 or a profile name, got "${v}"`,
    );
  const { openCluster } = await import("../cluster/open.js");
  return openCluster(v, { log: (line) => process.stderr.write(`${line}\n`) });
}

/** A runner profile: the pipeline runs inside its job, on the driver rank. */
function runnerProfile(v: string | undefined): RunnerProfile | undefined {
  if (v === undefined || !/^[\w.-]+$/.test(v)) return undefined;
  const p = findProfile(v);
  return p.kind === "runner" ? p : undefined;
}

/** An ssh profile without a Dask scheduler: the pipeline runs on that host's own Basin engine. */
function remoteEngineProfile(v: string | undefined): SshProfile | undefined {
  if (v === undefined || !/^[\w.-]+$/.test(v)) return undefined;
  const p = findProfile(v);
  return p.kind === "ssh" && !p.scheduler ? p : undefined;
}

async function demo(): Promise<void> {
  const dir = join(tmpdir(), "basin-demo");
  const files = 4,
    rows = 250_000;
  const made = await generateDemoData(dir, files, rows, (n) => {
    if (process.stderr.isTTY)
      process.stderr.write(
        `\r\x1b[Kgenerating sample data: ${n.toLocaleString()} / ${(files * rows).toLocaleString()} trips`,
      );
  });
  if (process.stderr.isTTY) process.stderr.write("\r\x1b[K");
  process.stderr.write(`${made ? "generated" : "reusing"} ${(files * rows).toLocaleString()} sample trips in ${dir}\n`);
  process.env.BASIN_DEMO_DATA = dir;
  const example = fileURLToPath(new URL("../../../examples/taxi.ts", import.meta.url));
  process.stderr.write(`running ${example}\n`);
  await runFile(example, { optimize: true });
}

/**
 * Runs the CLI; resolves to the process exit code (0 only on success).
 *
 * @example
 * process.exitCode = await main(["run", "pipeline.ts", "--workers", "2"]);
 */
export async function main(argv: string[]): Promise<number> {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        workers: { type: "string" },
        port: { type: "string" },
        output: { type: "string", short: "o" },
        json: { type: "boolean" },
        explain: { type: "boolean" },
        "no-optimize": { type: "boolean" },
        cluster: { type: "string" },
        "memory-limit": { type: "string" },
        "spill-limit": { type: "string" },
        "local-directory": { type: "string" },
        "spill-compression": { type: "string" },
        stats: { type: "boolean" },
        gpus: { type: "string" },
        "device-memory-limit": { type: "string" },
        "device-pool-size": { type: "string" },
        "device-async-allocator": { type: "boolean" },
        "device-direct-copies": { type: "boolean" },
        "device-results-to-host": { type: "boolean" },
        "worker-processes": { type: "string" },
        "cpu-tasks": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
    const [command, ...rest] = positionals;
    if (values.help || command === "help" || command === undefined) {
      process.stdout.write(HELP);
      return command === undefined && !values.help ? 2 : 0;
    }
    // A flag another command takes would be ignored here: say so instead.
    const only: Record<string, readonly string[]> = {
      output: ["run"],
      explain: ["run"],
      "no-optimize": ["run"],
      stats: ["run"],
      port: ["serve"],
      json: ["info"],
    };
    for (const [flag, commands] of Object.entries(only))
      if (values[flag as keyof typeof values] !== undefined && !commands.includes(command))
        throw new UsageError(`--${flag} applies to basin ${commands.join(", ")} only, not basin ${command}`);
    if (values.output === "") throw new UsageError("--output needs a file or folder path");
    configureDefaultCluster({
      workers: workersOption(values.workers),
      memoryLimit: sizeOption("--memory-limit", values["memory-limit"]),
      spillLimit: sizeOption("--spill-limit", values["spill-limit"]),
      localDirectory: values["local-directory"],
      spillCompression: choiceOption("--spill-compression", SPILL_COMPRESSIONS, values["spill-compression"]),
      gpus: values.gpus === undefined ? undefined : parseGpuList(values.gpus),
      deviceMemoryLimit: sizeOption("--device-memory-limit", values["device-memory-limit"]),
      devicePoolSize: sizeOption("--device-pool-size", values["device-pool-size"]),
      deviceAsyncAllocator: values["device-async-allocator"],
      ...(values["device-direct-copies"] ? { deviceStagedCopies: false } : {}),
      ...(values["device-results-to-host"] ? { deviceKeepResults: false } : {}),
      workerProcesses: choiceOption("--worker-processes", WORKER_PROCESSES, values["worker-processes"]),
      cpuTasks: choiceOption("--cpu-tasks", CPU_TASKS, values["cpu-tasks"]),
    });
    // Asked for every GPU where there is none: the run goes on, on the CPU, and says so.
    if (values.gpus === "all" && native().gpuInfo().devices.length === 0) {
      const info = native().gpuInfo();
      const why = info.compiled ? info.note || "no CUDA device is visible" : "this Basin was built without CUDA";
      process.stderr.write(`basin: --gpus all: no GPU here (${why}); running on the CPU\n`);
    }
    switch (command) {
      case "run": {
        if (rest.length !== 1) throw new UsageError("basin run needs exactly one pipeline file");
        const remote = remoteEngineProfile(values.cluster);
        if (remote) {
          const { runRemote } = await import("./run_remote.js");
          await runRemote(rest[0], remote, { output: values.output, explain: values.explain });
          return 0;
        }
        const runner = runnerProfile(values.cluster);
        if (runner) {
          const { runOnRunnerProfile } = await import("./run_runner.js");
          return await runOnRunnerProfile(rest[0], runner, {
            output: values.output,
            explain: values.explain,
            optimize: !values["no-optimize"],
          });
        }
        const cluster = await clusterOption(values.cluster);
        let stats: string | undefined;
        try {
          await runFile(rest[0], {
            output: values.output,
            explain: values.explain,
            optimize: !values["no-optimize"],
            cluster,
          });
          // Read before the workers close: worker processes' stores and GPUs count too.
          if (values.stats) stats = await memoryStatsText(cluster);
        } finally {
          await cluster?.close();
        }
        if (stats) process.stderr.write(stats);
        return 0;
      }
      case "serve": {
        if (rest.length > 1) throw new UsageError("basin serve takes at most one folder");
        const port = values.port === undefined ? undefined : Number(values.port);
        if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535))
          throw new UsageError(`--port needs a port number, got "${values.port}"`);
        const { serveCommand } = await import("./serve.js");
        await serveCommand(rest[0], port, values.cluster, remoteEngineProfile(values.cluster));
        return 0;
      }
      case "stop": {
        if (rest.length !== 1) throw new UsageError("basin stop takes the name of an ssh profile");
        const profile = remoteEngineProfile(rest[0]);
        if (!profile)
          throw new BasinError(
            "BASIN_PLAN",
            `profile "${rest[0]}" is not an ssh profile without a scheduler: only those run a Basin engine on their host`,
          );
        const { RemoteEngine } = await import("../cluster/remote/remote_engine.js");
        const { sshAddress } = await import("../cluster/ssh/ssh_session.js");
        const where = `${sshAddress(profile)} (profile ${profile.name})`;
        const stopped = await RemoteEngine.stopOnHost(profile);
        process.stderr.write(
          stopped ? `stopped the Basin engine on ${where}\n` : `no Basin engine was running on ${where}\n`,
        );
        return 0;
      }
      case "demo":
        await demo();
        return 0;
      case "info": {
        const info = machineInfo();
        process.stdout.write(values.json ? `${JSON.stringify(info, null, 2)}\n` : `${formatInfo(info)}\n`);
        return 0;
      }
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (e) {
    if (e instanceof UsageError || String((e as { code?: unknown }).code).startsWith("ERR_PARSE_ARGS_")) {
      process.stderr.write(`basin: ${(e as Error).message}\n\n${HELP}`);
      return 2;
    }
    const err = BasinError.from(e);
    process.stderr.write(`error [${err.code}]: ${err.message}\n`);
    // Ctrl+C (130), a stop from the system (143): the shell's convention for "ended by a signal".
    if (err.code === "BASIN_CANCELLED") return cancelledExitCode();
    if (err.code === "BASIN_INTERNAL" && e instanceof Error && e.stack) process.stderr.write(`${e.stack}\n`);
    return 1;
  } finally {
    await closeDefaultCluster();
  }
}

/** Exit code with the store checked: tests run the CLI with BASIN_CHECK_LEAKS=1 and --expose-gc. */
export async function mainChecked(argv: string[]): Promise<number> {
  const code = await main(argv);
  if (!process.env.BASIN_CHECK_LEAKS) return code;
  await collectResults();
  const s = native().storeStats();
  if (s.handles === 0 && s.buffers === 0) return code;
  process.stderr.write(`error [BASIN_INTERNAL]: leaked ${s.handles} table(s), ${s.buffers} buffer(s) in the store\n`);
  return 1;
}
