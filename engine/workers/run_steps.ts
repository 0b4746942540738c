// Executes one task's steps on the calling thread (a worker thread), passing store
// handles between steps and releasing every intermediate it made.
import { BasinError } from "../common/errors.js";
import type { Field } from "../common/types.js";
import type { NativeExpr } from "../graph/kernel_args.js";
import type { Step } from "../graph/tasks.js";
import { native, type Handle, type JsColumn, type JsTable } from "../native/addon.js";
import { splitRows } from "../native/split_rows.js";
import { scanArrow } from "../io/arrow_ipc.js";
import { scanJson } from "../io/ndjson.js";
import { scanParquet } from "../io/parquet_scan.js";
import { ARROW_BATCH_ROWS, rowsWritten, writePartFile } from "../io/write_part.js";
import { decodeItems, encodeItems, itemsToTable, readBagLines, runBagOps } from "./bag_steps.js";
import { runCall } from "./call_step.js";
import { runArrayStep } from "./array_steps.js";
import { GPU_STEP_KINDS } from "../graph/gpu_steps.js";
import { own } from "../common/own.js";
import { unpersistedError } from "../common/unpersisted.js";

export interface StepsResult {
  outputs: Handle[];
  /** Rows across outputs: the size hint used for locality. */
  rows: number;
  /** Malformed CSV lines dropped under onBadLines: "skip". */
  skippedLines: number;
}

function valuesTable(
  schema: Field[],
  columns: Record<string, (number | string | boolean | null)[]>,
  rows: number,
): JsTable {
  const cols: JsColumn[] = schema.map((f) => {
    const v = own(columns, f.name)!;
    const validity = v.some((x) => x === null) ? Uint8Array.from(v, (x) => (x === null ? 0 : 1)) : null;
    switch (f.type) {
      case "int64":
      case "timestamp":
        return {
          type: f.type,
          // An int64 past 2^53 comes as its decimal text (from_columns.ts).
          values: BigInt64Array.from(v, (x) =>
            typeof x === "string" ? BigInt(x) : BigInt(x === null ? 0 : Math.trunc(x as number)),
          ),
          validity,
        };
      case "float64":
        return { type: f.type, values: Float64Array.from(v, (x) => (x === null ? 0 : (x as number))), validity };
      case "bool":
        return { type: f.type, values: Uint8Array.from(v, (x) => (x ? 1 : 0)), validity };
      case "date":
        return { type: f.type, values: Int32Array.from(v, (x) => (x === null ? 0 : (x as number))), validity };
      case "string":
        return { type: f.type, values: v as (string | null)[], validity };
    }
  });
  return { rows, names: schema.map((f) => f.name), columns: cols };
}

/**
 * Runs `steps` over `inputs` (owned by the scheduler, never released here). On a GPU
 * worker (`gpu` is its device) each run of steps the GPU can do goes there in one
 * call, so the data is uploaded once per run and only the result comes back.
 *
 * @example
 * runSteps([{ kind: "concat" }, { kind: "head", n: 5 }], [h1, h2]).outputs // [h]
 */
export function runSteps(steps: Step[], inputs: Handle[], gpu?: number): StepsResult {
  // Lowering gives every task a step; the outputs are then always this call's own.
  if (steps.length === 0) throw new BasinError("BASIN_INTERNAL", "a task without steps");
  const addon = native();
  // The task's inputs stay in memory while it runs (one read back from disk is not
  // spilled again to make room for the next).
  const pinned: Handle[] = [];
  try {
    for (const h of inputs) {
      addon.pin(h);
      pinned.push(h);
    }
    return runPinned(steps, inputs, gpu);
  } finally {
    for (const h of pinned) addon.unpin(h);
  }
}

/** Whether evaluating `e` can throw on some row: strict casts and functions can. */
function canFail(e: NativeExpr): boolean {
  switch (e.kind) {
    case "col":
    case "lit":
      return false;
    case "cast":
      return e.strict !== false || canFail(e.arg);
    case "fn":
      return true;
    case "binary":
      return canFail(e.left) || canFail(e.right);
    case "unary":
      return canFail(e.arg);
    case "fillNull":
      return canFail(e.arg) || canFail(e.fill);
  }
}

function runPinned(steps: Step[], inputs: Handle[], gpu: number | undefined): StepsResult {
  const addon = native();
  let current: Handle[] = inputs;
  let owned = false; // whether `current` holds handles this call made
  let skippedLines = 0;
  const replace = (next: Handle[]) => {
    if (owned) for (const h of current) addon.release(h);
    current = next;
    owned = true;
  };
  // Runs `f` on the concatenation of some inputs, freeing the concatenation after.
  const withInputs = <T>(at: number[], f: (h: Handle) => T): T => {
    if (at.length === 1) return f(inputs[at[0]]);
    const joined = addon.concat(at.map((i) => inputs[i]));
    try {
      return f(joined);
    } finally {
      addon.release(joined);
    }
  };
  for (let at = 0; at < steps.length; at++) {
    const step = steps[at];
    try {
      if (gpu !== undefined && current.length === 1 && GPU_STEP_KINDS.has(step.kind)) {
        const rest = steps.slice(at);
        const n = addon.gpuPrefix(gpu, current[0], rest);
        if (n > 0) {
          replace([addon.gpuRun(gpu, current[0], rest.slice(0, n))]);
          at += n - 1;
          continue;
        }
      }
      switch (step.kind) {
        case "scanCsv": {
          const r = addon.csvScan(step.path, step.start, step.end, step.options);
          skippedLines += r.skipped;
          replace([r.handle]);
          break;
        }
        case "scanParquet": {
          // A filter right after the scan is applied while decoding (dictionary tests, kept
          // strings only), and a choice of columns after it too (those read for the filter alone are never cut).
          const next = steps[at + 1];
          const fused = gpu === undefined && next?.kind === "filter" ? next.predicate : undefined;
          const then = fused ? steps[at + 2] : undefined;
          const select =
            then?.kind === "project" && then.exprs.every((e) => e.kind === "col")
              ? { index: then.exprs.map((e) => (e.kind === "col" ? e.index : -1)), names: then.names }
              : undefined;
          replace([scanParquet(step.path, step.rowGroups, step.columns, fused, select, step.rows)]);
          at += (fused ? 1 : 0) + (select ? 1 : 0);
          break;
        }
        case "scanJson":
          replace([scanJson(step.path, step.start, step.end, step.columns)]);
          break;
        case "scanArrow":
          replace([scanArrow(step.path, step.ranges, step.columns)]);
          break;
        case "values":
          replace([addon.tableFromJs(valuesTable(step.schema, step.columns, step.rows))]);
          break;
        case "stored":
          if (!addon.tableExists(step.handle)) throw unpersistedError(); // unpersist() came while the run waited
          addon.retain(step.handle);
          replace([step.handle]);
          break;
        case "parts":
          for (const h of inputs) addon.retain(h);
          replace([...inputs]);
          break;
        case "concat":
          replace([addon.concat(step.inputs.map((i) => inputs[i]))]);
          break;
        case "filter": {
          // A filter feeding an aggregation (through projections or not) runs with it:
          // when it keeps most rows, no column is cut (native/src/ops/filter_aggregate.h).
          // The projections may then see rows the filter drops, so they must be ones that cannot fail.
          let end = at + 1;
          while (steps[end]?.kind === "project") end++;
          const agg = steps[end];
          const projections = steps.slice(at + 1, end).flatMap((p) => (p.kind === "project" ? [p] : []));
          if (gpu === undefined && agg?.kind === "aggregate" && !projections.some((p) => p.exprs.some(canFail))) {
            const ps = projections.map((p) => ({ exprs: p.exprs, names: p.names }));
            replace([addon.filterAggregate(current[0], step.predicate, ps, agg.keys, agg.aggs, agg.mode)]);
            at = end;
            break;
          }
          replace([addon.filter(current[0], step.predicate)]);
          break;
        }
        case "project":
          replace([addon.evalExprs(current[0], step.exprs, step.names)]);
          break;
        case "aggregate":
          replace([addon.groupByAgg(current[0], step.keys, step.aggs, step.mode)]);
          break;
        case "head":
          replace([addon.slice(current[0], 0, step.n)]);
          break;
        case "hashPartition":
          replace(addon.hashPartition(current[0], step.keys, step.parts));
          break;
        case "split":
          replace(splitRows(current[0], step.parts));
          break;
        case "sort": {
          const h = current[0];
          replace([
            gpu !== undefined && addon.gpuSortable(gpu, h, step.keys)
              ? addon.gpuSort(gpu, h, step.keys)
              : addon.sortTable(h, step.keys),
          ]);
          break;
        }
        case "sortBoundaries":
          replace([addon.sortBoundaries(current[0], step.keys, step.parts)]);
          break;
        case "rangePartition": {
          const parts = addon.rangePartition(current[0], step.keys, inputs[step.bounds]);
          // Fewer distinct keys than parts give fewer boundaries: pad with empty parts.
          while (parts.length < step.parts) parts.push(addon.slice(current[0], 0, 0));
          replace(parts);
          break;
        }
        case "window": {
          const carry = (at: number | undefined) => (at === undefined ? null : inputs[at]);
          replace([addon.windowEval(current[0], step.specs, step.keys, carry(step.before), carry(step.after))]);
          break;
        }
        case "windowCarry": {
          const table = current[0];
          const tail = addon.windowCarry(table, step.specs, step.tail, true);
          let head: Handle;
          try {
            head = addon.windowCarry(table, step.specs, step.head, false);
          } catch (e) {
            addon.release(tail);
            throw e;
          }
          addon.retain(table); // kept as output 0 while replace() lets go of `current`
          replace([table, tail, head]);
          break;
        }
        case "windowScan":
          replace(addon.windowScan(inputs, step.specs, step.rows, step.fromEnd));
          break;
        case "rowIndex":
          replace([addon.rowIndex(current[0], step.start, step.name)]);
          break;
        case "join": {
          const left = current[0];
          if (step.broadcast && gpu === undefined) {
            replace([
              addon.broadcastJoin(
                left,
                step.right.map((i) => inputs[i]),
                step.spec,
              ),
            ]);
            break;
          }
          const onGpu = (right: Handle) => gpu !== undefined && addon.gpuJoinable(gpu, left, right, step.spec);
          replace([
            withInputs(step.right, (right) =>
              onGpu(right) ? addon.gpuJoin(gpu!, left, right, step.spec) : addon.hashJoin(left, right, step.spec),
            ),
          ]);
          break;
        }
        case "tail": {
          const rows = addon.tableInfo(current[0]).rows;
          replace([addon.slice(current[0], Math.max(0, rows - step.n), Math.min(rows, step.n))]);
          break;
        }
        case "distinct":
          replace([addon.distinctRows(current[0], step.keys)]);
          break;
        case "topK":
          replace([addon.topKRows(current[0], step.keys, step.column, step.k, step.descending)]);
          break;
        case "sampleKeys":
          replace([addon.sampleKeys(current[0], step.seed, step.part)]);
          break;
        case "bagRead":
          replace([encodeItems(readBagLines(step.path, step.start, step.end, step.format), false)]);
          break;
        case "bag":
          replace([encodeItems(runBagOps(decodeItems(current[0]), step.ops), step.keyed)]);
          break;
        case "bagToTable":
          replace([itemsToTable(decodeItems(current[0]), step.schema, step.loc)]);
          break;
        case "call":
          replace([runCall(step.call, inputs, step.loc)]);
          break;
        case "array":
          replace([runArrayStep(step.step, inputs)]);
          break;
        // A writer's step outputs how many rows it wrote (engine/io/write_part.ts writtenRows).
        case "writeCsvPart":
          addon.csvWritePart(step.sink, current[0], step.part);
          replace([rowsWritten(addon.tableRows(current[0]))]);
          break;
        case "writeParquetPart":
          addon.parquetWritePart(
            step.sink,
            current[0],
            step.part,
            step.parquet.compression ?? "snappy",
            step.parquet.rowGroupSize ?? 1 << 20,
          );
          replace([rowsWritten(addon.tableRows(current[0]))]);
          break;
        case "writeArrowPart":
          addon.arrowWritePart(step.sink, current[0], step.part, ARROW_BATCH_ROWS);
          replace([rowsWritten(addon.tableRows(current[0]))]);
          break;
        case "writePartFile":
          writePartFile(current[0], step.path, step.format, step.parquet);
          replace([rowsWritten(addon.tableRows(current[0]))]);
          break;
        case "stack": {
          const h = current[0];
          const parts: Handle[] = [];
          try {
            for (const exprs of step.blocks) parts.push(addon.evalExprs(h, exprs, step.names));
            replace([addon.concat(parts)]);
          } finally {
            for (const p of parts) addon.release(p);
          }
          break;
        }
      }
    } catch (e) {
      if (owned) for (const h of current) addon.release(h);
      // Steps the user did not write (a shuffle's concat) name the task's nearest user step.
      throw BasinError.from(e, step.loc ?? steps.find((s) => s.loc)?.loc);
    }
  }
  // (tableRows: an output already spilled to make room for the next is not read back)
  const rows = current.reduce((n, h) => n + addon.tableRows(h), 0);
  return { outputs: current, rows, skippedLines };
}
