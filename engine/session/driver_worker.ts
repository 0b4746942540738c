// Worker-thread entry: evaluates a pipeline file and posts back its plans. The
// user's code runs here, not on the engine's main thread, so a pipeline that
// loops or throws cannot stall or break the server; plans are plain JSON.
import { parentPort, workerData } from "node:worker_threads";
import { BasinError } from "../common/errors.js";
import type { DriverReply, DriverRequest } from "./driver.js";
import { evaluatePipeline } from "./evaluate_pipeline.js";

const { path, source } = workerData as DriverRequest;
let reply: DriverReply;
try {
  const { plan, array, shown } = await evaluatePipeline(path, source);
  reply = { ok: true, plan, array, shown };
} catch (e) {
  reply = { ok: false, error: BasinError.from(e).toJSON() };
}
parentPort!.postMessage(reply);
