// Entry point of a worker thread (CPU, or one GPU's): runs tasks one at a time,
// synchronously, off the main thread; data stays in the process-wide native store.
import { parentPort, workerData } from "node:worker_threads";
import { native } from "../native/addon.js";
import type { TaskMessage } from "./protocol.js";
import { runTask } from "./run_task.js";
import { guardExit } from "./user_exit.js";

if (!parentPort) throw new Error("workers/worker.js must run in a worker thread");
const port = parentPort;
// Tables this thread makes are its own until the main thread claims them, so a
// thread that dies mid-task leaves nothing behind in the store.
const { owner, gpu } = workerData as { owner: number; gpu?: number };
native().setThreadOwner(owner);
const exit = guardExit();

port.on("message", (msg: TaskMessage) => {
  const reply = runTask(msg, gpu);
  port.postMessage(reply);
  // A CUDA error may leave the GPU's context in doubt: this worker makes way for a fresh
  // one (the pool replaces it; the native side has already reset the GPU if it had to).
  if (gpu !== undefined && !reply.ok && reply.error.code === "BASIN_CUDA") exit(1);
});
