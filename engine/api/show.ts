// show(frame, "name"): a named result besides the pipeline's default export. The
// workbench computes each shown frame after the default export and shows it in its
// own result tab; `basin run` prints each after the default export.
import { BasinError } from "../common/errors.js";
import type { Plan } from "../common/plan.js";
import { DataFrame } from "./dataframe.js";
import { callerLocation } from "./source_location.js";

/** A frame passed to show(), as the driver collects it. */
export interface ShownFrame {
  name: string;
  plan: Plan;
}

const shown: ShownFrame[] = [];

/**
 * Adds `frame` to the run's results under `name` (default "result N") and returns
 * it unchanged, so it can sit in the middle of a chain.
 *
 * @example
 * import { readCsv, col, show } from "basin";
 * const trips = readCsv("trips.csv");
 * show(trips.groupBy("vendor").agg(col("fare").mean()), "fare by vendor");
 * export default trips.filter(col("fare").gt(100));
 */
export function show(frame: DataFrame, name?: string): DataFrame {
  const loc = callerLocation();
  if (!(frame instanceof DataFrame))
    throw new BasinError(
      "BASIN_PLAN",
      `show() needs a DataFrame as its first argument, got ${describeValue(frame)}; a bag or an array shows as the pipeline's default export (a bag becomes a frame with bag.toDataFrame(types))`,
      loc,
    );
  if (name !== undefined && (typeof name !== "string" || name.trim() === ""))
    throw new BasinError(
      "BASIN_PLAN",
      `show(frame, name): the name must be a non-empty string, got ${JSON.stringify(name)}`,
      loc,
    );
  const label = name ?? `result ${shown.length + 1}`;
  if (shown.some((s) => s.name === label))
    throw new BasinError(
      "BASIN_PLAN",
      `show(): the name "${label}" is already used by another shown frame; give each one its own name`,
      loc,
    );
  shown.push({ name: label, plan: frame.toPlan() });
  return frame;
}

/** The frames shown so far, emptying the list (the driver takes them once per pipeline). */
export function takeShown(): ShownFrame[] {
  return shown.splice(0);
}

/** What a value is, for the message: the class of an object (a Bag, an NDArray), else its type. */
function describeValue(v: unknown): string {
  if (v === null) return "null";
  const name = typeof v === "object" ? (v as object).constructor?.name : undefined;
  return name && name !== "Object" ? `a ${name}` : typeof v;
}
