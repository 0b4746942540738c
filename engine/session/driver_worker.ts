// Worker-thread entry: evaluates a pipeline file and posts back its plans. The
// user's code runs here, not on the engine's main thread, so a pipeline that
// loops or throws cannot stall or break the server; plans are plain JSON.
import { parentPort, workerData } from "node:worker_threads";
import { BasinError } from "../common/errors.js";
import type { DriverLoaded, DriverReply, DriverRequest } from "./driver.js";
import { evaluatePipeline } from "./evaluate_pipeline.js";
import { API_URL } from "./load_pipeline.js";

const { path, source } = workerData as DriverRequest;
const evaluated = evaluatePipeline(path, source);
// The engine's modules are in once the import evaluatePipeline started resolves (the same
// module): from then on the thread may be terminated without leaking their open files.
await import(API_URL).catch(() => undefined);
parentPort!.postMessage({ loaded: true } satisfies DriverLoaded);
let reply: DriverReply;
try {
  const { plan, array, shown } = await evaluated;
  reply = { ok: true, plan, array, shown };
} catch (e) {
  reply = { ok: false, error: BasinError.from(e).toJSON() };
}
parentPort!.postMessage(reply);
