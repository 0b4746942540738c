// Lowers a window node. Windows follow the frame's row order across partitions:
//
// - Without keys, a two-phase scan keeps every partition in place and in parallel:
//   each partition task also emits small carries (its last rows, or for a negative
//   shift its first rows; cumulative windows carry the partition's aggregate), one scan
//   task turns them into the state before / after every partition, and each partition
//   is then computed as if those rows were attached to it. Only O(partitions × window)
//   rows move, never the data itself.
// - With keys (`over`), a group's rows must meet in one task: rows get a hidden row
//   index (partition << 32 | row), are hash-partitioned by key, computed per group
//   (buckets keep the row order: they concatenate in partition order), then range-
//   partitioned back by the index at partition boundaries and sorted by it, so that
//   the output has the input's order again.
import type { NativeExpr, NativeWindow, SortKey } from "../graph/kernel_args.js";
import type { PlanNode } from "../common/plan.js";
import { nativeOf } from "../plan/resolve_plan.js";
import { append, dep, MAX_SHUFFLE_PARTS, PARTITION_STRIDE, withPosition, type Chain } from "./chain.js";
import { concatAll, type Dep, type Step } from "../graph/tasks.js";

type WindowNode = Extract<PlanNode, { kind: "window" }>;

/** What lowering a window needs from the graph builder. */
export interface WindowGraph {
  close(chain: Chain): string;
  lower(node: PlanNode): Chain[];
}

/** Rows before a row that a window reads (cumulative: the one carried aggregate). */
function lookback(s: NativeWindow): number {
  if (s.op === "cumSum" || s.op === "cumMin" || s.op === "cumMax") return 1;
  if (s.op.startsWith("rolling")) return s.n - 1;
  return Math.max(0, s.n);
}

/** Rows after a row that a window reads (shift/diff with a negative offset). */
function lookahead(s: NativeWindow): number {
  return s.op === "shift" || s.op === "diff" ? Math.max(0, -s.n) : 0;
}

/**
 * The chains of a window node: its input's rows, in order, with the window columns appended.
 *
 * @example
 * case "window": return lowerWindow(node, this);
 */
export function lowerWindow(node: WindowNode, g: WindowGraph): Chain[] {
  const loc = node.loc;
  const input = node.input.schema;
  const resolved = nativeOf(node).windows;
  // Window inputs and keys that are not plain columns are computed into extra columns.
  const exprs: NativeExpr[] = input.map((f, index) => ({ kind: "col", index, type: f.type }));
  const names = input.map((f) => f.name);
  const columnOf = (e: NativeExpr): number => {
    if (e.kind === "col") return e.index;
    exprs.push(e);
    names.push(`__window_input${exprs.length}`);
    return exprs.length - 1;
  };
  const specs: NativeWindow[] = node.windows.map((w, i) => {
    const e = w.expr.kind === "window" ? w.expr : undefined;
    return {
      op: resolved[i].op,
      column: columnOf(resolved[i].arg),
      n: e?.n ?? 0,
      minPeriods: e?.minPeriods ?? 0,
      name: w.name,
    };
  });
  const keys = resolved[0].over.map(columnOf);
  const width = exprs.length;
  const pre: Step[] = width > input.length ? [{ kind: "project", exprs, names, loc }] : [];
  const window = (before?: number, after?: number): Step => ({ kind: "window", specs, keys, before, after, loc });
  // The window columns follow column `at`: keep the input's and the windows' columns only.
  const post = (at: number): Step[] => {
    if (at === input.length) return [];
    const cols: NativeExpr[] = node.schema.map((f, i) => ({
      kind: "col",
      index: i < input.length ? i : at + i - input.length,
      type: f.type,
    }));
    return [{ kind: "project", exprs: cols, names: node.schema.map((f) => f.name), loc }];
  };
  const chains = g.lower(node.input).map((c) => pre.reduce(append, c));
  const local = (c: Chain): Chain => post(width).reduce(append, append(c, window()));

  if (keys.length === 0) {
    const tail = Math.max(0, ...specs.map(lookback));
    const head = Math.max(0, ...specs.map(lookahead));
    if (chains.length === 1 || (tail === 0 && head === 0)) return chains.map(local);
    const firsts = chains.map((c) => g.close(append(c, { kind: "windowCarry", specs, tail, head, loc })));
    const scan = (output: number, rows: number, fromEnd: boolean) =>
      g.close({
        deps: firsts.map((key) => ({ key, index: output })),
        steps: [{ kind: "windowScan", specs, rows, fromEnd, loc }],
      });
    const before = tail > 0 ? scan(1, tail, true) : undefined;
    const after = head > 0 ? scan(2, head, false) : undefined;
    return firsts.map((key, p) => {
      const deps: Dep[] = [{ key, index: 0 }];
      const at = (scanKey: string | undefined) =>
        scanKey === undefined ? undefined : deps.push({ key: scanKey, index: p }) - 1;
      const step = window(at(before), at(after));
      return { deps, steps: [step, ...post(width)] };
    });
  }

  if (chains.length === 1) return chains.map(local);
  const P = chains.length;
  const n = Math.min(P, MAX_SHUFFLE_PARTS);
  const rowKey: SortKey[] = [{ column: width, descending: false, nullsFirst: false }];
  const mapped = chains.map((c, p) =>
    g.close(
      append(withPosition(c, p, "__row", loc), {
        kind: "hashPartition",
        keys,
        parts: n,
        loc,
      }),
    ),
  );
  // Output range j holds whole input partitions: boundary j is the last index of partition ceil(P(j+1)/n) - 1.
  const bounds = Array.from({ length: n - 1 }, (_, j) => Math.ceil((P * (j + 1)) / n) * PARTITION_STRIDE - 1);
  const boundsKey = g.close({
    deps: [],
    steps: [
      { kind: "values", schema: [{ name: "__row", type: "int64" }], columns: { __row: bounds }, rows: n - 1, loc },
    ],
  });
  const buckets = Array.from({ length: n }, (_, r) =>
    g.close({
      deps: [...mapped.map((key) => ({ key, index: r })), dep(boundsKey)],
      steps: [concatAll(P), window(), { kind: "rangePartition", keys: rowKey, bounds: P, parts: n, loc }],
    }),
  );
  return Array.from({ length: n }, (_, j) => ({
    deps: buckets.map((key) => ({ key, index: j })),
    steps: [concatAll(n), { kind: "sort", keys: rowKey, loc }, ...post(width + 1)],
  }));
}
