// A DataFrame's numeric columns as a 2-D float64 array, one chunk of rows per
// partition (dask's to_dask_array(lengths=True): the frame runs first, since a
// partition's length is known only then).
import { sizeOf } from "../../common/array_plan.js";
import { BasinError, type SourceLocation } from "../../common/errors.js";
import type { ComputeOptions } from "../../run/stored.js";
import { runPlan } from "../../run/run_plan.js";
import type { DataFrame } from "../dataframe.js";
import { col } from "../expr.js";
import { callerLocation } from "../source_location.js";
import { NDArray } from "./ndarray.js";

export interface FromDataFrameOptions extends ComputeOptions {
  /** The columns, in order (default: every int64, float64 and bool column). */
  columns?: string[];
}

const NUMERIC = new Set(["int64", "float64", "bool"]);
const TAG = "__basin_partition";

/** @internal The implementation of fromDataFrame and DataFrame.toArray, with the caller's location. */
export async function frameToArray(
  df: DataFrame,
  o: FromDataFrameOptions,
  loc: SourceLocation | undefined,
): Promise<NDArray> {
  const schema = df.schema;
  const names = o.columns ?? schema.filter((f) => NUMERIC.has(f.type)).map((f) => f.name);
  if (names.length === 0)
    throw new BasinError(
      "BASIN_PLAN",
      `toArray: the frame has no numeric (int64, float64, bool) columns; its columns are ${schema.map((f) => `${f.name}: ${f.type}`).join(", ")}`,
      loc,
    );
  for (const name of names) {
    const f = schema.find((x) => x.name === name);
    if (!f)
      throw new BasinError(
        "BASIN_PLAN",
        `toArray: column "${name}" does not exist; the frame has ${schema.map((x) => x.name).join(", ")}`,
        loc,
      );
    if (!NUMERIC.has(f.type))
      throw new BasinError(
        "BASIN_PLAN",
        `toArray: column "${name}" is ${f.type}, not numeric; convert it first (e.g. col("${name}").cast("float64")) or leave it out of columns`,
        loc,
      );
  }
  const projected = df.select(...names.map((n) => col(n).cast("float64").alias(n)));
  const { table: js, parts } = await runPlan({ kind: "taggedFrame", plan: projected.toPlan(), tag: TAG }, o);
  // Row-major values (nulls → NaN) and the rows of each partition.
  const k = names.length,
    m = js.rows;
  const values = new Float64Array(m * k);
  for (let j = 0; j < k; j++) {
    const c = js.columns[j];
    const v = c.values as Float64Array,
      valid = c.validity;
    for (let i = 0; i < m; i++) values[i * k + j] = valid && !valid[i] ? NaN : v[i];
  }
  const lens = new Array<number>(parts).fill(0);
  const tags = js.columns[k].values as BigInt64Array;
  for (let i = 0; i < m; i++) lens[Number(tags[i])]++;
  const shape = [m, k];
  if (sizeOf(shape) !== values.length) throw new Error("internal: frame array size");
  return new NDArray({ kind: "data", values, shape, chunks: [lens.length ? lens : [0], [k]], dtype: "float64", loc });
}

/**
 * A DataFrame's numeric columns (int64, float64, bool) as a 2-D float64 array of
 * shape (rows, columns), one chunk of rows per partition. Nulls become NaN; int64
 * values beyond 2^53 round. The frame is computed first (its partitions' lengths
 * are known only then), so the returned array is ready to build on.
 *
 * @example
 * const x = await array.fromDataFrame(trips, { columns: ["distance", "fare"] });
 * const { data } = await x.mean({ axis: 0 }).compute();
 */
export function fromDataFrame(df: DataFrame, o: FromDataFrameOptions = {}): Promise<NDArray> {
  return frameToArray(df, o, callerLocation());
}
