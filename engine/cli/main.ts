// The `basin` command line: run | demo | info | help.
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { DataFrame } from "../api/dataframe.js";
import { Bag } from "../api/bag/bag.js";
import { Table } from "../run/table.js";
import { BasinError } from "../common/errors.js";
import { closeDefaultCluster, configureDefaultCluster } from "../cluster/default.js";
import { native } from "../native/addon.js";
import { collectResults } from "../run/take.js";
import { loadPipeline } from "../session/load_pipeline.js";
import { generateDemoData } from "./demo_data.js";
import { formatTable } from "./format_table.js";
import { formatInfo, machineInfo } from "./info.js";
import { ProgressBar } from "./progress.js";
import { serveCommand } from "./serve.js";
import { NDArray } from "../api/array/ndarray.js";
import { runArray } from "./run_array.js";
import { checkWritable, jsChunks, outputFormat, storeChunks, writeFile, type OutputFormat } from "../io/write.js";
import { computeParts, type ComputeOptions } from "../run/stored.js";
import type { Cluster } from "../cluster/cluster.js";
import type { ProgressEvent } from "../scheduler/shell.js";
import { openCluster } from "../cluster/open.js";
import { formatMemoryStats } from "../memory/format_stats.js";
import { parseBytes } from "../memory/bytes.js";
import { SPILL_COMPRESSIONS, type SpillCompression } from "../memory/limits.js";
import { findProfile, type SshProfile } from "../cluster/profiles.js";
import { runRemote } from "./run_remote.js";
import { parseGpuList } from "../cluster/gpus.js";

const HELP = `basin — lazy dataframe pipelines on a local cluster

usage:
  basin run <pipeline.ts> [--workers N] [--output result.csv|result.parquet|result.arrow|result.npy] [--explain] [--no-optimize]
            [--cluster tcp://host:8786|PROFILE]   run on a Dask cluster (its Python: BASIN_PYTHON), on the
                                                  Basin engine of an ssh profile's host (one without a scheduler),
                                                  or on Dask in SLURM jobs of a slurm profile (cancelled at exit)
            [--memory-limit 4GB] [--spill-limit 100GB] [--local-directory DIR]
            [--spill-compression lz4|zstd|none] [--stats]
            [--gpus all|none|0,2] [--device-memory-limit 16GB] [--device-pool-size 20GB] [--device-async-allocator]
  basin serve [folder] [--port N] [--cluster tcp://host:8786|PROFILE]
                                the workbench in a browser (prints its URL); runs on Dask with --cluster;
                                with an ssh profile that has no scheduler, the host's Basin engine and workspace
  basin demo [--workers N]      generate taxi-like sample data and run examples/taxi.ts
  basin info [--json]           cores, memory, GPUs, native build flavour
  basin help
`;

class UsageError extends Error {}

function compressionOption(v: string | undefined): SpillCompression | undefined {
  if (v === undefined) return undefined;
  if (!SPILL_COMPRESSIONS.includes(v as SpillCompression)) throw new UsageError(`--spill-compression needs one of ${SPILL_COMPRESSIONS.join(", ")}, got "${v}"`);
  return v as SpillCompression;
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
  if (!/^[a-z]+:\/\/\S+$/.test(v) && !/^[\w.-]+$/.test(v)) throw new UsageError(`--cluster needs a Dask scheduler address such as tcp://127.0.0.1:8786 or a profile name, got "${v}"`);
  return openCluster(v, { log: (line) => process.stderr.write(`${line}\n`) });
}

/** An ssh profile without a Dask scheduler: the pipeline runs on that host's own Basin engine. */
function remoteEngineProfile(v: string | undefined): SshProfile | undefined {
  if (v === undefined || !/^[\w.-]+$/.test(v)) return undefined;
  const p = findProfile(v);
  return p.kind === "ssh" && !p.scheduler ? p : undefined;
}

async function runPipeline(file: string, opts: { output?: string; explain?: boolean; optimize: boolean; cluster?: Cluster }): Promise<void> {
  // The output's format and folder are checked before any work, not after it.
  const npy = opts.output?.toLowerCase().endsWith(".npy") ?? false;
  const format = opts.output && !npy ? outputFormat(opts.output) : undefined;
  if (opts.output) checkWritable(opts.output);
  const exported = await loadPipeline(file);
  if (exported instanceof NDArray) return runArray(exported, opts.output);
  if (npy) throw new BasinError("BASIN_PLAN", `${file}: --output ${opts.output} writes arrays, but the default export is not an array; use .csv, .parquet or .arrow`);
  // A bag runs as a frame of its items' JSON text (column "item"), printed or written like any frame.
  const value = exported instanceof Bag ? new DataFrame(exported.toPlan().root) : exported;
  if (value instanceof DataFrame) {
    if (opts.explain) process.stderr.write(`${value.explain()}\n\n`);
    const bar = new ProgressBar(process.stderr);
    const t0 = performance.now();
    const ac = new AbortController();
    const onSigint = () => ac.abort("interrupted");
    process.once("SIGINT", onSigint);
    const compute = {
      cluster: opts.cluster,
      onProgress: (e: ProgressEvent) => bar.update(e),
      signal: ac.signal,
      optimize: opts.optimize ? undefined : { predicatePushdown: false, projectionPushdown: false },
    };
    let done: { table?: Table; rows: number; skippedLines: number; tasks: number };
    try {
      // --output streams the result's partitions from the store to the file (never one table in memory).
      if (opts.output && format) {
        done = await writeParts(value, opts.output, format, compute);
      } else {
        const table = await value.compute(compute);
        done = { table, rows: table.numRows, ...table.info };
      }
    } finally {
      bar.done();
      process.off("SIGINT", onSigint);
    }
    const secs = ((performance.now() - t0) / 1000).toFixed(2);
    process.stderr.write(opts.cluster ? `ran on Dask at ${opts.cluster.label} in ${secs} s\n` : `${done.tasks} tasks in ${secs} s\n`);
    warnSkipped(done.skippedLines);
    if (done.table) process.stdout.write(`${formatTable(done.table)}\n`);
    else process.stderr.write(`wrote ${done.rows} rows to ${opts.output}\n`);
  } else if (value instanceof Table) {
    warnSkipped(value.info.skippedLines);
    if (opts.output && format) {
      await writeFile(jsChunks(value.raw()), opts.output, format);
      process.stderr.write(`wrote ${value.numRows} rows to ${opts.output}\n`);
    } else {
      process.stdout.write(`${formatTable(value)}\n`);
    }
  } else {
    throw new BasinError("BASIN_PLAN", `${file}: the default export must be a DataFrame (e.g. \`export default readCsv(...)\`), got ${typeof value}`);
  }
}

function warnSkipped(n: number): void {
  if (n > 0) process.stderr.write(`warning: skipped ${n} malformed line(s) (onBadLines: "skip")\n`);
}

/** Runs a frame and writes its result's partitions to `path`, one part at a time. */
async function writeParts(df: DataFrame, path: string, format: OutputFormat, options: ComputeOptions): Promise<{ rows: number; skippedLines: number; tasks: number }> {
  const { refs, skippedLines, tasks } = await computeParts(df.toPlan(), options);
  try {
    const { rows } = await writeFile(storeChunks(refs), path, format);
    return { rows, skippedLines, tasks };
  } finally {
    for (const h of refs) native().release(h);
  }
}

async function demo(): Promise<void> {
  const dir = join(tmpdir(), "basin-demo");
  const files = 4, rows = 250_000;
  const made = await generateDemoData(dir, files, rows, (n) => {
    if (process.stderr.isTTY) process.stderr.write(`\r\x1b[Kgenerating sample data: ${n.toLocaleString()} / ${(files * rows).toLocaleString()} trips`);
  });
  if (process.stderr.isTTY) process.stderr.write("\r\x1b[K");
  process.stderr.write(`${made ? "generated" : "reusing"} ${(files * rows).toLocaleString()} sample trips in ${dir}\n`);
  process.env.BASIN_DEMO_DATA = dir;
  const example = fileURLToPath(new URL("../../../examples/taxi.ts", import.meta.url));
  process.stderr.write(`running ${example}\n`);
  await runPipeline(example, { optimize: true });
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
        help: { type: "boolean", short: "h" },
      },
    });
    const [command, ...rest] = positionals;
    if (values.help || command === "help" || command === undefined) {
      process.stdout.write(HELP);
      return command === undefined && !values.help ? 2 : 0;
    }
    configureDefaultCluster({
      workers: workersOption(values.workers),
      memoryLimit: sizeOption("--memory-limit", values["memory-limit"]),
      spillLimit: sizeOption("--spill-limit", values["spill-limit"]),
      localDirectory: values["local-directory"],
      spillCompression: compressionOption(values["spill-compression"]),
      gpus: values.gpus === undefined ? undefined : parseGpuList(values.gpus),
      deviceMemoryLimit: sizeOption("--device-memory-limit", values["device-memory-limit"]),
      devicePoolSize: sizeOption("--device-pool-size", values["device-pool-size"]),
      deviceAsyncAllocator: values["device-async-allocator"],
    });
    switch (command) {
      case "run": {
        if (rest.length !== 1) throw new UsageError("basin run needs exactly one pipeline file");
        const remote = remoteEngineProfile(values.cluster);
        if (remote) {
          await runRemote(rest[0], remote, { output: values.output, explain: values.explain });
          return 0;
        }
        const cluster = await clusterOption(values.cluster);
        try {
          await runPipeline(rest[0], { output: values.output, explain: values.explain, optimize: !values["no-optimize"], cluster });
        } finally {
          await cluster?.close();
        }
        if (values.stats) process.stderr.write(formatMemoryStats(native().memoryStats(), native().gpuStats()));
        return 0;
      }
      case "serve": {
        if (rest.length > 1) throw new UsageError("basin serve takes at most one folder");
        const port = values.port === undefined ? undefined : Number(values.port);
        if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) throw new UsageError(`--port needs a port number, got "${values.port}"`);
        await serveCommand(rest[0], port, values.cluster, remoteEngineProfile(values.cluster));
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
