// `basin run file.ts` on a local or Dask cluster: runs the pipeline through
// session/run_pipeline.ts with a progress bar and Ctrl+C, then prints or writes
// each result: the default export to stdout or --output, each show() frame after it.
import type { Cluster } from "../cluster/cluster.js";
import { defaultCluster } from "../cluster/default.js";
import { BasinError } from "../common/errors.js";
import { writeNpyFile } from "../api/array/npy.js";
import { checkWritable, folderFormat, jsChunks, outputFormat, writeFile, type OutputFormat } from "../io/write.js";
import type { OptimizeOptions } from "../plan/passes/pass.js";
import { explainPlan } from "../run/explain.js";
import { peekParts } from "../run/peek.js";
import type { ArrayResult } from "../run/run_plan.js";
import { isFolderOutput, writeStored } from "../run/write_frame.js";
import { runPipeline, type PipelineResult } from "../session/run_pipeline.js";
import { native } from "../native/addon.js";
import { formatArray } from "./format_array.js";
import { formatTable, MAX_PRINTED_ROWS } from "./format_table.js";
import { ProgressBar } from "./progress.js";
import { noteStop, STOP_SIGNALS } from "./stop_signals.js";

export interface RunFileOptions {
  output?: string;
  explain?: boolean;
  optimize: boolean;
  cluster?: Cluster;
}

const NO_PUSHDOWN: OptimizeOptions = { predicatePushdown: false, projectionPushdown: false };

/**
 * Runs a pipeline file and prints or writes its results.
 *
 * @example
 * await runFile("pipeline.ts", { output: "out.parquet", optimize: true });
 */
export async function runFile(file: string, opts: RunFileOptions): Promise<void> {
  // The output's format and folder are checked before any work, not after it.
  const npy = opts.output?.toLowerCase().endsWith(".npy") ?? false;
  // A folder (a trailing slash, or one that exists) gets a part file per partition.
  const folder = opts.output !== undefined && !npy && isFolderOutput(opts.output);
  const format = opts.output && !npy ? (folder ? folderFormat(opts.output) : outputFormat(opts.output)) : undefined;
  if (opts.output) checkWritable(folder ? opts.output.replace(/[/\\]+$/, "") : opts.output, undefined, folder);
  // The local workers start on their own threads while the pipeline compiles and
  // evaluates here (every local run needs them: frames, arrays and a Table export's compute).
  if (!opts.cluster) defaultCluster();
  const bar = new ProgressBar(process.stderr);
  const ac = new AbortController();
  // Ctrl+C, and a stop from the system or a closed terminal: the run is cancelled, and
  // its partial output removed, as for any cancellation. Only once the pipeline's code
  // has run (it runs on this thread): until then a signal ends the process at once, even
  // when that code never returns (a handler would wait for it forever).
  const onSigint = (signal: NodeJS.Signals) => {
    noteStop(signal);
    ac.abort("interrupted");
  };
  let listening = false;
  const listen = () => {
    if (listening) return;
    listening = true;
    for (const sig of STOP_SIGNALS) process.once(sig, onSigint);
  };
  let t0 = performance.now();
  const seconds = () => ((performance.now() - t0) / 1000).toFixed(2);
  const optimize = opts.optimize ? undefined : NO_PUSHDOWN;
  try {
    await runPipeline(
      file,
      {
        cluster: opts.cluster,
        optimize,
        // The default export, when a frame, is written as it is computed (never kept whole).
        output: opts.output && format ? { path: opts.output, format } : undefined,
        signal: ac.signal,
        onProgress: (e) => bar.update(e),
        before(next, name) {
          listen();
          if (name === undefined && next.kind === "array" && opts.output && !npy)
            throw new BasinError(
              "BASIN_PLAN",
              `the pipeline's default export is an array: write it with --output <file>.npy, not ${opts.output}`,
            );
          if (name === undefined && next.kind === "frame" && npy)
            throw new BasinError(
              "BASIN_PLAN",
              `${file}: --output ${opts.output} writes arrays, but the default export is not an array; use .csv, .parquet or .arrow`,
            );
          if (opts.explain && next.kind === "frame")
            process.stderr.write(
              `${name === undefined ? "" : `the plan of ${name}:\n`}${explainPlan(next.plan.root, { optimize })}\n\n`,
            );
          t0 = performance.now();
        },
      },
      async (r) => {
        listen();
        bar.done();
        // The default export goes to --output when there is one; shown frames are printed after it.
        if (r.name !== undefined) process.stdout.write(`\n${r.name}:\n`);
        await emit(
          r,
          r.name === undefined ? opts.output : undefined,
          format && r.name === undefined ? format : undefined,
          opts.cluster,
          seconds(),
          ac.signal,
        );
      },
    );
  } finally {
    bar.done();
    if (listening) for (const sig of STOP_SIGNALS) process.off(sig, onSigint);
  }
}

/** Prints or writes one result; a frame's parts are released. */
async function emit(
  r: PipelineResult,
  output: string | undefined,
  format: OutputFormat | undefined,
  cluster: Cluster | undefined,
  secs: string,
  signal: AbortSignal,
): Promise<void> {
  if (r.kind === "array") return emitArray(r.array, output, secs);
  if (r.kind === "written") {
    const w = r.written;
    process.stderr.write(
      cluster?.kind === "dask" ? `ran on Dask at ${cluster.label} in ${secs} s\n` : `${w.tasks} tasks in ${secs} s\n`,
    );
    warnSkipped(w.skippedLines);
    process.stderr.write(
      `wrote ${w.rows} rows to ${w.path}${w.files === undefined ? "" : ` (${w.files} part files)`}\n`,
    );
    return;
  }
  if (r.kind === "table") {
    warnSkipped(r.table.info.skippedLines);
    if (output && format) {
      // A folder gets the table as its one part file.
      if (isFolderOutput(output))
        await writeStored([native().tableFromJs(r.table.raw())], output, format, {}, undefined, signal, cluster);
      else await writeFile(jsChunks(r.table.raw()), output, format, {}, undefined, signal);
      process.stderr.write(`wrote ${r.table.numRows} rows to ${output}\n`);
    } else process.stdout.write(`${formatTable(r.table)}\n`);
    return;
  }
  const { parts } = r;
  process.stderr.write(
    cluster?.kind === "dask" ? `ran on Dask at ${cluster.label} in ${secs} s\n` : `${parts.tasks} tasks in ${secs} s\n`,
  );
  warnSkipped(parts.skippedLines);
  if (output && format) {
    // --output streams the result's partitions from the store to the file (never one table in memory).
    const { rows } = await writeStored(parts.refs, output, format, {}, undefined, signal);
    process.stderr.write(`wrote ${rows} rows to ${output}\n`);
  } else {
    // Only the rows printed leave the store: a result of any size prints at once, and
    // is freed after it is printed.
    const half = Math.floor(MAX_PRINTED_ROWS / 2);
    try {
      process.stdout.write(`${formatTable(await peekParts(parts, half, half, true))}\n`);
    } finally {
      for (const h of parts.refs) native().release(h);
    }
  }
}

async function emitArray(r: ArrayResult, output: string | undefined, secs: string): Promise<void> {
  process.stderr.write(`computed in ${secs} s\n`);
  if (!output) return void process.stdout.write(`${formatArray(r)}\n`);
  await writeNpyFile(r, output);
  process.stderr.write(`wrote an array of shape (${r.shape.join(", ")}) to ${output}\n`);
}

function warnSkipped(n: number): void {
  if (n > 0) process.stderr.write(`warning: skipped ${n} malformed line(s) (onBadLines: "skip")\n`);
}
