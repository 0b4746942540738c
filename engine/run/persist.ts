// persist(): a frame computed once into the store, in partitions, so later pipelines
// over it start from memory (and, on a GPU worker, from columns already uploaded).
import { BasinError } from "../common/errors.js";
import type { SourceLocation } from "../common/errors.js";
import { PLAN_VERSION, type PlanNode } from "../common/plan.js";
import { clusterOf, computeGroups, computeParts, computeStored, type ComputeOptions } from "./stored.js";
import type { Cluster } from "../cluster/cluster.js";
import { defaultCluster } from "../cluster/default.js";
import { parseBytes } from "../memory/bytes.js";
import { native, type Handle, type JsTable } from "../native/addon.js";
import type { Field } from "../common/types.js";
import { disjoint, type Interval } from "../common/intervals.js";
import { own, setOwn } from "../common/own.js";

export interface PersistOptions extends ComputeOptions {
  /** Partitions of the stored result (default: the cluster's workers, GPU and CPU). */
  partitions?: number;
  /**
   * Partitions of about this many bytes in memory instead of a count ("256MB", or
   * bytes): the frame is computed, then its partitions are concatenated or split into
   * ceil(size / partitionBytes) of them, at least one per worker. The default where the
   * GPUs alone compute (a LocalCluster with cpuTasks "reads"): a quarter of the device
   * memory limit, so that a partition and a task's working memory fit on the GPU: the
   * whole table in one partition when it does.
   */
  partitionBytes?: string | number;
}

/** The stored partitions of a persisted frame and how to let them go. */
export interface Persisted {
  node: PlanNode & { kind: "stored" };
  /** Frees the partitions; frames over them fail afterwards with a clear error. */
  release(): void;
}

/**
 * Computes `node` and keeps the result in the store as `partitions` tables (or tables
 * of about `partitionBytes`).
 *
 * @example
 * const p = await persistNode(df.node, { partitions: 8 });
 */
export async function persistNode(node: PlanNode, options: PersistOptions, loc?: SourceLocation): Promise<Persisted> {
  const handles = await computeKept(node, options, loc);
  const addon = native();
  const cluster = clusterOf(options);
  let facts: ColumnFacts;
  try {
    await cluster.keepOnDevices?.(handles);
    facts = await columnFacts(handles, node.schema, cluster);
  } catch (e) {
    for (const h of handles) addon.release(h);
    throw e;
  }
  const bytes = handles.reduce((n, h) => n + addon.tableBytes(h), 0);
  let released = false;
  const { ranges, clustered } = facts;
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
      cluster.unpersisted?.(); // worker processes' copies go too
      addon.purgeBroadcastBuilds(); // hash tables built over these partitions go with them
      addon.releaseFreeMemory(); // a released table's memory leaves the process, not just the store
    },
  };
}

/** The partitions persist() keeps: as many as asked, or sized by bytes. */
async function computeKept(node: PlanNode, options: PersistOptions, loc?: SourceLocation): Promise<Handle[]> {
  const { partitions, partitionBytes } = options;
  if (partitions !== undefined && partitionBytes !== undefined)
    throw new BasinError("BASIN_PLAN", "persist() takes partitions or partitionBytes, not both; leave one out", loc);
  const cluster = clusterOf(options);
  const workers = Math.max(1, cluster.workerSlots || 4);
  const plan = (root: PlanNode) => ({ version: PLAN_VERSION, root });
  const target =
    partitionBytes !== undefined
      ? parseBytes(partitionBytes, "persist()'s partitionBytes")
      : partitions === undefined
        ? cluster.devicePartitionBytes
        : undefined;
  if (target === undefined) {
    const parts = partitions ?? workers;
    if (!Number.isInteger(parts) || parts < 1)
      throw new BasinError("BASIN_PLAN", `persist() needs partitions to be a positive integer, got ${parts}`, loc);
    // The result's own partitions, concatenated into `parts` groups by parallel tasks
    // (or, when there are fewer, each split into row ranges by the task that makes it).
    return (await computeGroups(plan(node), options, parts)).refs;
  }
  if (target < 1)
    throw new BasinError(
      "BASIN_PLAN",
      `persist()'s partitionBytes must be at least one byte, got ${partitionBytes}`,
      loc,
    );
  // Sized by bytes: the frame as it comes, then regrouped once its size is known.
  const first = (await computeParts(plan(node), options)).refs;
  try {
    const addon = native();
    const bytes = first.reduce((n, h) => n + addon.tableBytes(h), 0);
    const groups = Math.max(workers, Math.ceil(bytes / target));
    const stored: PlanNode = { kind: "stored", handles: first, bytes, schema: node.schema, loc };
    // The parts are in this process's store: a remote cluster's result is regrouped here.
    const here = cluster.kind === "local" ? cluster : defaultCluster();
    return (await computeGroups(plan(stored), { ...options, cluster: here }, groups)).refs;
  } finally {
    for (const h of first) native().release(h);
  }
}

/** A stored table read into JS, then released. */
function withTable(h: Handle): JsTable {
  try {
    return native().tableToJs(h);
  } finally {
    native().release(h);
  }
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
 * clustered: an aggregation by one runs in each partition (lower/keyed.ts). On a
 * cluster of threads the aggregates are its tasks (in parallel, off the JS thread; on
 * the GPU that is home to a partition); elsewhere (worker processes, Dask) they run here
 * rather than move every partition for them.
 */
async function columnFacts(handles: Handle[], schema: Field[], cluster: Cluster): Promise<ColumnFacts> {
  const addon = native();
  const cols = schema.map((f, i) => ({ f, i })).filter(({ f }) => RANGED.has(f.type));
  const ranges: Record<string, { min: number; max: number }> = {};
  if (cols.length === 0) return { ranges, clustered: [] };
  const ops = ["min", "max", "count"] as const;
  const aggs = cols.flatMap(({ i }) => ops.map((op) => ({ op, column: i, name: `${op}${i}` })));
  // The aggregates of one partition as a 1-row table.
  const factsOf = async (h: Handle): Promise<JsTable> => {
    if (!cluster.workersShareStore) return withTable(addon.groupByAgg(h, [], aggs, "full"));
    const stored: PlanNode = { kind: "stored", handles: [h], bytes: addon.tableBytes(h), schema };
    const root: PlanNode = {
      kind: "aggregate",
      input: stored,
      keys: [],
      aggs: aggs.map((a) => ({
        name: a.name,
        expr: { kind: "agg", op: a.op, arg: { kind: "col", name: schema[a.column]!.name } },
      })),
      schema: aggs.map((a) => ({ name: a.name, type: a.op === "count" ? "int64" : schema[a.column]!.type })),
    };
    return withTable((await computeStored({ version: PLAN_VERSION, root }, { cluster })).ref);
  };
  const rows = handles.map((h) => addon.tableRows(h));
  const facts = await Promise.all(handles.map((h, p) => (rows[p] === 0 ? null : factsOf(h))));
  const parts = cols.map((): Interval[] | undefined => []);
  facts.forEach((t, p) => {
    if (!t) return;
    cols.forEach(({ f }, k) => {
      const [lo, hi, n] = [t.columns[3 * k], t.columns[3 * k + 1], t.columns[3 * k + 2]].map((c) =>
        c.validity && !c.validity[0] ? undefined : Number((c.values as ArrayLike<number | bigint>)[0]),
      );
      if (lo === undefined || hi === undefined || !Number.isFinite(lo) || !Number.isFinite(hi)) {
        parts[k] = undefined;
        return;
      }
      parts[k] = n === rows[p] ? parts[k]?.concat({ min: lo, max: hi }) : undefined;
      let r = own(ranges, f.name);
      if (!r) setOwn(ranges, f.name, (r = { min: lo, max: hi }));
      r.min = Math.min(r.min, lo);
      r.max = Math.max(r.max, hi);
    });
  });
  const clustered = cols
    .filter(({ f }, k) => KEYS.has(f.type) && parts[k] && disjoint(parts[k]))
    .map(({ f }) => f.name);
  return { ranges, clustered };
}
