// .npy files in and out of arrays.
import { readFileSync, writeFileSync } from "node:fs";
import type { ArrayDType } from "../../common/array_plan.js";
import { BasinError } from "../../common/errors.js";
import { decodeNpy, encodeNpy, type NpyArray } from "../../io/npy.js";
import { writeThroughTemp } from "../../io/write.js";
import type { SourceLocation } from "../../common/errors.js";
import type { ComputeOptions } from "../../run/stored.js";
import { callerLocation } from "../source_location.js";
import { NDArray } from "./ndarray.js";
import { fromTypedArray } from "./create.js";
import type { ChunksSpec } from "./shape.js";

/**
 * An array from a .npy file (read when called; chunked as given; `dtype` converts, as
 * NumPy's astype: int64 values past ±2^53 need "float64", which rounds them).
 *
 * @example
 * const x = array.readNpy("x.npy", { chunks: 1000 });
 */
export function readNpy(path: string, o: { chunks?: ChunksSpec; dtype?: ArrayDType } = {}): NDArray {
  const loc = callerLocation();
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw new BasinError("BASIN_IO", `cannot read ${path}: ${(e as Error).message}`, loc);
  }
  let a;
  try {
    a = decodeNpy(bytes, path);
  } catch (e) {
    throw BasinError.from(e, loc);
  }
  try {
    return fromTypedArray(a.data, { shape: a.shape, dtype: o.dtype ?? a.dtype, chunks: o.chunks });
  } catch (e) {
    const err = BasinError.from(e, loc);
    throw new BasinError(err.code, `${path}: ${err.detail}`, loc);
  }
}

/**
 * Computes the array and writes it as a .npy file.
 *
 * @example
 * await array.writeNpy(x.sum({ axis: 0 }), "out.npy");
 */
export async function writeNpy(x: NDArray, path: string, options: ComputeOptions = {}): Promise<void> {
  const loc = callerLocation();
  await writeNpyFile(await x.compute(options), path, loc);
}

/**
 * A computed array as a .npy file at `path`, through a temp file renamed over it: a
 * failed write (a full disk) keeps the old file, and leaves no half-written one.
 *
 * @example
 * await writeNpyFile(await x.compute(), "out.npy");
 */
export async function writeNpyFile(r: NpyArray, path: string, loc?: SourceLocation): Promise<void> {
  const bytes = encodeNpy(r);
  await writeThroughTemp(path, loc, async (tmp) => writeFileSync(tmp, bytes, { flag: "wx" }));
}
