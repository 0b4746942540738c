// A user function (a bag map, a delayed call) that calls process.exit() would end the
// worker it runs on: the pool restarts it and retries the task until it gives up with
// "a worker died". In a worker, process.exit throws a BASIN_FUNCTION error instead, which
// the task reports at the function's own line; the worker keeps the real exit.
import { BasinError } from "../common/errors.js";

/**
 * Replaces process.exit in this worker (thread or process) and returns the real one.
 *
 * @example
 * const exit = guardExit(); ... exit(1); // the worker's own decision to end
 */
export function guardExit(): (code?: number) => never {
  const real = process.exit.bind(process) as (code?: number) => never;
  process.exit = ((code?: number) => {
    throw new BasinError(
      "BASIN_FUNCTION",
      `a user function called process.exit(${code ?? ""}), which would end the worker running it; return a value, or throw an Error to fail the run`,
    );
  }) as typeof process.exit;
  return real;
}
