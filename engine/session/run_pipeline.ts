// Runs a pipeline file as the user sees it: evaluates it (its default export and the
// frames it passed to show()), runs each result on the cluster, in order, and hands
// each one over as soon as it is ready. `basin run` and the workbench's server both
// run pipelines through here; they differ only in what they do with the results.
import type { ArrayNode } from "../common/array_plan.js";
import type { Plan } from "../common/plan.js";
import type { Cluster, StoredParts } from "../cluster/cluster.js";
import { localPart } from "../cluster/default.js";
import { runPlan, type ArrayResult } from "../run/run_plan.js";
import { computeParts, type ComputeOptions } from "../run/stored.js";
import { writeResult, type WrittenResult } from "../run/write_frame.js";
import type { OutputFormat } from "../io/write.js";
import type { Table } from "../run/table.js";
import type { ProgressEvent } from "../scheduler/shell.js";
import { planPipelineResults } from "./driver.js";
import { evaluatePipeline, type EvaluatedPipeline } from "./evaluate_pipeline.js";

/** One result of a pipeline; `name` is absent for the default export, else the name show() gave. */
export type PipelineResult =
  /** A frame (or a bag, as a frame of its items' JSON text) left in the store as its partitions: the receiver owns them. */
  | { kind: "frame"; name?: string; plan: Plan; parts: StoredParts }
  | { kind: "array"; name?: string; node: ArrayNode; array: ArrayResult }
  /** A Table the pipeline computed itself (only when evaluated in this thread). */
  | { kind: "table"; name?: string; table: Table }
  /** The default export, a frame, written to RunPipelineOptions.output as it was computed. */
  | { kind: "written"; name?: undefined; plan: Plan; written: WrittenResult };

export interface RunPipelineOptions extends Omit<ComputeOptions, "cluster"> {
  /** Where frames run (default: the process's local cluster). Arrays run on the local cluster. */
  cluster?: Cluster;
  /** The editor's unsaved text for the file. */
  source?: string;
  /**
   * Evaluate the file in a driver worker thread (the server: user code that loops
   * cannot stall it, and aborting stops it at once) rather than in this thread (the
   * CLI: the process is the pipeline's own, and a file may export a Table it computed).
   */
  isolate?: boolean;
  /**
   * Where the default export goes when it is a frame: written there as it is computed
   * (engine/run/write_frame.ts), never kept whole; `receive` gets a "written" result.
   */
  output?: { path: string; format: OutputFormat };
  /** Called just before each result runs, e.g. to print `--explain` or refuse an output format; throwing stops the run. */
  before?: (next: { kind: "frame"; plan: Plan } | { kind: "array"; node: ArrayNode }, name: string | undefined) => void;
}

/**
 * Runs every result of the pipeline file `path`, the default export first, then each
 * shown frame in call order; `receive` takes ownership of each as it is ready. Progress
 * of a shown frame's tasks is reported under its name ("fares: scanCsv→filter").
 *
 * @example
 * await runPipeline("examples/taxi.ts", { onProgress: console.log }, (r) => {
 *   if (r.kind === "frame") for (const h of r.parts.refs) native().release(h);
 * });
 */
export async function runPipeline(
  path: string,
  options: RunPipelineOptions,
  receive: (result: PipelineResult) => void | Promise<void>,
): Promise<void> {
  const { cluster, source, isolate, before, onProgress, output, ...compute } = options;
  const planned: EvaluatedPipeline = isolate
    ? await planPipelineResults(path, source, compute.signal)
    : await evaluatePipeline(path, source, { tables: true });
  const progress = (name: string | undefined) =>
    onProgress && name !== undefined
      ? (e: ProgressEvent) => onProgress({ ...e, group: `${name}: ${e.group}` })
      : onProgress;
  if (planned.table) await receive({ kind: "table", table: planned.table });
  if (planned.array) {
    before?.({ kind: "array", node: planned.array }, undefined);
    const array = await runPlan(
      { kind: "array", node: planned.array },
      { ...compute, cluster: localPart(cluster), onProgress },
    );
    await receive({ kind: "array", node: planned.array, array });
  }
  for (const { name, plan } of [...(planned.plan ? [{ name: undefined, plan: planned.plan }] : []), ...planned.shown]) {
    before?.({ kind: "frame", plan }, name);
    if (name === undefined && output) {
      const written = await writeResult(
        plan,
        output.path,
        output.format,
        { ...compute, cluster, onProgress },
        undefined,
      );
      await receive({ kind: "written", plan, written });
      continue;
    }
    const parts = await computeParts(plan, { ...compute, cluster, onProgress: progress(name) });
    await receive({ kind: "frame", name, plan, parts });
  }
}
