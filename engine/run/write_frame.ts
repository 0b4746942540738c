import type { SourceLocation } from "../common/errors.js";
import type { Plan } from "../common/plan.js";
import { computeParts, type ComputeOptions } from "./stored.js";
import { native, type Handle } from "../native/addon.js";
import {
  checkParquetOptions,
  checkWritable,
  storeChunks,
  writeFile,
  type OutputFormat,
  type WriteParquetOptions,
  type WriteSummary,
} from "../io/write.js";
import { BasinError } from "../common/errors.js";

/** Options of `DataFrame.writeParquet`: how to write, and how to compute. */
export interface WriteParquetFrameOptions extends WriteParquetOptions, ComputeOptions {}

/**
 * Runs a plan and writes its result to `path`, streaming it out of the store in
 * chunks. The path is checked before anything runs.
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
  if (typeof path !== "string" || path === "")
    throw new BasinError(
      "BASIN_PLAN",
      `write${format === "csv" ? "Csv" : format === "arrow" ? "Arrow" : "Parquet"}() needs a file path`,
      loc,
    );
  if (format === "parquet") checkParquetOptions(options, loc);
  checkWritable(path, loc);
  let refs;
  try {
    refs = (await computeParts(plan, options)).refs;
  } catch (e) {
    throw BasinError.from(e, loc);
  }
  return writeStored(refs, path, format, options, loc);
}

/**
 * Writes a stored result's parts to `path` in order, streaming them out of the store
 * in chunks (never one table in memory), and releases every part.
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
): Promise<WriteSummary> {
  try {
    return await writeFile(storeChunks(refs), path, format, options, loc, signal);
  } finally {
    for (const h of refs) native().release(h);
  }
}
