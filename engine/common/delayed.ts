// The serializable form of a delayed call: a user function and its arguments, where
// arguments may be the results of other tasks (the task's inputs), nested in arrays
// and plain objects.
import type { FnSpec } from "./bag.js";
import type { SerializedError } from "./errors.js";

/** An argument: task input `dep`'s value, a literal (structured-clonable), or an array / plain object of those. */
export type ArgTemplate =
  { dep: number } | { value: unknown } | { array: ArgTemplate[] } | { object: [string, ArgTemplate][] };

export interface DelayedCall {
  fn: FnSpec;
  args: ArgTemplate[];
  /** Store a thrown error as the result (for futures, which fail one by one) instead of failing the run. */
  catchErrors: boolean;
}

/** What a call task leaves in the store (v8-serialized, structured-clone semantics). */
export type CallOutcome = { ok: true; value: unknown } | { ok: false; error: SerializedError };
