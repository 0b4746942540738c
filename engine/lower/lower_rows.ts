// Lowering of the row operations: tail, distinct, per-group top-k, sampling and
// stacking. Distinct and top-k shrink every partition first, then meet by key in a
// hash shuffle (as aggregations do); tail and sample reduce like head and top-n.
import type { PlanNode } from "../common/plan.js";
import type { NativeExpr, SortKey } from "../graph/kernel_args.js";
import { nativeOf } from "../plan/resolve_plan.js";
import { append, dep, type Chain } from "./chain.js";
import { concatAll, type Step } from "../graph/tasks.js";
import { inMemoryBytes } from "./out_of_core.js";

/** What these lowerings need of the graph builder. */
export interface ChainBuilder {
  lower(node: PlanNode): Chain[];
  close(chain: Chain): string;
  /** Partitions of a shuffle of `bytes` from `inputs` partitions (see GraphBuilder.shuffleParts). */
  shuffleParts(bytes: number, inputs: number): number;
}

type NodeOf<K extends PlanNode["kind"]> = Extract<PlanNode, { kind: K }>;

/**
 * Runs `step` on every partition, hash-partitions the results by `keys`, and runs
 * `step` again on each bucket (the concatenation of its pieces in partition order, so
 * frame order survives among rows of one key). `input` sizes the shuffle under a
 * memory limit.
 */
function reduceByKey(b: ChainBuilder, input: PlanNode, chains: Chain[], keys: number[], step: Step): Chain[] {
  const n = keys.length === 0 ? 1 : b.shuffleParts(inMemoryBytes(input), chains.length);
  const shuffled = chains.map((c) => {
    const reduced = append(c, step);
    return b.close(n === 1 ? reduced : append(reduced, { kind: "hashPartition", keys, parts: n, loc: step.loc }));
  });
  return Array.from({ length: n }, (_, r) => ({
    deps: shuffled.map((key) => ({ key, index: n === 1 ? 0 : r })),
    steps: [concatAll(shuffled.length), step],
  }));
}

export function lowerTail(b: ChainBuilder, node: NodeOf<"tail">): Chain[] {
  const tail: Step = { kind: "tail", n: node.n, loc: node.loc };
  const deps = b.lower(node.input).map((c) => dep(b.close(append(c, tail))));
  return [{ deps, steps: [concatAll(deps.length), tail] }];
}

export function lowerDistinct(b: ChainBuilder, node: NodeOf<"distinct">): Chain[] {
  const keys = nativeOf(node).columns;
  return reduceByKey(b, node.input, b.lower(node.input), keys, { kind: "distinct", keys, loc: node.loc });
}

export function lowerTopK(b: ChainBuilder, node: NodeOf<"topK">): Chain[] {
  const input = node.input.schema;
  const loc = node.loc;
  // Project the keys first, then the other columns: the node's output layout.
  const exprs: NativeExpr[] = nativeOf(node).keys.map((k) => k.expr);
  const names = node.keys.map((k) => k.name);
  input.forEach((f, index) => {
    if (names.includes(f.name)) return;
    exprs.push({ kind: "col", index, type: f.type });
    names.push(f.name);
  });
  const pre: Step = { kind: "project", exprs, names, loc };
  const keys = node.keys.map((_, i) => i);
  const step: Step = {
    kind: "topK",
    keys,
    column: names.indexOf(node.by),
    k: node.k,
    descending: node.descending,
    loc,
  };
  return reduceByKey(
    b,
    node.input,
    b.lower(node.input).map((c) => append(c, pre)),
    keys,
    step,
  );
}

export function lowerSample(b: ChainBuilder, node: NodeOf<"sample">): Chain[] {
  const loc = node.loc;
  const w = node.input.schema.length;
  const keyed = b.lower(node.input).map((c, part) => append(c, { kind: "sampleKeys", seed: node.seed, part, loc }));
  const drop: Step = {
    kind: "project",
    exprs: node.schema.map((f, index): NativeExpr => ({ kind: "col", index, type: f.type })),
    names: node.schema.map((f) => f.name),
    loc,
  };
  const key: NativeExpr = { kind: "col", index: w, type: "float64" };
  if (node.n === undefined) {
    // Bernoulli: each row stays when its key is below the fraction; no data moves.
    const predicate: NativeExpr = {
      kind: "binary",
      op: "lt",
      left: key,
      right: { kind: "lit", value: node.fraction ?? 0, type: "float64" },
      type: "bool",
    };
    return keyed.map((c) => append(append(c, { kind: "filter", predicate, loc }), drop));
  }
  // The n rows with the smallest keys: a top-n by key, then back to frame order.
  const byKey: Step = { kind: "sort", keys: [{ column: w, descending: false, nullsFirst: false }], loc };
  const byPos: SortKey[] = [{ column: w + 1, descending: false, nullsFirst: false }];
  const head: Step = { kind: "head", n: node.n, loc };
  const deps = keyed.map((c) => dep(b.close(append(append(c, byKey), head))));
  return [{ deps, steps: [concatAll(deps.length), byKey, head, { kind: "sort", keys: byPos, loc }, drop] }];
}

export function lowerStack(b: ChainBuilder, node: NodeOf<"stack">): Chain[] {
  const { blocks } = nativeOf(node);
  const stack: Step = { kind: "stack", blocks, names: node.schema.map((f) => f.name), loc: node.loc };
  const chains = b.lower(node.input);
  if (chains.length === 1) return [append(chains[0], stack)];
  // One partition, so that all of block 0 comes before block 1.
  const deps = chains.map((c) => dep(b.close(c)));
  return [{ deps, steps: [concatAll(deps.length), stack] }];
}
