// Lowers a bag plan to tasks. Per-item operations fuse into one "bag" step per
// partition (decoded and encoded once); by-key operations reduce each partition,
// hash-partition the [key, value] pairs by the key's JSON in the store, and reduce
// again per bucket, like the frames' aggregations.
import { BAG_SCHEMA, type BagNode, type BagOp, type JsonValue } from "../common/bag.js";
import { BasinError } from "../common/errors.js";
import { jsonBlocks } from "../io/ndjson.js";
import { append, dep, MAX_SHUFFLE_PARTS, type Chain } from "./chain.js";
import { concatAll, type Dep, type Step, type Task, type TaskGraph } from "../graph/tasks.js";

/** What bag lowering needs of a graph builder. */
export interface TaskCloser {
  close(chain: Chain): string;
}

/** Appends ops to a chain, into its last step when that is a bag step too (fusion). */
function withOps(c: Chain, ops: BagOp[], keyed = false): Chain {
  const last = c.steps[c.steps.length - 1];
  if (last?.kind === "bag" && !last.keyed)
    return { deps: c.deps, steps: [...c.steps.slice(0, -1), { ...last, ops: [...last.ops, ...ops], keyed }] };
  return append(c, { kind: "bag", ops, keyed, loc: ops[0]?.loc });
}

/** Reduces each partition with `partial` (ending in [key, value] pairs), shuffles by key, reduces each bucket with `final`. */
function byKey(b: TaskCloser, chains: Chain[], partial: BagOp[], final: BagOp[]): Chain[] {
  const n = Math.min(chains.length, MAX_SHUFFLE_PARTS);
  const loc = partial[0]?.loc;
  const split = chains.map((c) => {
    const reduced = withOps(c, partial, n > 1);
    return b.close(n === 1 ? reduced : append(reduced, { kind: "hashPartition", keys: [0], parts: n, loc }));
  });
  return Array.from({ length: n }, (_, r) => ({
    deps: split.map((key) => ({ key, index: n === 1 ? 0 : r })),
    steps: [concatAll(split.length), { kind: "bag", ops: final, keyed: false, loc }],
  }));
}

function itemsStep(items: JsonValue[], loc: string | undefined): Step {
  return {
    kind: "values",
    schema: BAG_SCHEMA,
    columns: { [BAG_SCHEMA[0].name]: items.map((x) => JSON.stringify(x)) },
    rows: items.length,
    loc,
  };
}

/**
 * The partitions of a bag, as chains of steps not yet closed into tasks.
 *
 * @example
 * const chains = lowerBag(builder, bag.node);
 */
export function lowerBag(b: TaskCloser, node: BagNode): Chain[] {
  const loc = node.loc;
  switch (node.kind) {
    case "items":
      return node.partitions.map((items) => ({ deps: [], steps: [itemsStep(items, loc)] }));
    case "files": {
      const chains: Chain[] = [];
      for (const path of node.files) {
        let blocks;
        try {
          blocks = jsonBlocks(path, node.blocksize);
        } catch (e) {
          throw BasinError.from(e, loc);
        }
        for (const blk of blocks)
          chains.push({
            deps: [],
            steps: [{ kind: "bagRead", path, start: blk.start, end: blk.end, format: node.format, loc }],
          });
      }
      // Empty files: one empty partition, so that a bag always has one.
      return chains.length > 0 ? chains : [{ deps: [], steps: [itemsStep([], loc)] }];
    }
    case "map":
    case "filter":
    case "flatMap":
      return lowerBag(b, node.input).map((c) => withOps(c, [{ op: node.kind, fn: node.fn, loc }]));
    case "pluck":
      return lowerBag(b, node.input).map((c) =>
        withOps(c, [{ op: "pluck", key: node.key, default: node.default, loc }]),
      );
    case "foldBy":
      return byKey(
        b,
        lowerBag(b, node.input),
        [{ op: "foldPartial", key: node.key, binop: node.binop, initial: node.initial, loc }],
        [{ op: "foldCombine", combine: node.combine, initial: node.combineInitial, loc }],
      );
    case "groupBy":
      return byKey(b, lowerBag(b, node.input), [{ op: "pairs", key: node.key, loc }], [{ op: "groupPairs", loc }]);
    case "distinct": {
      const pairs: BagOp = { op: "pairs", key: node.key, loc };
      const first: BagOp = { op: "firstPerKey", loc };
      // Dedup each partition first (pairs → first → pairs again), then per bucket.
      return byKey(b, lowerBag(b, node.input), [pairs, first, pairs], [first]);
    }
    case "topK": {
      const top: BagOp = { op: "topK", k: node.k, key: node.key, descending: node.descending, loc };
      const deps = lowerBag(b, node.input).map((c) => dep(b.close(withOps(c, [top]))));
      return [{ deps, steps: [concatAll(deps.length), { kind: "bag", ops: [top], keyed: false, loc }] }];
    }
  }
}

class BagGraphBuilder implements TaskCloser {
  readonly tasks: Task[] = [];
  private counter = 0;
  close(chain: Chain): string {
    const group = chain.steps
      .map((s) => (s.kind === "bag" ? `bag(${s.ops.map((o) => o.op).join(",")})` : s.kind))
      .join("→");
    const key = `${group}-${this.counter++}`;
    this.tasks.push({ key, group, deps: chain.deps, steps: chain.steps });
    return key;
  }
}

/**
 * A task graph whose output is every item of the bag, in partition order.
 *
 * @example
 * const graph = bagGraph(bag.node);
 */
export function bagGraph(node: BagNode): TaskGraph {
  const b = new BagGraphBuilder();
  const chains = lowerBag(b, node);
  const last: Chain =
    chains.length === 1
      ? chains[0]
      : { deps: chains.map((c): Dep => dep(b.close(c))), steps: [concatAll(chains.length)] };
  return { tasks: b.tasks, output: b.close(last) };
}
