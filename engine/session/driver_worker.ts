// Worker-thread entry: evaluates a pipeline file and posts back its plan. The
// user's code runs here, not on the engine's main thread, so a pipeline that
// loops or throws cannot stall or break the server; plans are plain JSON.
import { parentPort, workerData } from "node:worker_threads";
import { DataFrame } from "../api/dataframe.js";
import { Bag } from "../api/bag/bag.js";
import { NDArray } from "../api/array/ndarray.js";
import { takeShown } from "../api/show.js";
import { BasinError } from "../common/errors.js";
import { loadPipeline } from "./load_pipeline.js";
import type { DriverReply, DriverRequest } from "./driver.js";

const { path, source } = workerData as DriverRequest;
let reply: DriverReply;
try {
  const value = await loadPipeline(path, source);
  if (value instanceof NDArray) reply = { ok: true, array: value.node, shown: takeShown() };
  else if (value instanceof DataFrame || value instanceof Bag) reply = { ok: true, plan: value.toPlan(), shown: takeShown() };
  else throw new BasinError("BASIN_PLAN", `${path}: the default export must be a DataFrame, a Bag or an array (end the file with \`export default <frame>\`), got ${typeof value}`);
} catch (e) {
  reply = { ok: false, error: BasinError.from(e).toJSON() };
}
parentPort!.postMessage(reply);
