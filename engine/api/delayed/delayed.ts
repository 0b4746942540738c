// delayed / compute / submit: task graphs from ordinary TypeScript functions (like
// dask.delayed and futures). Each call becomes one task on a CPU worker; arguments
// that are other delayed calls become the task's inputs, so independent calls run in
// parallel and a result stays in the store until its last user has run.
import type { FnSpec } from "../../common/bag.js";
import type { ArgTemplate, CallOutcome } from "../../common/delayed.js";
import { BasinError, type SourceLocation } from "../../common/errors.js";
import { concatAll, type Task, type TaskGraph } from "../../graph/tasks.js";
import type { ComputeOptions } from "../../run/stored.js";
import { runPlan } from "../../run/run_plan.js";
import { Bag } from "../bag/bag.js";
import { DataFrame } from "../dataframe.js";
import { callerLocation } from "../source_location.js";
import { captureFn, type UserFnOptions } from "../user_fn.js";

let nextId = 0;

/**
 * A value not computed yet: the result of calling a delayed function. Pass it to
 * other delayed calls, or run it with `compute`.
 */
export class Delayed<T = unknown> {
  readonly id = nextId++;
  /** @internal the result type, for inference only; never set */
  declare readonly _type?: T;

  constructor(
    readonly fn: FnSpec,
    readonly args: ArgTemplate[],
    /** The delayed values the arguments use, by `{ dep: i }`. */
    readonly deps: Delayed[],
    readonly loc?: SourceLocation,
  ) {}

  /**
   * Runs this value's graph on the cluster.
   *
   * @example
   * const total = await delayed(add)(1, 2).compute();
   */
  async compute(options: Pick<ComputeOptions, "cluster" | "onProgress" | "signal"> = {}): Promise<T> {
    return (await computeWith(options, this))[0] as T;
  }
}

/** An argument of a delayed call: the value, a delayed value, or arrays / plain objects holding those. */
export type Lazy<T> =
  | T
  | Delayed<T>
  | (T extends readonly (infer E)[]
      ? Lazy<E>[]
      : T extends Record<string, unknown>
        ? { [K in keyof T]: Lazy<T[K]> }
        : never);

/** What `compute` resolves a value to: a delayed value's result; other values as they are. */
export type Computed<T> = T extends Delayed<infer R> ? R : T;

function isPlain(v: object): boolean {
  const p = Object.getPrototypeOf(v);
  return p === Object.prototype || p === null;
}

/** Values that keep their meaning through a structured clone (as arguments travel to workers). */
function cloneable(v: object): boolean {
  return (
    Array.isArray(v) ||
    isPlain(v) ||
    ArrayBuffer.isView(v) ||
    v instanceof ArrayBuffer ||
    v instanceof Date ||
    v instanceof Map ||
    v instanceof Set ||
    v instanceof RegExp ||
    v instanceof Error
  );
}

/** The template of an argument, collecting the delayed values it holds into `deps`. */
function template(v: unknown, deps: Delayed[], where: string, loc: SourceLocation | undefined): ArgTemplate {
  if (v instanceof Delayed) {
    let i = deps.indexOf(v);
    if (i < 0) i = deps.push(v) - 1;
    return { dep: i };
  }
  if (v instanceof Future)
    throw new BasinError(
      "BASIN_PLAN",
      `${where} is a Future; pass its value (await fut.result()), or use a delayed value instead`,
      loc,
    );
  if (v instanceof DataFrame || v instanceof Bag)
    throw new BasinError(
      "BASIN_PLAN",
      `${where} is a ${v instanceof Bag ? "Bag" : "DataFrame"}; compute it first and pass the result`,
      loc,
    );
  if (typeof v === "function" || typeof v === "symbol")
    throw new BasinError(
      "BASIN_PLAN",
      `${where} is a ${typeof v}, which cannot travel to worker threads; pass functions with { with: { name: fn } } on delayed()`,
      loc,
    );
  if (typeof v !== "object" || v === null) return { value: v };
  if (!cloneable(v))
    throw new BasinError(
      "BASIN_PLAN",
      `${where} is a ${v.constructor?.name ?? "class instance"}, which would lose its class on the way to a worker thread; pass plain data`,
      loc,
    );
  const before = deps.length;
  if (Array.isArray(v)) {
    const parts = v.map((x, i) => template(x, deps, `${where}[${i}]`, loc));
    return parts.some((p) => !("value" in p)) || deps.length > before ? { array: parts } : { value: v };
  }
  if (isPlain(v)) {
    const parts = Object.entries(v).map(([k, x]): [string, ArgTemplate] => [
      k,
      template(x, deps, `${where}.${k}`, loc),
    ]);
    return parts.some(([, p]) => !("value" in p)) ? { object: parts } : { value: v };
  }
  return { value: v };
}

/**
 * Wraps a function so that calling it builds a task instead of running it. The
 * function travels to worker threads as source text: it may use only its arguments,
 * globals, and values passed with `{ with: { name: value } }`.
 *
 * @example
 * const load = delayed((i: number) => Array.from({ length: 1000 }, (_, j) => i * j));
 * const total = delayed((parts: number[][]) => parts.flat().reduce((a, b) => a + b, 0));
 * const [t] = await compute(total([load(1), load(2), load(3)]));
 */
export function delayed<A extends unknown[], R>(
  fn: (...args: A) => R,
  options: UserFnOptions = {},
): (...args: { [K in keyof A]: Lazy<A[K]> }) => Delayed<R> {
  const spec = captureFn(fn, "the function passed to delayed", callerLocation(), options);
  return (...args) => {
    const loc = callerLocation();
    const deps: Delayed[] = [];
    const templates = args.map((a, i) => template(a, deps, `argument ${i + 1} of ${spec.name}`, loc));
    return new Delayed<R>(spec, templates, deps, loc);
  };
}

/** The tasks computing `roots` (and what they depend on), each delayed value once. */
function callTasks(roots: Delayed[], catchErrors: Set<Delayed>): Map<Delayed, Task> {
  const tasks = new Map<Delayed, Task>();
  const visit = (d: Delayed): string => {
    const done = tasks.get(d);
    if (done) return done.key;
    const deps = d.deps.map((x) => ({ key: visit(x), index: 0 }));
    const key = `call(${d.fn.name})-${d.id}`;
    tasks.set(d, {
      key,
      group: `call(${d.fn.name})`,
      deps,
      steps: [{ kind: "call", call: { fn: d.fn, args: d.args, catchErrors: catchErrors.has(d) }, loc: d.loc }],
    });
    return key;
  };
  roots.forEach(visit);
  return tasks;
}

/** Runs the delayed values `roots` in one graph; resolves to their outcomes, in order. */
async function runCalls(
  roots: Delayed[],
  catchErrors: Set<Delayed>,
  options: Pick<ComputeOptions, "cluster" | "onProgress" | "signal">,
): Promise<CallOutcome[]> {
  if (roots.length === 0) return [];
  const tasks = callTasks(roots, catchErrors);
  const gather: Task = {
    key: "gather",
    group: "gather",
    deps: roots.map((d) => ({ key: tasks.get(d)!.key, index: 0 })),
    steps: [concatAll(roots.length)],
  };
  const graph: TaskGraph = { tasks: [...tasks.values(), gather], output: gather.key };
  return runPlan({ kind: "delayed", graph }, options);
}

function fill(t: ArgTemplate, values: unknown[]): unknown {
  if ("dep" in t) return values[t.dep];
  if ("value" in t) return t.value;
  if ("array" in t) return t.array.map((x) => fill(x, values));
  return Object.fromEntries(t.object.map(([k, x]) => [k, fill(x, values)]));
}

/**
 * Like `compute`, on a given cluster or with progress and cancellation.
 *
 * @example
 * const [a, b] = await computeWith({ cluster }, x, y);
 */
export async function computeWith<V extends unknown[]>(
  options: Pick<ComputeOptions, "cluster" | "onProgress" | "signal">,
  ...values: V
): Promise<{ [K in keyof V]: Computed<V[K]> }> {
  const loc = callerLocation();
  const deps: Delayed[] = [];
  const templates = values.map((v, i) => template(v, deps, `value ${i + 1} given to compute`, loc));
  const outcomes = await runCalls(deps, new Set(), options);
  const results = outcomes.map((o) => (o.ok ? o.value : undefined));
  return templates.map((t) => fill(t, results)) as { [K in keyof V]: Computed<V[K]> };
}

/**
 * Runs delayed values (and any delayed values nested in arrays or objects) in one
 * graph, in parallel on the CPU workers; shared inputs are computed once.
 *
 * @example
 * const inc = delayed((x: number) => x + 1);
 * const [a, b] = await compute(inc(1), inc(2)); // [2, 3]
 */
export function compute<V extends unknown[]>(...values: V): Promise<{ [K in keyof V]: Computed<V[K]> }> {
  return computeWith({}, ...values);
}

/**
 * A call running on the cluster now; `result()` waits for its value (or its error).
 */
export class Future<T = unknown> {
  private outcome?: { ok: true; value: T } | { ok: false; error: BasinError };
  private readonly promise: Promise<T>;

  /** @internal */
  constructor(run: Promise<T>) {
    this.promise = run.then(
      (value) => ((this.outcome = { ok: true, value }), value),
      (e: unknown) => {
        const error = BasinError.from(e);
        this.outcome = { ok: false, error };
        throw error;
      },
    );
    this.promise.catch(() => {}); // a future nobody asks about must not be an unhandled rejection
  }

  /** Whether the call has finished (with a value or an error). */
  get done(): boolean {
    return this.outcome !== undefined;
  }

  /**
   * The call's value; rejects with the BasinError the call failed with.
   *
   * @example
   * const v = await submit((a: number, b: number) => a * b, 6, 7).result(); // 42
   */
  result(): Promise<T> {
    return this.promise;
  }
}

/** Calls submitted in the same turn run together, as one graph, in parallel. */
let batch: { call: Delayed; settle: (o: CallOutcome | BasinError) => void }[] = [];

function flush(): void {
  const calls = batch;
  batch = [];
  const roots = calls.map((c) => c.call);
  runCalls(roots, new Set(roots), {}).then(
    (outcomes) => outcomes.forEach((o, i) => calls[i].settle(o)),
    (e: unknown) => calls.forEach((c) => c.settle(BasinError.from(e))),
  );
}

/**
 * Starts `fn(...args)` on a CPU worker now and returns a Future of its value. Calls
 * submitted together run in parallel; each fails on its own.
 *
 * @example
 * const futs = [1, 2, 3].map((n) => submit((x: number) => x * x, n));
 * const squares = await Promise.all(futs.map((f) => f.result())); // [1, 4, 9]
 */
export function submit<A extends unknown[], R>(
  fn: (...args: A) => R,
  ...args: { [K in keyof A]: Lazy<A[K]> }
): Future<R> {
  const call = delayed(fn)(...args); // located at this function's caller: engine frames are skipped
  return new Future<R>(
    new Promise<R>((resolve, reject) => {
      if (batch.length === 0) queueMicrotask(flush);
      batch.push({
        call,
        settle: (o) =>
          o instanceof BasinError ? reject(o) : o.ok ? resolve(o.value as R) : reject(BasinError.fromJSON(o.error)),
      });
    }),
  );
}
