// Turns a travelling user function (engine/common/bag.ts FnSpec) back into a
// function on a worker thread. The API checked at the call site that it uses no
// outer variables beyond the ones passed with `with`, which become its parameters.
import type { FnSpec } from "../common/bag.js";
import { BasinError, type SourceLocation } from "../common/errors.js";
import { thrownValue } from "../common/thrown_value.js";

type UserFn = (...args: unknown[]) => unknown;

const cache = new Map<string, UserFn>();

/**
 * The function a spec describes; compiled once per thread and kept.
 *
 * @example
 * compileFn({ source: "((x) => x + k)", name: "anonymous", captured: { k: { value: 1 } } })(2) // 3
 */
export function compileFn(spec: FnSpec): UserFn {
  const key = spec.source + "\0" + JSON.stringify(spec.captured);
  let f = cache.get(key);
  if (!f) {
    const names = Object.keys(spec.captured);
    const values = names.map((n) => {
      const c = spec.captured[n];
      return "fn" in c ? compileFn(c.fn) : c.value;
    });
    // Strict mode: an assignment to an undeclared name throws instead of making a global.
    f = new Function(...names, `"use strict"; return (${spec.source});`)(...values) as UserFn;
    if (cache.size > 1000) cache.clear();
    cache.set(key, f);
  }
  return f;
}

/**
 * Calls a user function; what it throws becomes a BasinError naming the function,
 * what it was doing and where the pipeline set it up.
 */
export function callUser(
  f: UserFn,
  spec: FnSpec,
  what: string,
  loc: SourceLocation | undefined,
  args: unknown[],
): unknown {
  try {
    return f(...args);
  } catch (e) {
    const msg = e instanceof Error ? `${e.name}: ${e.message}` : thrownValue(e);
    throw new BasinError("BASIN_FUNCTION", `${what} function ${JSON.stringify(spec.name)} threw ${msg}`, loc);
  }
}
