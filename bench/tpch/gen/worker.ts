// A generator worker thread: runs the tasks it is sent, in its own PRNG streams, and
// sends back each task's encoded parts (their buffers transferred, not copied).
import { parentPort, workerData } from "node:worker_threads";
import type { Task } from "./tables.js";
import { runTask } from "./task.js";

/** What the main thread gives each worker. */
export interface WorkerSetup {
  sf: number;
  csv: boolean;
  /** The text pool, shared. */
  pool: SharedArrayBuffer;
}

export interface TaskMessage {
  seq: number;
  task: Task;
}

const setup = workerData as WorkerSetup;
const pool = new Uint8Array(setup.pool);
parentPort?.on("message", (m: TaskMessage) => {
  const parts = runTask(m.task, setup.sf, pool, setup.csv);
  const buffers = parts.flatMap((p) => (p.csv ? [p.parquet.buffer, p.csv.buffer] : [p.parquet.buffer]));
  parentPort?.postMessage({ seq: m.seq, parts }, buffers as ArrayBuffer[]);
});
