// Writers of frame results. CSV, Parquet and Arrow IPC are encoded natively by the
// workers, each partition by the task after the one that made it, as soon as it is made
// (the result is never kept whole), into one file assembled in order; a path ending in
// "/" (or naming a folder) gets one file per partition. Parquet with zstd where the
// build lacks it streams the result's parts out of the store on this thread.
import { mkdirSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { SourceLocation } from "../common/errors.js";
import type { Plan } from "../common/plan.js";
import { defaultCluster, localPart } from "../cluster/default.js";
import type { Cluster, StoredParts } from "../cluster/cluster.js";
import type { Step, Task } from "../graph/tasks.js";
import { computeParts, type ComputeOptions, type ProgressEvent } from "./stored.js";
import { native, type Handle } from "../native/addon.js";
import {
  checkParquetOptions,
  checkWritable,
  linkTarget,
  pathStat,
  storeChunks,
  tempBeside,
  writeCsvParts,
  writeFile,
  writeParquetParts,
  writeArrowParts,
  type OutputFormat,
  type WriteParquetOptions,
  type WriteSummary,
} from "../io/write.js";
import { nativeParquet, writtenRows } from "../io/write_part.js";
import { removeOrphans } from "../memory/orphans.js";
import { BasinError } from "../common/errors.js";

/** Options of `DataFrame.writeParquet`: how to write, and how to compute. */
export interface WriteParquetFrameOptions extends WriteParquetOptions, ComputeOptions {}

/**
 * Whether `path` names a folder output: it ends with "/" or is an existing folder.
 *
 * @example
 * isFolderOutput("out/") // true
 */
export function isFolderOutput(path: string): boolean {
  return /[/\\]$/.test(path) || (pathStat(path)?.isDirectory() ?? false);
}

/** A written result: what the writer did and what the run took. */
export interface WrittenResult extends WriteSummary {
  tasks: number;
  skippedLines: number;
}

/**
 * Runs a plan and writes its result to `path` (a file, or a folder of part files).
 * The path is checked before anything runs.
 *
 * @example
 * await writeFrame(df.toPlan(), "out.parquet", "parquet", { compression: "zstd" }, loc)
 */
export async function writeFrame(
  plan: Plan,
  path: string,
  format: OutputFormat,
  options: WriteParquetFrameOptions,
  loc: SourceLocation | undefined,
): Promise<WriteSummary> {
  const { tasks: _t, skippedLines: _s, ...summary } = await writeResult(plan, path, format, options, loc);
  return summary;
}

/**
 * writeFrame, also saying how many tasks the run took and how many malformed lines it
 * skipped (what `basin run --output` prints).
 *
 * @example
 * const { rows, tasks } = await writeResult(plan, "out.csv", "csv", {}, undefined);
 */
export async function writeResult(
  plan: Plan,
  path: string,
  format: OutputFormat,
  options: WriteParquetFrameOptions,
  loc: SourceLocation | undefined,
): Promise<WrittenResult> {
  if (typeof path !== "string" || path === "")
    throw new BasinError(
      "BASIN_PLAN",
      `write${format === "csv" ? "Csv" : format === "arrow" ? "Arrow" : "Parquet"}() needs a file path`,
      loc,
    );
  if (format === "parquet") checkParquetOptions(options, loc);
  const run = { tasks: 0, skippedLines: 0 };
  const compute = async (writeStep?: (part: number) => Step) => {
    const parts = await computeParts(plan, options, writeStep);
    run.tasks = parts.tasks;
    run.skippedLines = parts.skippedLines;
    return parts;
  };
  let summary: WriteSummary;
  try {
    if (isFolderOutput(path))
      summary = await writeFolder(
        path,
        format,
        options,
        loc,
        options.signal,
        compute,
        options.cluster,
        options.onProgress,
      );
    else {
      checkWritable(path, loc);
      const rows = async (step: (part: number) => Step) =>
        rowsOf(await compute(step), step, options.signal, options.cluster, options.onProgress);
      if (format === "csv") summary = await writeCsvParts(plan.root.schema, path, loc, rows);
      else if (format === "parquet" && nativeParquet(options))
        summary = await writeParquetParts(path, options, loc, rows);
      else if (format === "arrow") summary = await writeArrowParts(plan.root.schema, path, loc, rows);
      else {
        const { refs } = await compute();
        summary = await writeStored(
          refs,
          path,
          format,
          options,
          loc,
          options.signal,
          options.cluster,
          options.onProgress,
        );
      }
    }
  } catch (e) {
    throw BasinError.from(e, loc);
  }
  return { ...summary, ...run };
}

/**
 * The rows a run with a writer's step wrote: its outputs, or where the cluster did not
 * run the step (Dask), the result's parts written here by the local workers.
 */
async function rowsOf(
  parts: StoredParts,
  step: (part: number) => Step,
  signal: AbortSignal | undefined,
  cluster: Cluster | undefined,
  onProgress: ((e: ProgressEvent) => void) | undefined,
): Promise<number> {
  if (parts.written !== undefined) return writtenRows(parts.refs);
  try {
    return await writeParts(parts.refs, step, signal, cluster, onProgress);
  } finally {
    for (const h of parts.refs) native().release(h);
  }
}

/**
 * Runs a writer's step on every part of a stored result, in parallel on the local
 * workers (the cluster's when it is local); the parts stay the caller's. Resolves with
 * the rows written.
 */
async function writeParts(
  refs: Handle[],
  step: (part: number) => Step,
  signal: AbortSignal | undefined,
  cluster: Cluster | undefined,
  onProgress?: (e: ProgressEvent) => void,
): Promise<number> {
  const tasks: Task[] = refs.map((handle, i) => ({
    key: `write-${i}`,
    group: "write",
    deps: [],
    steps: [{ kind: "stored", handle }, step(i)],
  }));
  const output: Task = {
    key: "written",
    group: "written",
    deps: tasks.map((t) => ({ key: t.key, index: 0 })),
    steps: [{ kind: "parts" }],
  };
  const local = localPart(cluster) ?? defaultCluster();
  const r = await local.runGraph({ tasks: [...tasks, output], output: output.key, partitioned: true }, "a write", {
    signal,
    // The write tasks' progress (not the task gathering their row counts).
    onProgress: onProgress && ((e) => (e.group === "write" ? onProgress(e) : undefined)),
  });
  return writtenRows(r.refs);
}

const PART_NAME = /^part-\d{5,}\.(csv|parquet|arrow)$/;

/**
 * Writes one file per partition (part-00000.parquet, …) into a folder, as Dask's
 * to_parquet does. The parts are written by the workers into a hidden temp folder
 * beside it, renamed into place once all are written; a folder already there is
 * replaced only when it holds nothing but part files (an earlier output).
 */
async function writeFolder(
  path: string,
  format: OutputFormat,
  options: WriteParquetOptions,
  loc: SourceLocation | undefined,
  signal: AbortSignal | undefined,
  compute: (step: (part: number) => Step) => Promise<StoredParts>,
  cluster: Cluster | undefined,
  onProgress?: (e: ProgressEvent) => void,
): Promise<WriteSummary> {
  // Onto a link: the folder it points to is replaced, and the link stays (as for files).
  const dir = linkTarget(path.replace(/[/\\]+$/, "") || path);
  checkWritable(dir, loc, true);
  const existing = statSync(dir, { throwIfNoEntry: false });
  if (existing && !existing.isDirectory())
    throw new BasinError("BASIN_IO", `cannot write the folder ${path}: ${dir} is a file; name a folder`, loc);
  if (existing) {
    const other = readdirSync(dir).find((n) => !PART_NAME.test(n));
    if (other !== undefined)
      throw new BasinError(
        "BASIN_IO",
        `cannot write the folder ${path}: it holds ${other}, which is not a part file of an earlier output; empty it or name a new folder`,
        loc,
      );
  }
  removeOrphans(dirname(dir), `.${basename(dir)}.partial-`);
  removeOrphans(dirname(dir), `.${basename(dir)}.old-`);
  const tmp = tempBeside(dir, "partial");
  mkdirSync(tmp);
  try {
    const parquet =
      format === "parquet" ? { compression: options.compression, rowGroupSize: options.rowGroupSize } : undefined;
    const step = (part: number): Step => ({
      kind: "writePartFile",
      path: join(tmp, `part-${String(part).padStart(5, "0")}.${format}`),
      format,
      ...(parquet ? { parquet } : {}),
    });
    const rows = await rowsOf(await compute(step), step, signal, cluster, onProgress);
    const files = readdirSync(tmp).filter((n) => PART_NAME.test(n));
    let bytes = 0;
    for (const f of files) bytes += statSync(join(tmp, f)).size;
    putFolderInPlace(tmp, dir, loc);
    return { path, rows, bytes, files: files.length };
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
}

/**
 * Renames the finished folder `tmp` to `dir`. A folder already there (an earlier
 * output, or another run's write to the same folder that finished first) steps aside
 * and is removed after: the last write to finish wins, whole.
 */
function putFolderInPlace(tmp: string, dir: string, loc: SourceLocation | undefined): void {
  const olds: string[] = [];
  for (let attempt = 0; ; attempt++) {
    try {
      renameSync(tmp, dir);
      break;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if ((code !== "ENOTEMPTY" && code !== "EEXIST") || attempt >= 8)
        throw new BasinError("BASIN_IO", `cannot put the folder ${dir} in place: ${(e as Error).message}`, loc);
    }
    const old = tempBeside(dir, "old");
    try {
      renameSync(dir, old);
      olds.push(old);
    } catch (e) {
      // Gone meanwhile (another write moved it aside): try again.
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    }
  }
  for (const old of olds) rmSync(old, { recursive: true, force: true });
}

/**
 * Writes a stored result's parts to `path` in order (never one table in memory) and
 * releases every part. Each part is encoded by a local worker.
 *
 * @example
 * const { rows } = await writeStored(parts.refs, "out.csv", "csv");
 */
export async function writeStored(
  refs: Handle[],
  path: string,
  format: OutputFormat,
  options: WriteParquetOptions = {},
  loc?: SourceLocation,
  signal?: AbortSignal,
  cluster?: Cluster,
  onProgress?: (e: ProgressEvent) => void,
): Promise<WriteSummary> {
  try {
    if (isFolderOutput(path))
      return await writeFolder(
        path,
        format,
        options,
        loc,
        signal,
        async () => ({ refs: refs.splice(0), skippedLines: 0, tasks: 0 }),
        cluster,
        onProgress,
      );
    const rows = (step: (part: number) => Step) => writeParts(refs, step, signal, cluster, onProgress);
    const info = native().tableInfo(refs[0]);
    const schema = info.names.map((name, i) => ({ name, type: info.types[i] }));
    if (format === "csv") return await writeCsvParts(schema, path, loc, rows);
    if (format === "arrow") return await writeArrowParts(schema, path, loc, rows);
    if (format === "parquet" && nativeParquet(options)) return await writeParquetParts(path, options, loc, rows);
    // Progress in parts written, as the workers' write tasks report it.
    const onPart = (done: number, total: number) => onProgress?.({ group: "write", done, total });
    return await writeFile(storeChunks(refs, undefined, onPart), path, format, options, loc, signal);
  } finally {
    for (const h of refs) native().release(h);
  }
}
