// persist(): a frame computed once into the store, in partitions, so later pipelines
// over it start from memory (and, on a GPU worker, from columns already uploaded).
import { BasinError } from "../common/errors.js";
import type { SourceLocation } from "../common/errors.js";
import { PLAN_VERSION, type PlanNode } from "../common/plan.js";
import { computeGroups, type ComputeOptions } from "../cluster/compute.js";
import { native, type Handle } from "../native/addon.js";

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
  const parts = options.partitions ?? Math.max(1, (options.cluster && "workerCount" in options.cluster ? options.cluster.workerCount + options.cluster.gpus.length : 0) || 4);
  if (!Number.isInteger(parts) || parts < 1) throw new BasinError("BASIN_PLAN", `persist() needs partitions to be a positive integer, got ${parts}`, loc);
  // The result's own partitions, concatenated into `parts` groups by parallel tasks;
  // only a result with fewer partitions than that is concatenated whole and sliced.
  const { refs } = await computeGroups({ version: PLAN_VERSION, root: node }, options, parts);
  const addon = native();
  let handles: Handle[] = [];
  if (refs.length === parts) handles = refs;
  else {
    let ref: Handle | undefined;
    try {
      ref = refs.length === 1 ? refs[0]! : addon.concat(refs);
      const rows = addon.tableRows(ref);
      for (let p = 0; p < parts; p++) {
        const lo = Math.floor((rows * p) / parts), hi = Math.floor((rows * (p + 1)) / parts);
        handles.push(addon.slice(ref, lo, hi - lo));
      }
    } catch (e) {
      for (const h of handles) addon.release(h);
      throw e;
    } finally {
      for (const h of refs) addon.release(h);
      if (ref !== undefined && refs.length !== 1) addon.release(ref);
    }
  }
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
