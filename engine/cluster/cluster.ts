// The one interface every cluster a plan runs on implements: Basin's local cluster
// (CPU and GPU workers in this process) and Dask (a scheduler reached directly,
// through SSH, started in SLURM jobs, or in one srun/mpirun runner allocation). engine/run talks to this alone, so no
// caller picks a code path by the cluster's class.
//
// The remote Basin engine (cluster/remote/remote_engine.ts) is not one of these: a
// pipeline's plan names files resolved where it was built, so that engine runs whole
// pipeline files on its host and keeps their results there (it is an EngineClient).
import type { ClusterStatus } from "../common/rpc.js";
import type { Plan } from "../common/plan.js";
import type { Step, TaskGraph } from "../graph/tasks.js";
import type { MemoryBudget } from "../lower/out_of_core.js";
import type { Handle } from "../native/addon.js";
import type { OptimizeOptions } from "../plan/passes/pass.js";
import type { ProgressEvent } from "../scheduler/shell.js";

/** A result left in the store as its partitions, in order: the caller owns and must release every one. */
export interface StoredParts {
  refs: Handle[];
  skippedLines: number;
  /** Tasks the run took (0 where the cluster does not say, as on Dask). */
  tasks: number;
  /** Partitions written by FrameRunOptions.writeStep (then `refs` are what those steps output); absent where the cluster did not (Dask). */
  written?: number;
}

export interface ClusterRunOptions {
  onProgress?: (e: ProgressEvent) => void;
  /** Aborting cancels every queued task of the run. */
  signal?: AbortSignal;
}

export interface FrameRunOptions extends ClusterRunOptions {
  optimize?: OptimizeOptions;
  /** Keep the result's partitions (never concatenated); else one table. */
  parts?: boolean;
  /** With parts: exactly this many partitions (adjacent ones concatenated, or each split into row ranges). */
  groups?: number;
  /** The result becomes a persisted frame's partitions: a worker process that made one keeps its copy, read in place by later runs. */
  persisted?: boolean;
  /**
   * A writer's step for partition `part` of the result, run in a task of its own as soon
   * as that partition is made (engine/graph/write_tasks.ts), so the result is written as
   * it is computed, never kept whole. A cluster that cannot run it (Dask) ignores it and
   * leaves StoredParts.written unset.
   */
  writeStep?: (part: number) => Step;
}

/**
 * A cluster that runs Basin's plans.
 *
 * @example
 * const cluster: Cluster = new LocalCluster({ workers: 2 });
 * const { refs } = await cluster.runFrame(df.toPlan(), { parts: true });
 * await cluster.close();
 */
export interface Cluster {
  readonly kind: "local" | "dask";
  /** What it is, for messages: "local", "tcp://…", "profile gpu-box (via ssh)". */
  readonly label: string;
  /** The memory the lowering plans shuffles for; absent where the cluster partitions by itself (Dask). */
  readonly budget?: MemoryBudget;
  /** Workers that compute a frame's tasks (persist()'s default partitions); 0 where the cluster sizes itself (Dask). */
  readonly workerSlots: number;
  /** Where GPUs alone compute: the bytes of a persisted partition that fits a GPU's work (persist()'s default partitionBytes). */
  readonly devicePartitionBytes?: number;
  /** Whether its workers read this process's store in place (threads), so a task over a stored table moves nothing. */
  readonly workersShareStore?: boolean;
  /** Makes GPUs home to persisted partitions where they alone compute (their columns uploaded now); persist() calls it. */
  keepOnDevices?(handles: readonly number[]): Promise<void>;
  /** Persisted tables were released: copies of them elsewhere (worker processes) go now. */
  unpersisted?(): void;
  /** Reaches the cluster now, so that an unreachable one fails before the first run. */
  connect(): Promise<void>;
  /** Optimizes and runs a frame plan, leaving the result in the store. */
  runFrame(plan: Plan, options?: FrameRunOptions): Promise<StoredParts>;
  /**
   * Runs a task graph a collection built (arrays, bags, delayed calls), leaving its
   * result in the store; a cluster that runs only frames refuses it, naming `what`.
   */
  runGraph(graph: TaskGraph, what: string, options?: ClusterRunOptions): Promise<StoredParts>;
  /** Workers, memory and jobs, as the workbench's cluster panel shows them; with `since`, the task spans after that cursor (local clusters). */
  clusterStatus(since?: number): Promise<ClusterStatus>;
  /** Disconnects (a SLURM cluster also cancels its jobs; the local one stops its workers). */
  close(): Promise<void>;
}
