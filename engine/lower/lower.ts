// Turns an optimized logical plan into a partitioned task graph. Narrow operations
// (scan, filter, project, partial aggregation) are fused into one task per
// partition; wide ones (aggregation, head) end those tasks and start new ones.
import { statSync } from "node:fs";
import { BasinError } from "../common/errors.js";
import { HOLISTIC_AGGS } from "../common/expr.js";
import type { PlanNode } from "../common/plan.js";
import { unpersistedError } from "../common/unpersisted.js";
import { native } from "../native/addon.js";
import type { NativeAgg, NativeExpr } from "../graph/kernel_args.js";
import { csvBlocks } from "./csv_blocks.js";
import { fileScanSteps } from "../io/scan_steps.js";
import { nativeOf, resolvePlan } from "../plan/resolve_plan.js";
import { parentCounts } from "../plan/shared_plan.js";
import { concatAll, type Dep, type Step, type Task, type TaskGraph } from "../graph/tasks.js";
import { append, dep, type Chain } from "./chain.js";
import { lowerWindow } from "./window.js";
import { rangeSort } from "./range_sort.js";
import { mergePartials } from "./merge_partials.js";
import { broadcastJoined, hashJoined, keyedWithin, NOT_KEYED, ONE_PARTITION, projected, type Keyed } from "./keyed.js";
import { lowerBag } from "./lower_bag.js";
import { lowerDistinct, lowerSample, lowerStack, lowerTail, lowerTopK } from "./lower_rows.js";
import { expectedBytes } from "../plan/passes/join_strategy.js";
import {
  aggregateInputBytes,
  wholeFits,
  inMemoryBytes,
  inMemoryParts,
  scanBlockBytes,
  shufflePlan,
  type DeviceShare,
  type MemoryBudget,
} from "./out_of_core.js";

/** Inputs expected below this many bytes are sorted whole, by one task. */
const SMALL_SORT_BYTES = 16 * 1024 * 1024;

/** How to lower a plan. */
export interface LowerOptions {
  /** The memory limit the tasks run under: shuffles of inputs larger than a task may hold get more, smaller partitions (grace hash). */
  budget?: MemoryBudget;
  /** The output task outputs the result's partitions as they are (a consumer reading them in parts) instead of concatenating them. */
  parts?: boolean;
  /**
   * With `parts`: exactly this many output partitions; adjacent partitions are
   * concatenated by one task per group, so the groups are built in parallel, and
   * with fewer partitions than groups each is split into row ranges.
   */
  groups?: number;
  /** Where the GPUs alone compute: shuffles get as few buckets as fit a device (see inMemoryParts). */
  devices?: DeviceShare;
  /** The workers that parse files (every worker, or the CPU workers where the GPUs alone compute): CSV scans get a multiple of this many blocks. */
  scanWorkers?: number;
}

/** The smallest CSV block a scan is cut into to reach a block count. */
const MIN_BLOCK = 1 << 20;

/**
 * The block size a CSV scan of `total` bytes is cut at: at most `blocksize`, into at
 * least `minBlocks` blocks (persist()'s partitions: none then split or concatenated),
 * and into a whole number of rounds of `workers` blocks, so that every worker parses
 * and none of the last round's waits on one straggling block (G1_1e7's 509 MB was 8
 * blocks of 64 MiB for 16 workers; G1_1e8's 76 blocks left 12 of them a fifth round).
 * Never below MIN_BLOCK.
 *
 * @example
 * csvBlockBytes(509e6, 64 << 20, 16, 1) // 31812500: 16 blocks
 */
export function csvBlockBytes(total: number, blocksize: number, workers: number, minBlocks: number): number {
  let blocks = Math.max(minBlocks, Math.ceil(total / blocksize));
  if (workers > 1) blocks = Math.ceil(blocks / workers) * workers;
  if (blocks <= 1) return blocksize;
  return Math.min(blocksize, Math.max(MIN_BLOCK, Math.ceil(total / blocks)));
}

/** Bytes of the files (a missing one counts 0: its scan reports it). */
function totalBytes(files: string[]): number {
  return files.reduce((n, f) => {
    try {
      return n + statSync(f).size;
    } catch {
      return n;
    }
  }, 0);
}

class GraphBuilder {
  readonly tasks: Task[] = [];
  private counter = 0;

  /**
   * @param minScanBlocks CSV scans are cut into at least this many blocks (smaller
   * than their blocksize when need be): persist() asks for its partition count, so
   * each partition is one block, none split or concatenated.
   * @param scanWorkers the workers that parse: scans are cut into rounds of this many blocks.
   */
  constructor(
    private readonly budget?: MemoryBudget,
    private readonly minScanBlocks = 0,
    private readonly scanWorkers = 0,
    private readonly devices?: DeviceShare,
  ) {}

  /** Partitions of a shuffle of `bytes` from `inputs` partitions: inMemoryParts, or enough for one to fit under the memory limit (grace hash). */
  shuffleParts(bytes: number, inputs: number): number {
    return shufflePlan(bytes, inMemoryParts(bytes, inputs, this.devices), this.budget).parts;
  }

  /** Closes a chain into a task and returns a reference to its outputs. */
  close(chain: Chain): string {
    // A shared node's chain has no steps: its task's output is already there.
    if (chain.steps.length === 0) {
      if (chain.deps.length === 1 && chain.deps[0]!.index === 0) return chain.deps[0]!.key;
      chain = { deps: chain.deps, steps: [concatAll(chain.deps.length)] };
    }
    const group = chain.steps.map((s) => s.kind).join("→");
    const key = `${group}-${this.counter++}`;
    this.tasks.push({ key, group, deps: chain.deps, steps: chain.steps });
    return key;
  }

  /** How each lowered node's partitions split its rows (./keyed.ts). */
  private readonly keys = new Map<PlanNode, Keyed>();

  /** The keying of a node lowered before. */
  keyedOf(node: PlanNode): Keyed {
    return this.keys.get(node) ?? NOT_KEYED;
  }

  /** Nodes with several parents (plan/shared_plan.ts), set by the first lower() of a plan. */
  private parents: Map<PlanNode, number> | null = null;
  private readonly shared = new Map<PlanNode, Dep[]>();

  /**
   * The node's partitions as open chains. A node with several parents is computed
   * once: its chains are closed into tasks, and each parent reads their outputs.
   */
  lower(node: PlanNode): Chain[] {
    this.parents ??= parentCounts(node);
    // Data already in memory is read again rather than shared: nothing to save. So is a
    // Parquet or Arrow scan (cheap to decode, unlike CSV and JSON text): shared, its whole
    // output waits in memory for its last reader, often a join whose other side is
    // computed from the same scan (TPC-H Q18: 960 MB at SF 10 held through the
    // aggregation, 5.3 / 3.5 s; read twice, 2.7 s); read again, it is fused into each
    // reader's tasks.
    const columnar = node.kind === "scanFile" && node.format !== "json";
    if ((this.parents.get(node) ?? 0) < 2 || node.kind === "stored" || node.kind === "values" || columnar)
      return this.keyed(node, this.lowerNode(node));
    let deps = this.shared.get(node);
    if (!deps) {
      const chains = this.keyed(node, this.lowerNode(node));
      // A chain of several inputs and no steps is read as a whole by its consumer: left unshared.
      if (chains.some((c) => c.steps.length === 0 && c.deps.length !== 1)) return chains;
      deps = chains.map((c) => (c.steps.length === 0 ? c.deps[0]! : dep(this.close(c))));
      this.shared.set(node, deps);
    }
    return deps.map((d) => ({ deps: [d], steps: [] }));
  }

  /** Records the keying of a node's chains: one chain is one partition. */
  private keyed(node: PlanNode, chains: Chain[]): Chain[] {
    if (chains.length === 1) this.keys.set(node, ONE_PARTITION);
    return chains;
  }

  private lowerNode(node: PlanNode): Chain[] {
    switch (node.kind) {
      case "scanCsv":
        return this.scanCsv(node);
      case "scanFile":
        return this.scanFile(node);
      case "values":
        return node.partitions.map((columns) => ({
          deps: [],
          steps: [
            {
              kind: "values",
              schema: node.schema,
              columns,
              rows: columns[node.schema[0].name]?.length ?? 0,
              loc: node.loc,
            },
          ],
        }));
      case "fromBag":
        return lowerBag(this, node.bag).map((c) =>
          node.raw ? c : append(c, { kind: "bagToTable", schema: node.schema, loc: node.loc }),
        );
      case "stored":
        if (!node.handles.every((h) => native().tableExists(h))) throw unpersistedError(node.loc);
        this.keys.set(node, node.clustered?.map((c) => [c]) ?? NOT_KEYED);
        return node.handles.map((handle) => ({ deps: [], steps: [{ kind: "stored", handle, loc: node.loc }] }));
      case "filter": {
        const { predicate } = nativeOf(node);
        const chains = this.lower(node.input).map((c) => append(c, { kind: "filter", predicate, loc: node.loc }));
        this.keys.set(node, this.keyedOf(node.input));
        return chains;
      }
      case "project": {
        const exprs = nativeOf(node).exprs.map((e) => e.expr);
        const names = node.exprs.map((e) => e.name);
        const chains = this.lower(node.input).map((c) => append(c, { kind: "project", exprs, names, loc: node.loc }));
        this.keys.set(node, projected(this.keyedOf(node.input), node.exprs));
        return chains;
      }
      case "head": {
        const deps = this.lower(node.input).map((c) => ({
          key: this.close(append(c, { kind: "head", n: node.n, loc: node.loc })),
          index: 0,
        }));
        return [{ deps, steps: [concatAll(deps.length), { kind: "head", n: node.n, loc: node.loc }] }];
      }
      case "aggregate":
        return this.aggregate(node);
      case "sort":
        return this.sort(node);
      case "join":
        return this.join(node);
      case "window":
        return lowerWindow(node, this);
      case "tail":
        return lowerTail(this, node);
      case "distinct":
        return lowerDistinct(this, node);
      case "topK":
        return lowerTopK(this, node);
      case "sample":
        return lowerSample(this, node);
      case "union":
        return node.inputs.flatMap((input) => this.lower(input));
      case "stack":
        return lowerStack(this, node);
    }
  }

  private scanCsv(node: Extract<PlanNode, { kind: "scanCsv" }>): Chain[] {
    const names = node.fileSchema.map((f) => f.name);
    const { columns, predicate } = nativeOf(node);
    const chains: Chain[] = [];
    const limited = scanBlockBytes(node.options.blocksize, this.budget, MIN_BLOCK);
    const blocksize =
      this.minScanBlocks > 1 || this.scanWorkers > 1
        ? csvBlockBytes(totalBytes(node.files), limited, this.scanWorkers, this.minScanBlocks)
        : limited;
    for (const path of node.files) {
      const csv = {
        delimiter: node.options.delimiter,
        header: node.options.header,
        nullValues: node.options.nullValues,
        encoding: node.options.encoding,
      };
      let blocks;
      try {
        blocks = csvBlocks(path, blocksize, csv);
      } catch (e) {
        throw BasinError.from(e, node.loc);
      }
      for (const b of blocks) {
        const options = {
          ...csv,
          names,
          types: node.fileSchema.map((f) => f.type),
          columns,
          line: b.line,
          onBadLines: node.options.onBadLines,
        };
        const steps: Step[] = [{ kind: "scanCsv", path, start: b.start, end: b.end, options, loc: node.loc }];
        if (predicate) steps.push({ kind: "filter", predicate, loc: node.predicateLoc ?? node.loc });
        chains.push({ deps: [], steps });
      }
    }
    return chains;
  }

  private scanFile(node: Extract<PlanNode, { kind: "scanFile" }>): Chain[] {
    const { columns, predicate } = nativeOf(node);
    let scans: Step[];
    try {
      scans = node.files.flatMap((path, i) =>
        fileScanSteps(
          node.format,
          path,
          columns,
          scanBlockBytes(node.options.blocksize, this.budget, MIN_BLOCK),
          node.rowGroups?.kept[i],
          this.budget !== undefined,
        ),
      );
    } catch (e) {
      throw BasinError.from(e, node.loc);
    }
    // Row groups clustered by a column hold each of its values whole; slices of one do not.
    const sliced = scans.some((s) => s.kind === "scanParquet" && s.rows !== undefined);
    this.keys.set(node, (!sliced && node.rowGroups?.clustered?.map((c) => [c])) || NOT_KEYED);
    const chains = scans.map((scan): Chain => ({
      deps: [],
      steps: predicate
        ? [
            { ...scan, loc: node.loc },
            { kind: "filter", predicate, loc: node.predicateLoc ?? node.loc },
          ]
        : [{ ...scan, loc: node.loc }],
    }));
    // Every row group pruned away: one empty partition keeps the schema.
    if (chains.length === 0)
      chains.push({
        deps: [],
        steps: [
          {
            kind: "values",
            schema: columns,
            columns: Object.fromEntries(columns.map((f) => [f.name, []])),
            rows: 0,
            loc: node.loc,
          },
        ],
      });
    return chains;
  }

  private aggregate(node: Extract<PlanNode, { kind: "aggregate" }>): Chain[] {
    const { keys: resolvedKeys, aggs: parts } = nativeOf(node);
    // Pre-project keys and aggregation inputs into plain columns.
    const exprs: NativeExpr[] = resolvedKeys.map((k) => k.expr);
    const names = node.keys.map((k) => k.name);
    const aggs: NativeAgg[] = parts.map((p, i) => {
      if (!p.arg) return { op: p.op, column: -1, name: p.name };
      exprs.push(p.arg);
      names.push(`__agg${i}`);
      const agg: NativeAgg = { op: p.op, column: names.length - 1, name: p.name };
      if (p.q !== undefined) agg.q = p.q;
      if (p.arg2) {
        exprs.push(p.arg2);
        names.push(`__agg${i}b`);
        agg.column2 = names.length - 1;
      }
      return agg;
    });
    const keys = node.keys.map((_, i) => i);
    const pre: Step = { kind: "project", exprs, names, loc: node.loc };
    const chains = this.lower(node.input).map((c) => append(c, pre));
    const loc = node.loc;
    // Input partitions keyed by some of the grouping columns hold whole groups: each is
    // aggregated where it is, with no shuffle, and keeps its keying.
    const grouping = node.keys.flatMap((k) => (k.expr.kind === "col" ? [k.expr.name] : []));
    const input = this.keyedOf(node.input);
    if (keys.length > 0 && keyedWithin(input, grouping)) {
      this.keys.set(node, projected(input, node.keys));
      return chains.map((c) => append(c, { kind: "aggregate", keys, aggs, mode: "full", loc }));
    }
    // One input partition: one full aggregation where it is. Partial states and their
    // merge in a second task only add work (a GPU worker's partition is the whole
    // table, and the merge, which the GPU does not do, ran on the CPU).
    if (chains.length === 1) {
      this.keys.set(node, ONE_PARTITION);
      return [append(chains[0], { kind: "aggregate", keys, aggs, mode: "full", loc })];
    }

    // Shuffle by key so that every group's rows (or partial states) meet in one
    // task, and the final aggregation runs in parallel, one task per bucket (like
    // Dask's split_out). Decomposable aggregations shrink each partition first.
    const holistic = parts.some((p) => HOLISTIC_AGGS.includes(p.op));
    // Under a memory limit, an input larger than one task may hold is split into as
    // many buckets as it takes for one bucket's states to fit (grace hash).
    const n = keys.length === 0 ? 1 : this.shuffleParts(aggregateInputBytes(node), chains.length);
    const mapped = holistic
      ? chains
      : chains.map((c) => append(c, { kind: "aggregate", keys, aggs, mode: "partial", loc }));
    const shuffled = mapped.map((c) =>
      this.close(n === 1 ? c : append(c, { kind: "hashPartition", keys, parts: n, loc })),
    );
    this.keys.set(node, n === 1 ? ONE_PARTITION : [node.keys.map((k) => k.name)]);
    return Array.from({ length: n }, (_, r) => ({
      deps: shuffled.map((key) => ({ key, index: n === 1 ? 0 : r })),
      steps: [
        concatAll(shuffled.length),
        ...(holistic
          ? [{ kind: "aggregate", keys, aggs, mode: "full", loc } satisfies Step]
          : mergePartials(
              node.keys.map((k) => k.name),
              resolvedKeys.map((k) => k.expr.type),
              aggs.map((agg, i) => ({ agg, argType: parts[i].arg?.type })),
              loc,
            )),
      ],
    }));
  }

  private sort(node: Extract<PlanNode, { kind: "sort" }>): Chain[] {
    const loc = node.loc;
    const keys = nativeOf(node).order;
    const sort: Step = { kind: "sort", keys, loc };
    const chains = this.lower(node.input);
    if (node.limit !== undefined) {
      // Top-n: every partition keeps its first n rows, then once more over those.
      const head: Step = { kind: "head", n: node.limit, loc };
      const deps = chains.map((c) => dep(this.close(append(append(c, sort), head))));
      return [{ deps, steps: [concatAll(deps.length), sort, head] }];
    }
    if (chains.length === 1) return [append(chains[0], sort)];
    // Under a memory limit, enough ranges for each to be sorted in memory.
    const bytes = inMemoryBytes(node.input);
    const n = this.shuffleParts(bytes, chains.length);
    // A small input (the usual last step: an aggregation's few rows), or one range (all
    // of it fits one GPU), is sorted whole by one task: a range-partitioned sort takes
    // four tasks a partition, more than the sort.
    if (n === 1 || (expectedBytes(node.input) <= SMALL_SORT_BYTES && wholeFits(node.input, this.budget))) {
      const deps = chains.map((c) => dep(this.close(c)));
      return [{ deps, steps: [concatAll(deps.length), sort] }];
    }
    // Out of core, equal keys may span ranges (ordered by frame position): a skewed key cannot fill one range.
    const outOfCore = shufflePlan(bytes, 1, this.budget).outOfCore;
    return rangeSort(this, chains, keys, n, loc, outOfCore ? node.input.schema : undefined);
  }

  private join(node: Extract<PlanNode, { kind: "join" }>): Chain[] {
    const { spec } = nativeOf(node);
    const loc = node.loc;
    const left = this.lower(node.left);
    const right = this.lower(node.right);
    // A right side too large for one task under the memory limit is hash-partitioned instead.
    if (node.strategy === "broadcast" && wholeFits(node.right, this.budget)) {
      // Every left partition joins with the whole (small) right side.
      this.keys.set(node, broadcastJoined(node, this.keyedOf(node.left)));
      const rdeps = right.map((c) => dep(this.close(c)));
      return left.map((c) => {
        const at = c.deps.length;
        return {
          deps: [...c.deps, ...rdeps],
          steps: [...c.steps, { kind: "join", spec, right: rdeps.map((_, i) => at + i), broadcast: true, loc }],
        };
      });
    }
    // Hash-partition both sides by key; bucket r of the left meets bucket r of the right.
    const bytes = inMemoryBytes(node.left) + inMemoryBytes(node.right);
    const n = this.shuffleParts(bytes, Math.max(left.length, right.length));
    const split = (chains: Chain[], keys: number[]) =>
      chains.map((c) => this.close(n === 1 ? c : append(c, { kind: "hashPartition", keys, parts: n, loc })));
    const lp = split(left, spec.leftKeys);
    const rp = split(right, spec.rightKeys);
    this.keys.set(node, hashJoined(node, n));
    return Array.from({ length: n }, (_, r) => {
      const part = (key: string) => ({ key, index: n === 1 ? 0 : r });
      return {
        deps: [...lp.map(part), ...rp.map(part)],
        steps: [concatAll(lp.length), { kind: "join", spec, right: rp.map((_, i) => lp.length + i), loc }],
      };
    });
  }
}

/**
 * Lowers an (optimized) plan to a task graph whose output task yields the whole
 * result, or with `parts` its partitions (never concatenated into one table).
 *
 * @example
 * const graph = lowerPlan(optimize(df.node), { budget: { limit: 4e9, workers: 8 }, parts: true });
 */
export function lowerPlan(root: PlanNode, options: LowerOptions = {}): TaskGraph {
  const groups = options.parts ? (options.groups ?? 0) : 0;
  const b = new GraphBuilder(options.budget, groups, options.scanWorkers, options.devices);
  const chains = b.lower(resolvePlan(root));
  if (chains.length === 1 && groups <= 1) return { tasks: b.tasks, output: b.close(chains[0]) };
  const n = chains.length;
  let deps: Dep[];
  if (n < groups) {
    // Fewer partitions than groups: partition i ends by splitting itself into
    // floor(G·(i+1)/n) − floor(G·i/n) row ranges, so none is concatenated with another.
    deps = chains.flatMap((c, i) => {
      const k = Math.floor((groups * (i + 1)) / n) - Math.floor((groups * i) / n);
      if (k === 1) return [dep(b.close(c))];
      const key = b.close(append(c, { kind: "split", parts: k }));
      return Array.from({ length: k }, (_, index) => ({ key, index }));
    });
  } else {
    deps = chains.map((c) => dep(b.close(c)));
    // Group g takes partitions [floor(n·g/G), floor(n·(g+1)/G)): adjacent, as even as can be.
    if (groups >= 1 && n > groups)
      deps = Array.from({ length: groups }, (_, g) => {
        const members = deps.slice(Math.floor((n * g) / groups), Math.floor((n * (g + 1)) / groups));
        return members.length === 1 ? members[0]! : dep(b.close({ deps: members, steps: [concatAll(members.length)] }));
      });
  }
  const output = b.close({ deps, steps: [options.parts ? { kind: "parts" } : concatAll(chains.length)] });
  return options.parts ? { tasks: b.tasks, output, partitioned: true } : { tasks: b.tasks, output };
}

/**
 * Lowers a plan to a graph whose output concatenates its partitions, each with a
 * trailing int64 column `tag` holding the partition's index, so how many rows each
 * partition had survives the concatenation (arrays chunk by partitions).
 *
 * @example
 * const { graph, parts } = lowerTagged(optimize(df.node), "__part");
 */
export function lowerTagged(root: PlanNode, tag: string): { graph: TaskGraph; parts: number } {
  const b = new GraphBuilder();
  const cols: NativeExpr[] = root.schema.map((f, j) => ({ kind: "col", index: j, type: f.type }));
  const names = [...root.schema.map((f) => f.name), tag];
  const chains = b
    .lower(resolvePlan(root))
    .map((c, i) => append(c, { kind: "project", exprs: [...cols, { kind: "lit", value: i, type: "int64" }], names }));
  const output = b.close({
    deps: chains.map((c) => ({ key: b.close(c), index: 0 })),
    steps: [concatAll(chains.length)],
  });
  return { graph: { tasks: b.tasks, output }, parts: chains.length };
}
