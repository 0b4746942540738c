// Runs one array step on a worker: reads the input chunks out of the store, runs
// the kernel, puts the result back as a one-column float64 table.
import { sizeOf } from "../common/array_plan.js";
import type { ArrayStep } from "../graph/array_steps.js";
import { native, type Handle } from "../native/addon.js";
import * as K from "./array_kernels.js";
import * as L from "./linalg_kernels.js";

/** The elements of a chunk table. */
export function readChunk(h: Handle): Float64Array {
  return native().tableToJs(h).columns[0].values as Float64Array;
}

/** A new chunk table holding `values`. */
export function writeChunk(values: Float64Array): Handle {
  return native().tableFromJs({
    rows: values.length,
    names: ["v"],
    columns: [{ type: "float64", values, validity: null }],
  });
}

/**
 * Runs `step` over the task's input chunks; returns the new chunk (the caller owns it).
 *
 * @example
 * const h = runArrayStep({ op: "data", values: new Float64Array([1, 2]) }, []);
 */
export function runArrayStep(step: ArrayStep, inputs: Handle[]): Handle {
  const read = (i: number) => readChunk(inputs[i]);
  switch (step.op) {
    case "generate":
      return native().arrayGenerate(step.gen, step.dtype, step.shape, step.offset, step.full);
    case "data":
      return writeChunk(step.values);
    case "map":
      return native().arrayMap(step.expr, inputs, step.shape);
    case "assemble": {
      const [p] = step.pieces;
      // A piece that is its whole input, as is: share the chunk instead of copying it.
      if (
        step.pieces.length === 1 &&
        p.step.every((s) => s === 1) &&
        p.start.every((s) => s === 0) &&
        sizeOf(p.count) === sizeOf(p.shape) &&
        sizeOf(p.shape) === sizeOf(step.shape)
      ) {
        native().retain(inputs[p.input]);
        return inputs[p.input];
      }
      const used = new Map<number, Float64Array>();
      for (const q of step.pieces) if (!used.has(q.input)) used.set(q.input, read(q.input));
      const arrays = inputs.map((_, i) => used.get(i) ?? new Float64Array(0));
      return writeChunk(K.assemble(step.shape, step.pieces, arrays));
    }
    case "transpose":
      return native().arrayTranspose(inputs[0], step.shape, step.axes);
    case "partial":
      return writeChunk(K.partial(step.red, read(0), step.shape, step.axes, step.offset, step.full));
    case "combine":
      return writeChunk(
        K.combine(
          step.red,
          step.size,
          inputs.map((_, i) => read(i)),
          step.final,
        ),
      );
    case "matmul":
      return native().arrayMatmul(step.m, step.n, step.ks, inputs, step.dtype);
    case "cumsum": {
      const prev = step.carry ? { values: read(1), shape: step.prevShape! } : undefined;
      return writeChunk(K.narrow(K.cumsum(read(0), step.shape, step.axis, prev), step.dtype));
    }
    case "mask":
      return writeChunk(K.maskSelect(read(0), read(1)));
    case "qr":
      return writeChunk(L.qrBlock(read(0), step.m, step.n));
    case "tsqr":
      return writeChunk(
        L.tsqrStack(
          step.blocks,
          step.n,
          step.svd,
          inputs.map((_, i) => read(i)),
        ),
      );
    case "tsqrApply":
      return writeChunk(L.tsqrApply(read(0), read(1), step.m, step.ki, step.offset, step.k));
    case "extract":
      return writeChunk(read(0).slice(step.start, step.start + step.count));
    case "solve":
      return writeChunk(L.solve(read(0), read(1), step.n, step.k));
  }
}
