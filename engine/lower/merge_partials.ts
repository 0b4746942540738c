// The merge of partial aggregates after a group-by's shuffle. Where each aggregate's
// partial state merges by a plain aggregate of it (sums and counts add up, minima,
// maxima, first and last of the states), the merge is a full aggregation of the state
// columns, then each mean divides its summed sum by its summed count: the same
// kernels, the same answers, and steps a GPU worker runs like any other aggregation
// (it has no merge of partial states). var/std and corr keep the "final" mode, whose
// moments only the CPU kernels merge.
import type { DType } from "../common/types.js";
import type { NativeAgg, NativeExpr } from "../graph/kernel_args.js";
import type { Step } from "../graph/tasks.js";
import type { SourceLocation } from "../common/errors.js";

/** An aggregate of the group-by, with the type of its input (none for a row count). */
export interface MergedAgg {
  agg: NativeAgg;
  argType?: DType;
}

/** The type of a plain aggregate's partial state (and of its merged value). */
function stateType(op: NativeAgg["op"], argType: DType | undefined): DType {
  if (op === "count") return "int64";
  if (op === "sum") return argType === "float64" ? "float64" : "int64";
  return argType ?? "int64";
}

const PLAIN = new Set<NativeAgg["op"]>(["sum", "min", "max", "first", "last", "count"]);

/**
 * The steps merging the concatenated partial states of `aggs` (keys first, at
 * 0..keyTypes.length-1, then each aggregate's states in order, as mode "partial" lays
 * them out) into the group-by's output.
 *
 * @example
 * mergePartials(["k"], ["int64"], [{ agg: { op: "mean", column: 1, name: "m" }, argType: "float64" }])
 * // [aggregate full sum(m#sum), sum(m#count)] then project k, m#sum / m#count as m
 */
export function mergePartials(keyNames: string[], keyTypes: DType[], aggs: MergedAgg[], loc?: SourceLocation): Step[] {
  const keys = keyTypes.map((_, i) => i);
  if (!aggs.every(({ agg }) => PLAIN.has(agg.op) || agg.op === "mean"))
    return [{ kind: "aggregate", keys, aggs: aggs.map((a) => a.agg), mode: "final", loc }];
  const full: NativeAgg[] = [];
  const col = (index: number, type: DType): NativeExpr => ({ kind: "col", index, type });
  const exprs: NativeExpr[] = keyTypes.map((t, i) => col(i, t));
  let at = keys.length;
  for (const { agg, argType } of aggs) {
    if (agg.op === "mean") {
      full.push(
        { op: "sum", column: at, name: `${agg.name}#sum` },
        { op: "sum", column: at + 1, name: `${agg.name}#count` },
      );
      // A group whose values were all null has count 0: x / 0 is null, as its mean is.
      const sum = col(keys.length + full.length - 2, "float64");
      exprs.push({
        kind: "binary",
        op: "div",
        left: sum,
        right: col(keys.length + full.length - 1, "int64"),
        type: "float64",
      });
      at += 2;
      continue;
    }
    full.push({ op: agg.op === "count" ? "sum" : agg.op, column: at, name: agg.name });
    exprs.push(col(keys.length + full.length - 1, stateType(agg.op, argType)));
    at += 1;
  }
  const merge: Step = { kind: "aggregate", keys, aggs: full, mode: "full", loc };
  if (!aggs.some(({ agg }) => agg.op === "mean")) return [merge];
  return [merge, { kind: "project", exprs, names: [...keyNames, ...aggs.map(({ agg }) => agg.name)], loc }];
}
