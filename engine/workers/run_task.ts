import { BasinError } from "../common/errors.js";
import type { ResultMessage, TaskMessage } from "./protocol.js";
import { runSteps } from "./run_steps.js";

/**
 * Runs one task on the calling worker (thread or process) and says how it went; a
 * failure becomes a result carrying the error, never a throw.
 *
 * @example
 * const r = runTask({ key: "scan-0", steps, inputs: [] }); if (r.ok) r.outputs;
 */
export function runTask(msg: TaskMessage, gpu?: number): ResultMessage {
  const t0 = performance.now();
  try {
    const r = runSteps(msg.steps, msg.inputs, gpu);
    return {
      key: msg.key,
      ok: true,
      outputs: r.outputs,
      rows: r.rows,
      skippedLines: r.skippedLines,
      ms: performance.now() - t0,
    };
  } catch (e) {
    return { key: msg.key, ok: false, error: BasinError.from(e).toJSON() };
  }
}
