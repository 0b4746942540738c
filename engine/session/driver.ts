// Plans a pipeline file in a driver worker thread (see driver_worker.ts).
import { Worker } from "node:worker_threads";
import { BasinError, type SerializedError } from "../common/errors.js";
import type { Plan } from "../common/plan.js";
import { builtScript } from "../workers/built_script.js";
import type { PipelinePlans } from "./evaluate_pipeline.js";

export interface DriverRequest {
  path: string;
  source?: string;
}

export type DriverReply = ({ ok: true } & PipelinePlans) | { ok: false; error: SerializedError };

/** The driver thread's first message: the pipeline's modules are read (its first line runs, or its evaluation ended). */
export interface DriverLoaded {
  loaded: true;
}

/**
 * Evaluates a pipeline file (or unsaved `source` for it) off the main thread and
 * resolves to its plan; aborting stops the evaluation at once.
 *
 * @example
 * const plan = await planPipeline("examples/taxi.ts");
 */
export async function planPipeline(path: string, source?: string, signal?: AbortSignal): Promise<Plan> {
  const { plan } = await planPipelineResults(path, source, signal);
  if (!plan)
    throw new BasinError(
      "BASIN_PLAN",
      `${path}: the default export is an array; run it in the workbench or with basin run`,
    );
  return plan;
}

/**
 * Like planPipeline, with the named results of `show(frame, name)` calls too.
 *
 * @example
 * const { plan, shown } = await planPipelineResults("examples/taxi.ts");
 */
export function planPipelineResults(path: string, source?: string, signal?: AbortSignal): Promise<PipelinePlans> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new BasinError("BASIN_CANCELLED", "the run was cancelled"));
    const worker = new Worker(builtScript("session/driver_worker.js"), {
      workerData: { path, source } satisfies DriverRequest,
    });
    let settled = false;
    // Node leaks the open files of modules a thread is still loading when it is
    // terminated (about 4 a run cancelled early, until nothing can run: EMFILE): a thread
    // that has not loaded the pipeline and the engine yet is terminated once it has.
    let loaded = false;
    const settle = (f: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener("abort", onAbort);
      if (loaded) void worker.terminate();
      f();
    };
    const onAbort = () =>
      settle(() =>
        reject(new BasinError("BASIN_CANCELLED", "the run was cancelled while the pipeline file was evaluated")),
      );
    signal?.addEventListener("abort", onAbort);
    worker.on("message", (r: DriverReply | DriverLoaded) => {
      if ("loaded" in r) {
        loaded = true;
        if (settled) void worker.terminate(); // cancelled while it loaded
        return;
      }
      settle(() =>
        r.ok ? resolve({ plan: r.plan, array: r.array, shown: r.shown }) : reject(BasinError.fromJSON(r.error)),
      );
    });
    worker.once("error", (e) =>
      settle(() =>
        reject(
          (e as NodeJS.ErrnoException).code === "ERR_WORKER_OUT_OF_MEMORY"
            ? new BasinError(
                "BASIN_PIPELINE",
                `${path}: the pipeline's own code ran out of JavaScript memory while the file was evaluated; build large data with the readers or fromColumns in parts, not in JS arrays, or give Node more heap (--max-old-space-size)`,
              )
            : BasinError.from(e),
        ),
      ),
    );
    // Only the pipeline's own code ends the thread before it answers: process.exit().
    worker.once("exit", (code) =>
      settle(() =>
        reject(
          new BasinError(
            "BASIN_PIPELINE",
            `${path}: the pipeline's code ended its evaluation (process.exit(${code})) before its default export was ready; remove the process.exit call`,
          ),
        ),
      ),
    );
  });
}
