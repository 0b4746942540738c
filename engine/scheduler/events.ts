import type { SerializedError } from "../common/errors.js";

/** A data reference held by the cluster (a store handle for the local cluster). */
export type Ref = number;

/** What happened, fed into the state machine. `stimulusId` ties instructions to their cause. */
export type SchedulerEvent =
  | { type: "start"; stimulusId: string }
  /** A worker joined, or is free for this run again (another run's task there ended). */
  | { type: "workerAdded"; worker: string; stimulusId: string }
  /** Another run's task runs on the worker now: it is not free for this run until workerAdded says so. */
  | { type: "workerTaken"; worker: string; stimulusId: string }
  /**
   * A worker died. `lost` are the outputs that lived only in its memory (a worker
   * process's own store): the tasks that made them are recomputed from lineage.
   * `started` false: the run's task given to it had not begun (it waited behind another
   * run's), so the loss does not count against that task.
   */
  | { type: "workerLost"; worker: string; reason: string; lost?: Ref[]; started?: boolean; stimulusId: string }
  | { type: "taskFinished"; key: string; worker: string; outputs: Ref[]; nbytes: number; stimulusId: string }
  | { type: "taskErred"; key: string; worker: string; error: SerializedError; stimulusId: string }
  | { type: "cancel"; reason: string; stimulusId: string }
  /** The store went over (or back under) its memory limit even after spilling. */
  | { type: "memory"; overLimit: boolean; stimulusId: string };

/** What to do, emitted by the state machine for the shell to carry out. */
export type Instruction =
  | { type: "execute"; key: string; worker: string; inputs: Ref[]; stimulusId: string }
  | { type: "release"; key: string; outputs: Ref[]; stimulusId: string }
  | { type: "progress"; group: string; done: number; total: number; stimulusId: string }
  /** The run succeeded; ownership of `outputs` passes to the caller. */
  | { type: "finished"; outputs: Ref[]; stimulusId: string }
  | { type: "failed"; key?: string; error: SerializedError; stimulusId: string };
