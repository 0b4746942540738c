// A pipeline file evaluated in this thread: its default export and the frames it
// passed to show(), as plans. The driver worker (the server runs user code off its
// main thread) and `basin run` (the process is the pipeline's own) both use it.
import { NDArray } from "../api/array/ndarray.js";
import { Bag } from "../api/bag/bag.js";
import { DataFrame } from "../api/dataframe.js";
import { takeShown, type ShownFrame } from "../api/show.js";
import type { ArrayNode } from "../common/array_plan.js";
import { BasinError } from "../common/errors.js";
import type { Plan } from "../common/plan.js";
import { Table } from "../run/table.js";
import { loadPipeline } from "./load_pipeline.js";

/**
 * A pipeline's plans: its default export and the frames it passed to show(). An
 * array default export comes as `array` (its plan holds typed arrays, so it travels
 * by structured clone, not JSON) with `plan` absent.
 */
export interface PipelinePlans {
  plan?: Plan;
  array?: ArrayNode;
  shown: ShownFrame[];
}

/** Evaluated in this thread, a default export may also be a Table the file computed itself. */
export interface EvaluatedPipeline extends PipelinePlans {
  table?: Table;
}

/**
 * Imports the pipeline file (or unsaved `source` for it) and classifies its default
 * export; a Table export is accepted only with `tables` (it cannot leave the thread).
 *
 * @example
 * const { plan, shown } = await evaluatePipeline("examples/taxi.ts");
 */
export async function evaluatePipeline(
  path: string,
  source?: string,
  options: { tables?: boolean } = {},
): Promise<EvaluatedPipeline> {
  takeShown(); // a pipeline's shown frames are its own, not an earlier one's
  const value = await loadPipeline(path, source);
  const shown = takeShown();
  if (value instanceof NDArray) return { array: value.node, shown };
  if (value instanceof DataFrame || value instanceof Bag) return { plan: value.toPlan(), shown };
  if (options.tables && value instanceof Table) return { table: value, shown };
  throw new BasinError(
    "BASIN_PLAN",
    `${path}: the default export must be a DataFrame, a Bag or an array (end the file with \`export default <frame>\`), got ${typeof value}`,
  );
}
