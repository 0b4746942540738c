// persist(): a frame computed once into the store, in partitions, so later pipelines
// over it start from memory (and, on a GPU worker, from columns already uploaded).
import { BasinError } from "../common/errors.js";
import type { SourceLocation } from "../common/errors.js";
import { PLAN_VERSION, type PlanNode } from "../common/plan.js";
import { computeGroups, type ComputeOptions } from "./stored.js";
import { native } from "../native/addon.js";

export interface PersistOptions extends ComputeOptions {
  /** Partitions of the stored result (default: the cluster's workers, GPU and CPU). */
  partitions?: number;
}

/** The stored partitions of a persisted frame and how to let them go. */
export interface Persisted {
  node: PlanNode & { kind: "stored" };
  /** Frees the partitions; frames over them fail afterwards with a clear error. */
  release(): void;
}

/**
 * Computes `node` and keeps the result in the store as `partitions` tables.
 *
 * @example
 * const p = await persistNode(df.node, { partitions: 8 });
 */
export async function persistNode(node: PlanNode, options: PersistOptions, loc?: SourceLocation): Promise<Persisted> {
  const parts = options.partitions ?? Math.max(1, options.cluster?.workerSlots || 4);
  if (!Number.isInteger(parts) || parts < 1)
    throw new BasinError("BASIN_PLAN", `persist() needs partitions to be a positive integer, got ${parts}`, loc);
  // The result's own partitions, concatenated into `parts` groups by parallel tasks
  // (or, when there are fewer, each split into row ranges by the task that makes it).
  const { refs: handles } = await computeGroups({ version: PLAN_VERSION, root: node }, options, parts);
  const addon = native();
  const bytes = handles.reduce((n, h) => n + addon.tableRows(h), 0) * node.schema.length * 8;
  let released = false;
  return {
    node: { kind: "stored", handles, bytes, schema: node.schema, loc },
    release() {
      if (released) return;
      released = true;
      for (const h of handles) addon.release(h);
    },
  };
}
