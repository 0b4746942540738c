// Delayed calls on a worker thread. A call's result is kept in the store as a
// one-row table whose single string column holds the value's v8 serialization
// (structured-clone semantics: typed arrays, Maps, Dates and BigInts survive, as
// they would crossing threads), so results pass between tasks on any worker
// without going through the main thread.
import { deserialize, serialize } from "node:v8";
import type { ArgTemplate, CallOutcome, DelayedCall } from "../common/delayed.js";
import { BasinError, type SourceLocation } from "../common/errors.js";
import { native, type Handle, type JsStrings } from "../native/addon.js";
import { callUser, compileFn } from "./user_fn.js";

/** The column a call's outcome is stored under. */
export const VALUE_COLUMN = "value";

/** Stores an outcome as a one-row table. */
export function encodeOutcome(o: CallOutcome): Handle {
  const bytes = serialize(o);
  const chars = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const values: JsStrings = { offsets: Float64Array.of(0, chars.length), chars, ascii: false, binary: true };
  return native().tableFromJs({
    rows: 1,
    names: [VALUE_COLUMN],
    columns: [{ type: "string", values, validity: null }],
  });
}

/** The outcomes in a table of them (one per row). */
export function decodeOutcomes(h: Handle): CallOutcome[] {
  const t = native().tableToJs(h);
  const raw = t.columns[0].values as JsStrings;
  const out: CallOutcome[] = [];
  for (let i = 0; i < t.rows; i++)
    out.push(deserialize(raw.chars.subarray(raw.offsets[i], raw.offsets[i + 1])) as CallOutcome);
  return out;
}

function build(t: ArgTemplate, deps: unknown[]): unknown {
  if ("dep" in t) return deps[t.dep];
  if ("value" in t) return t.value;
  if ("array" in t) return t.array.map((a) => build(a, deps));
  return Object.fromEntries(t.object.map(([k, a]) => [k, build(a, deps)]));
}

/** Runs a call over its inputs' values; the outcome goes to the store. */
export function runCall(call: DelayedCall, inputs: Handle[], loc: SourceLocation | undefined): Handle {
  const deps = inputs.map((h) => {
    const o = decodeOutcomes(h)[0];
    if (!o.ok) throw new BasinError("BASIN_INTERNAL", "a delayed call got a failed input");
    return o.value;
  });
  let outcome: CallOutcome;
  try {
    const r = callUser(
      compileFn(call.fn),
      call.fn,
      "delayed",
      loc,
      call.args.map((a) => build(a, deps)),
    );
    if (r instanceof Promise) {
      r.catch(() => {}); // not awaited: the worker runs tasks synchronously
      throw new BasinError(
        "BASIN_FUNCTION",
        `delayed function ${JSON.stringify(call.fn.name)} returned a Promise; delayed functions run synchronously on worker threads, so make it a plain (not async) function`,
        loc,
      );
    }
    outcome = { ok: true, value: r };
  } catch (e) {
    if (!call.catchErrors) throw e;
    outcome = { ok: false, error: BasinError.from(e, loc).toJSON() };
  }
  try {
    return encodeOutcome(outcome);
  } catch (e) {
    const err = new BasinError(
      "BASIN_FUNCTION",
      `delayed function ${JSON.stringify(call.fn.name)} returned a value that cannot be passed between threads (${(e as Error).message}); return plain data`,
      loc,
    );
    if (!call.catchErrors) throw err;
    return encodeOutcome({ ok: false, error: err.toJSON() });
  }
}
