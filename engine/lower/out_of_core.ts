// Out-of-core operators (grace hash): under a memory limit, a group-by (and distinct,
// per-group top-k), hash join or sort whose input is larger than a running task may hold is split into more,
// smaller partitions, chosen from the estimated input size and the limit, so that
// each partition's working set fits while the others wait spilled on disk.
import type { PlanNode } from "../common/plan.js";
import { formatBytes } from "../memory/bytes.js";
import { estimateBytes, expectedBytes } from "../plan/passes/join_strategy.js";
import { MAX_SHUFFLE_PARTS } from "./chain.js";

/** The memory the lowered tasks run under: the host limit, shared by the workers running tasks at once. */
export interface MemoryBudget {
  /** Host bytes of tables before they spill (the cluster's memoryLimit). */
  limit: number;
  workers: number;
}

/** Where the GPUs alone compute (cpuTasks "reads"): how many, and the bytes of input one GPU task may have. */
export interface DeviceShare {
  gpus: number;
  /** A quarter of the smallest device memory limit (persist()'s partitions on a GPU). */
  partBytes: number;
}

/**
 * Buckets of an in-memory shuffle of `bytes` from `inputs` partitions: one per input
 * partition (at most MAX_SHUFFLE_PARTS), so every worker merges some. Where the GPUs
 * alone compute, as few as fit a device, and at least one per GPU: a GPU merges one
 * large bucket faster than many small ones, and with one bucket nothing is
 * hash-partitioned (on the GPU worker's one CPU thread). An input of unknown size
 * keeps one bucket per partition.
 *
 * @example
 * inMemoryParts(5e9, 100, { gpus: 1, partBytes: 28e9 }) // 1
 * inMemoryParts(5e9, 100) // 32
 */
export function inMemoryParts(bytes: number, inputs: number, devices?: DeviceShare): number {
  const most = Math.max(1, Math.min(inputs, MAX_SHUFFLE_PARTS));
  if (!devices || !Number.isFinite(bytes)) return most;
  const fit = Math.ceil(bytes / Math.max(1, devices.partBytes));
  return Math.min(most, Math.max(devices.gpus, fit));
}

/** A running shuffle task holds about this many times its partition: its pinned inputs, their concatenation and its output. */
export const WORKING_SET_FACTOR = 3;
/** Share of the limit the running tasks' working sets may take; the rest is for tables waiting to be read and the one being spilled. */
export const WORKING_SHARE = 0.5;
/** Files take fewer bytes than their columns in memory (text digits become 8-byte values, Parquet pages decompress). */
export const FILE_EXPANSION = 2;
/** Upper bound on the partitions of an out-of-core shuffle (each map task writes one table per partition). */
export const MAX_OUT_OF_CORE_PARTS = 1024;

/** What one shuffle does under the budget. */
export interface ShufflePlan {
  /** Partitions of the shuffle. */
  parts: number;
  /** The input is larger than one task may hold: partitioned for the limit (grace hash / range runs). */
  outOfCore: boolean;
  /** Estimated in-memory bytes of the shuffled input. */
  inputBytes: number;
  /** Bytes of input one partition may have. */
  partBytes: number;
}

/** Bytes of input one running shuffle task may have, so that every worker's working set fits the limit together. */
export function partBytes(budget: MemoryBudget): number {
  return (budget.limit * WORKING_SHARE) / Math.max(1, budget.workers) / WORKING_SET_FACTOR;
}

/**
 * The bytes of file one scan task reads: `blocksize`, unless a memory limit makes
 * that too much for a task to hold (the block itself, mapped, and its columns, about
 * FILE_EXPANSION times larger, while every worker scans at once).
 *
 * @example
 * scanBlockBytes(64 << 20, { limit: 100e6, workers: 2 }, 1 << 20) // 4_166_666
 */
export function scanBlockBytes(blocksize: number, budget: MemoryBudget | undefined, min: number): number {
  if (!budget) return blocksize;
  return Math.min(blocksize, Math.max(min, Math.floor(partBytes(budget) / FILE_EXPANSION)));
}

/** An upper bound on the in-memory bytes `node` produces (Infinity when unknown before running). */
export function inMemoryBytes(node: PlanNode): number {
  return estimateBytes(node, FILE_EXPANSION);
}

/** How many times its estimate a node held whole (a broadcast right side) may turn out, and still fit. */
const WHOLE_MARGIN = 4;

/**
 * Whether a node's whole output (a broadcast join's right side, a small sort's input)
 * fits one task under `budget`: by its upper bound, or by its estimated size with a
 * margin. (The bound alone counts a per-part aggregate over lineitem as lineitem:
 * TPC-H Q17 at SF 10 spilled a 20k-row right side through a grace hash join of 10
 * partitions.)
 */
export function wholeFits(node: PlanNode, budget: MemoryBudget | undefined): boolean {
  if (!budget) return true;
  return Math.min(inMemoryBytes(node), WHOLE_MARGIN * expectedBytes(node)) <= partBytes(budget);
}

/**
 * The partitions of a shuffle of `inputBytes`: `inMemory` (the usual count) unless
 * the input exceeds what one task may hold under `budget`; then enough for each to fit.
 *
 * @example
 * shufflePlan(100e6, 8, { limit: 25e6, workers: 2 }) // { parts: 48, outOfCore: true, ... }
 */
export function shufflePlan(inputBytes: number, inMemory: number, budget: MemoryBudget | undefined): ShufflePlan {
  const part = budget ? partBytes(budget) : Number.POSITIVE_INFINITY;
  if (!budget || !Number.isFinite(inputBytes) || inputBytes <= part)
    return { parts: inMemory, outOfCore: false, inputBytes, partBytes: part };
  const need = Math.min(MAX_OUT_OF_CORE_PARTS, Math.ceil(inputBytes / part));
  return { parts: Math.max(inMemory, need), outOfCore: true, inputBytes, partBytes: part };
}

/** Estimated bytes of the columns a group-by reads: its keys and aggregation inputs, a share of its input's columns. */
export function aggregateInputBytes(node: Extract<PlanNode, { kind: "aggregate" }>): number {
  const used = node.keys.length + Math.max(1, node.aggs.length);
  return (inMemoryBytes(node.input) * Math.min(used, node.input.schema.length)) / Math.max(1, node.input.schema.length);
}

/** Estimated bytes a shuffle of `node` moves, for the operators that shuffle (else undefined). */
export function shuffledBytes(node: PlanNode): number | undefined {
  switch (node.kind) {
    case "aggregate":
      return node.keys.length === 0 ? undefined : aggregateInputBytes(node);
    case "join":
      return inMemoryBytes(node.left) + inMemoryBytes(node.right);
    case "sort":
      return node.limit === undefined ? inMemoryBytes(node.input) : undefined;
    case "distinct":
    case "topK":
      return node.keys.length === 0 ? undefined : inMemoryBytes(node.input);
    default:
      return undefined;
  }
}

/**
 * How explain() describes an operator's out-of-core strategy under `budget` (empty
 * when it runs in memory as usual).
 *
 * @example
 * outOfCoreNote(aggNode, { limit: 23.5e6, workers: 2 }) // " out-of-core: grace hash, ≥ 48 partitions spilled ..."
 */
export function outOfCoreNote(node: PlanNode, budget: MemoryBudget | undefined): string {
  const bytes = shuffledBytes(node);
  if (bytes === undefined || !budget) return "";
  if (node.kind === "join" && node.strategy === "broadcast" && wholeFits(node.right, budget)) return "";
  const p = shufflePlan(bytes, 1, budget);
  if (!p.outOfCore) return "";
  const how = node.kind === "sort" ? "range-partitioned runs" : "grace hash";
  return ` out-of-core: ${how}, ≥ ${p.parts} partitions spilled to disk and processed one at a time (input ≈ ${formatBytes(Math.round(p.inputBytes))}, ≤ ${formatBytes(Math.round(p.partBytes))} a partition under memoryLimit ${formatBytes(budget.limit)} / ${budget.workers} workers)`;
}
