// `basin run` for a pipeline whose default export is an array: compute it with a
// progress bar, then write .npy or print its shape, dtype and a preview.
import { writeFileSync } from "node:fs";
import type { NDArray } from "../api/array/ndarray.js";
import type { ArrayResult } from "../run/run_plan.js";
import { BasinError } from "../common/errors.js";
import { encodeNpy } from "../io/npy.js";
import { ProgressBar } from "./progress.js";

/** At most `max` leading elements of a computed array as text, row by row for 2-D. */
export function formatArray(r: ArrayResult, max = 8): string {
  const v = (i: number) => String(r.dtype === "bool" ? r.data[i] !== 0 : r.data[i]);
  const head = `array shape (${r.shape.join(", ")}${r.shape.length === 1 ? "," : ""}) dtype ${r.dtype}`;
  if (r.shape.length === 2) {
    const [rows, cols] = r.shape;
    const lines: string[] = [];
    for (let i = 0; i < Math.min(rows, max); i++) {
      const cells = Array.from({ length: Math.min(cols, max) }, (_, j) => v(i * cols + j));
      lines.push(`  ${cells.join("  ")}${cols > max ? "  …" : ""}`);
    }
    if (rows > max) lines.push("  …");
    return [head, ...lines].join("\n");
  }
  const n = r.data.length;
  const cells = Array.from({ length: Math.min(n, max) }, (_, i) => v(i));
  return `${head}\n  ${cells.join("  ")}${n > max ? "  …" : ""}`;
}

/**
 * Computes an array pipeline; writes `output` (.npy) or prints a preview.
 *
 * @example
 * await runArray(x, "r.npy");
 */
export async function runArray(x: NDArray, output: string | undefined): Promise<void> {
  if (output && !output.toLowerCase().endsWith(".npy"))
    throw new BasinError("BASIN_PLAN", `the pipeline's default export is an array: write it with --output <file>.npy, not ${output}`);
  const bar = new ProgressBar(process.stderr);
  const t0 = performance.now();
  const ac = new AbortController();
  const onSigint = () => ac.abort("interrupted");
  process.once("SIGINT", onSigint);
  let r: ArrayResult;
  try {
    r = await x.compute({ onProgress: (e) => bar.update(e), signal: ac.signal });
  } finally {
    bar.done();
    process.off("SIGINT", onSigint);
  }
  process.stderr.write(`computed in ${((performance.now() - t0) / 1000).toFixed(2)} s\n`);
  if (output) {
    try {
      writeFileSync(output, encodeNpy(r));
    } catch (e) {
      throw new BasinError("BASIN_IO", `cannot write ${output}: ${(e as Error).message}`);
    }
    process.stderr.write(`wrote an array of shape (${r.shape.join(", ")}) to ${output}\n`);
  } else process.stdout.write(`${formatArray(r)}\n`);
}
