// Runs an array plan on a cluster and brings the result into JS memory.
import { sizeOf, type ArrayDType, type ArrayNode } from "../../common/array_plan.js";
import { localCluster, type ComputeOptions } from "../../cluster/compute.js";
import { lowerArray } from "../../lower/lower_array.js";
import { native } from "../../native/addon.js";

/** The typed array each dtype computes to. */
export type ArrayData = Float64Array | Float32Array | BigInt64Array | Int32Array | Uint8Array;

/** A computed array: elements in C order. */
export interface ArrayResult {
  data: ArrayData;
  shape: number[];
  dtype: ArrayDType;
}

/** float64 elements as the typed array of `dtype`. */
export function toTyped(values: Float64Array, dtype: ArrayDType): ArrayData {
  switch (dtype) {
    case "float64": return values;
    case "float32": return Float32Array.from(values);
    case "int32": return Int32Array.from(values);
    case "bool": return Uint8Array.from(values, (v) => (v !== 0 ? 1 : 0));
    case "int64": return BigInt64Array.from(values, (v) => BigInt(v));
  }
}

/**
 * Lowers, runs and fetches an array plan, leaving nothing in the store.
 *
 * @example
 * const { data, shape } = await computeArray(x.node);
 */
export async function computeArray(node: ArrayNode, options: ComputeOptions = {}): Promise<ArrayResult> {
  const graph = lowerArray(node);
  const { ref } = await localCluster(options, "arrays").run(graph, { onProgress: options.onProgress, signal: options.signal });
  let values: Float64Array;
  try {
    values = native().tableToJs(ref).columns[0].values as Float64Array;
  } finally {
    native().release(ref);
  }
  const shape = node.kind === "mask" ? [values.length] : [...node.shape];
  if (sizeOf(shape) !== values.length) throw new Error(`internal: result has ${values.length} elements for shape ${shape}`);
  return { data: toTyped(values, node.dtype), shape, dtype: node.dtype };
}
