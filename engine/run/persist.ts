// persist(): a frame computed once into the store, in partitions, so later pipelines
// over it start from memory (and, on a GPU worker, from columns already uploaded).
import { BasinError } from "../common/errors.js";
import type { SourceLocation } from "../common/errors.js";
import { PLAN_VERSION, type PlanNode } from "../common/plan.js";
import { computeGroups, type ComputeOptions } from "./stored.js";
import { native, type Handle } from "../native/addon.js";
import type { Field } from "../common/types.js";
import { disjoint, type Interval } from "../common/intervals.js";

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
  const { ranges, clustered } = columnFacts(handles, node.schema);
  return {
    node: {
      kind: "stored",
      handles,
      bytes,
      ranges,
      ...(clustered.length > 0 && { clustered }),
      schema: node.schema,
      loc,
    },
    release() {
      if (released) return;
      released = true;
      for (const h of handles) addon.release(h);
      addon.purgeBroadcastBuilds(); // hash tables built over these partitions go with them
      addon.releaseFreeMemory(); // a released table's memory leaves the process, not just the store
    },
  };
}

const RANGED = new Set(["int64", "float64", "date", "timestamp"]);
/** Column types whose partitions may be found clustered (integers, as Parquet's). */
const KEYS = new Set(["int64", "date"]);

/** What the planner learns of a stored table's columns. */
interface ColumnFacts {
  ranges: Record<string, { min: number; max: number }>;
  clustered: string[];
}

/**
 * The min and max of every numeric and date column over the stored partitions (one
 * aggregate per partition, a few ms per million rows): what Parquet statistics tell
 * the planner about a file, for persisted tables. Dates and timestamps as numbers.
 * Integer and date columns without nulls whose partitions hold disjoint values are
 * clustered: an aggregation by one runs in each partition (lower/keyed.ts).
 */
function columnFacts(handles: Handle[], schema: Field[]): ColumnFacts {
  const addon = native();
  const cols = schema.map((f, i) => ({ f, i })).filter(({ f }) => RANGED.has(f.type));
  const ranges: Record<string, { min: number; max: number }> = {};
  if (cols.length === 0) return { ranges, clustered: [] };
  const aggs = cols.flatMap(({ i }) => [
    { op: "min" as const, column: i, name: `min${i}` },
    { op: "max" as const, column: i, name: `max${i}` },
    { op: "count" as const, column: i, name: `count${i}` },
  ]);
  const parts = cols.map((): Interval[] | undefined => []);
  for (const h of handles) {
    const rows = addon.tableRows(h);
    if (rows === 0) continue;
    const out = addon.groupByAgg(h, [], aggs, "full");
    try {
      const t = addon.tableToJs(out);
      cols.forEach(({ f }, k) => {
        const [lo, hi, n] = [t.columns[3 * k], t.columns[3 * k + 1], t.columns[3 * k + 2]].map((c) =>
          c.validity && !c.validity[0] ? undefined : Number((c.values as ArrayLike<number | bigint>)[0]),
        );
        if (lo === undefined || hi === undefined || !Number.isFinite(lo) || !Number.isFinite(hi)) {
          parts[k] = undefined;
          return;
        }
        parts[k] = n === rows ? parts[k]?.concat({ min: lo, max: hi }) : undefined;
        const r = (ranges[f.name] ??= { min: lo, max: hi });
        r.min = Math.min(r.min, lo);
        r.max = Math.max(r.max, hi);
      });
    } finally {
      addon.release(out);
    }
  }
  const clustered = cols
    .filter(({ f }, k) => KEYS.has(f.type) && parts[k] && disjoint(parts[k]))
    .map(({ f }) => f.name);
  return { ranges, clustered };
}
