/**
 * The `basin` module that pipelines import.
 *
 * @example
 * import { readCsv, col } from "basin";
 * export default readCsv("trips.csv").groupBy("vendor").agg(col("fare").mean());
 */
export { col, lit, count, Expr, Rolling, type ExprLike, type RollingOptions } from "./expr.js";
export { ExprStr, type ParseOptions } from "./expr_str.js";
export { ExprDt, type DiffUnit } from "./expr_dt.js";
export { when, When, Then } from "./when.js";
export { concatStr, corr, type QuantileOptions } from "./expr.js";
export { concat, type ConcatOptions } from "./concat.js";
export type {
  FillSpec,
  SampleOptions,
  SampleSize,
  TopKOptions,
  UniqueOptions,
  ValueCountsOptions,
} from "./frame_rows.js";
export { DataFrame, GroupBy, type AggSpec, type JoinOptions, type SortOptions } from "./dataframe.js";
export { readCsv, type ReadCsvOptions } from "./read_csv.js";
export { readParquet, type ReadParquetOptions } from "./read_parquet.js";
export { readJson, type ReadJsonOptions } from "./read_json.js";
export { readArrow } from "./read_arrow.js";
export type { WriteParquetFrameOptions } from "../run/write_frame.js";
export type { WriteSummary, WriteParquetOptions } from "../io/write.js";
export { show } from "./show.js";
export { fromColumns, type FromColumnsOptions, type InputValue } from "./from_columns.js";
export { Table, type Value, type TableInfo } from "../run/table.js";
export { LocalCluster, type LocalClusterOptions } from "../cluster/local.js";
export { configureDefaultCluster, closeDefaultCluster } from "../cluster/default.js";
export { DaskCluster, type DaskClusterOptions, type DaskStatus } from "../cluster/dask/dask_cluster.js";
export type { ComputeOptions } from "../run/stored.js";
export type { ProgressEvent } from "../run/stored.js";
export { BasinError, type ErrorCode } from "../common/errors.js";
export type { DType, Field, Schema } from "../common/types.js";
export type { JoinHow } from "../common/plan.js";
export {
  bag,
  Bag,
  type FoldByOptions,
  type KeyArg,
  type PluckOptions,
  type TopKOptions as BagTopKOptions,
  type FromItemsOptions,
  type ReadTextOptions,
} from "./bag/index.js";
export type { UserFnOptions } from "./user_fn.js";
export type { JsonValue } from "../common/bag.js";
export { delayed, compute, computeWith, submit, Delayed, Future, type Lazy, type Computed } from "./delayed/delayed.js";
export * as array from "./array/index.js";
