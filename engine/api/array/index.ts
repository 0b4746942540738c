// The `array` namespace: chunked n-dimensional arrays (dask.array-like).
export { NDArray, type ArrayLike, type IndexItem, type ReduceOptions, type VarOptions } from "./ndarray.js";
export {
  zeros,
  ones,
  full,
  arange,
  linspace,
  random,
  fromTypedArray,
  where,
  concatenate,
  stack,
  type CreateOptions,
  type RandomOptions,
  type TypedInput,
} from "./create.js";
export type { ArrayResult, ArrayData } from "../../run/run_plan.js";
export type { ChunksSpec } from "./shape.js";
export type { ArrayDType } from "../../common/array_plan.js";
export { readNpy, writeNpy } from "./npy.js";
export * as linalg from "./linalg.js";
export type { QrResult, SvdResult, SvdCompressedOptions } from "./linalg.js";
export { fromDataFrame, type FromDataFrameOptions } from "./from_frame.js";
