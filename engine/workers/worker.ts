// Entry point of a CPU worker thread: runs tasks one at a time, synchronously,
// off the main thread; data stays in the process-wide native store.
import { parentPort, workerData } from "node:worker_threads";
import { native } from "../native/addon.js";
import { BasinError } from "../common/errors.js";
import type { ResultMessage, TaskMessage } from "./protocol.js";
import { runSteps } from "./run_steps.js";

if (!parentPort) throw new Error("workers/worker.js must run in a worker thread");
const port = parentPort;
// Tables this thread makes are its own until the main thread claims them, so a
// thread that dies mid-task leaves nothing behind in the store.
native().setThreadOwner((workerData as { owner: number }).owner);

port.on("message", (msg: TaskMessage) => {
  const t0 = performance.now();
  let reply: ResultMessage;
  try {
    const r = runSteps(msg.steps, msg.inputs);
    reply = { key: msg.key, ok: true, outputs: r.outputs, rows: r.rows, skippedLines: r.skippedLines, ms: performance.now() - t0 };
  } catch (e) {
    reply = { key: msg.key, ok: false, error: BasinError.from(e).toJSON() };
  }
  port.postMessage(reply);
});
