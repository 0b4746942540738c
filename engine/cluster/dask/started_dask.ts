// What a cluster that starts its own Dask (SLURM jobs, a runner's allocation) shares:
// once started, it runs plans on a DaskCluster connected to the scheduler it started,
// and fails clearly before then.
import { BasinError } from "../../common/errors.js";
import type { Plan } from "../../common/plan.js";
import type { ClusterStatus } from "../../common/rpc.js";
import type { TaskGraph } from "../../graph/tasks.js";
import type { Cluster, ClusterRunOptions, FrameRunOptions, StoredParts } from "../cluster.js";
import { DaskCluster } from "./dask_cluster.js";

/** A scheduler address (as the nodes have it) as this machine reaches it, and whether results must come through the scheduler. */
export type Reach = (address: string) => Promise<{ address: string; viaScheduler: boolean }>;

/**
 * @example
 * class MyCluster extends StartedDask { ... this.client = new DaskCluster(address); ... }
 */
export abstract class StartedDask implements Cluster {
  readonly kind = "dask";
  readonly workerSlots = 0;
  /** The bridge to the scheduler, set once started. */
  protected client?: DaskCluster;

  /** "the SLURM cluster "hpc"", for the error before start(). */
  protected abstract readonly what: string;
  abstract readonly label: string;
  abstract clusterStatus(): Promise<ClusterStatus>;
  abstract close(): Promise<void>;

  /** The Dask cluster to run pipelines on (after start()). */
  get dask(): DaskCluster {
    if (!this.client) throw new BasinError("BASIN_PLAN", `${this.what} is not started; await start() first`);
    return this.client;
  }

  /**
   * Connects the bridge to the scheduler the cluster started, at `address` as the
   * nodes have it, through `reach` (e.g. an SSH tunnel) when given.
   */
  protected async connectTo(
    address: string,
    reach: Reach | undefined,
    python: string | undefined,
  ): Promise<DaskCluster> {
    const r = reach ? await reach(address) : { address, viaScheduler: false };
    this.client = new DaskCluster(r.address, { python, viaScheduler: r.viaScheduler, connectTimeout: 30 });
    await this.client.connect();
    return this.client;
  }

  /** The scheduler was reached by start(); this checks it still answers. */
  connect(): Promise<void> {
    return this.dask.connect();
  }

  runFrame(plan: Plan, options?: FrameRunOptions): Promise<StoredParts> {
    return this.dask.runFrame(plan, options);
  }

  runGraph(graph: TaskGraph, what: string, options?: ClusterRunOptions): Promise<StoredParts> {
    return this.dask.runGraph(graph, what, options);
  }
}
