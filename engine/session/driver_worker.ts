// Worker-thread entry: evaluates a pipeline file and posts back its plans. The
// user's code runs here, not on the engine's main thread, so a pipeline that
// loops or throws cannot stall or break the server; plans are plain JSON.
import { parentPort, workerData } from "node:worker_threads";
import { BasinError } from "../common/errors.js";
import type { DriverLoaded, DriverReply, DriverRequest } from "./driver.js";
import { evaluatePipeline } from "./evaluate_pipeline.js";
import { PIPELINE_LOADED_HOOK } from "./load_pipeline.js";

const { path, source } = workerData as DriverRequest;
let loaded = false;
/** From now on the thread may be terminated without leaking the open files of modules still loading. */
const tellLoaded = () => {
  if (loaded) return;
  loaded = true;
  parentPort!.postMessage({ loaded: true } satisfies DriverLoaded);
};
// The compiled pipeline's first line calls it: the engine's modules and the pipeline's are read.
(globalThis as Record<string, unknown>)[PIPELINE_LOADED_HOOK] = tellLoaded;
let reply: DriverReply;
try {
  const { plan, array, shown } = await evaluatePipeline(path, source);
  reply = { ok: true, plan, array, shown };
} catch (e) {
  reply = { ok: false, error: BasinError.from(e).toJSON() };
}
tellLoaded(); // a pipeline that failed to compile or import never ran its first line
parentPort!.postMessage(reply);
