// Bag: a lazy, partitioned collection of JSON values (like dask.bag), transformed by
// ordinary TypeScript functions that run on the worker threads.
import {
  BAG_SCHEMA,
  type BagNode,
  type FnSpec,
  type JsonValue,
  type KeySpec,
  type Maybe,
  type Reducer,
} from "../../common/bag.js";
import { PLAN_VERSION, type Plan } from "../../common/plan.js";
import { BasinError, type SourceLocation } from "../../common/errors.js";
import { isDType, type DType, type Field } from "../../common/types.js";
import type { ComputeOptions } from "../../run/stored.js";
import { runPlan } from "../../run/run_plan.js";
import { DataFrame } from "../dataframe.js";
import { callerLocation } from "../source_location.js";
import { captureFn, notJson, type UserFnOptions } from "../user_fn.js";

/** How an item's key is found: a field name, an array index, or a function of the item. */
export type KeyArg<T> = string | number | ((item: T) => unknown);

export interface FoldByOptions<A> extends UserFnOptions {
  /** Where each key's fold starts (default: the key's first item). */
  initial?: A;
  /** Merges two partial results of one key, from different partitions (default: `binop`). */
  combine?: (a: A, b: A) => A;
  /** Where merging partial results starts (default: the first partial result). */
  combineInitial?: A;
}

export interface TopKOptions extends UserFnOptions {
  /** Largest first (default), or smallest first when false. */
  descending?: boolean;
}

export interface PluckOptions {
  /** The value for items that lack the key (default: an error naming the item). */
  default?: unknown;
}

function maybe(v: unknown, what: string, loc: SourceLocation | undefined): Maybe | undefined {
  if (v === undefined) return undefined;
  const why = notJson(v, what);
  if (why) throw new BasinError("BASIN_PLAN", `${why}; it must be a JSON value`, loc);
  return { value: v as JsonValue };
}

function keySpec<T>(
  key: KeyArg<T> | undefined,
  what: string,
  loc: SourceLocation | undefined,
  options: UserFnOptions,
): KeySpec {
  if (key === undefined) return { identity: true };
  if (typeof key === "string" || (typeof key === "number" && Number.isInteger(key) && key >= 0)) return { field: key };
  if (typeof key === "function") return { fn: captureFn(key, `the key function of ${what}`, loc, options) };
  throw new BasinError(
    "BASIN_PLAN",
    `${what}: the key must be a field name, an array index or a function, got ${JSON.stringify(key) ?? typeof key}`,
    loc,
  );
}

function reducerOf(f: unknown, what: string, loc: SourceLocation | undefined, options: UserFnOptions): Reducer {
  return { fn: captureFn(f, what, loc, options) };
}

/**
 * A lazy bag of JSON values in partitions. Functions given to its methods run on
 * worker threads: they travel as source text, so they may use only their arguments,
 * globals like Math and JSON, and values passed with `{ with: { name: value } }`.
 *
 * @example
 * import { bag } from "basin";
 * const words = bag.readText("books/*.txt").flatMap((line) => line.split(/\s+/)).filter((w) => w !== "");
 * const top = await words.frequencies().topK(10, 1).compute();
 */
export class Bag<T = unknown> {
  constructor(readonly node: BagNode) {}

  private fn(f: unknown, what: string, loc: SourceLocation | undefined, options: UserFnOptions | undefined): FnSpec {
    return captureFn(f, `the function passed to ${what}`, loc, options);
  }

  /**
   * Applies `fn` to every item.
   *
   * @example
   * bag.fromItems([1, 2, 3]).map((x) => x * k, { with: { k: 10 } }) // 10, 20, 30
   */
  map<U>(fn: (item: T) => U, options?: UserFnOptions): Bag<U> {
    const loc = callerLocation();
    return new Bag<U>({ kind: "map", input: this.node, fn: this.fn(fn, "map", loc, options), loc });
  }

  /**
   * Keeps the items for which `fn` returns a truthy value.
   *
   * @example
   * people.filter((p) => p.age >= 18)
   */
  filter(fn: (item: T) => unknown, options?: UserFnOptions): Bag<T> {
    const loc = callerLocation();
    return new Bag<T>({ kind: "filter", input: this.node, fn: this.fn(fn, "filter", loc, options), loc });
  }

  /**
   * Applies `fn` (which returns an array) to every item and concatenates the arrays.
   *
   * @example
   * lines.flatMap((line) => line.split(" "))
   */
  flatMap<U>(fn: (item: T) => U[], options?: UserFnOptions): Bag<U> {
    const loc = callerLocation();
    return new Bag<U>({ kind: "flatMap", input: this.node, fn: this.fn(fn, "flatMap", loc, options), loc });
  }

  /**
   * The field `key` (or array element) of every item.
   *
   * @example
   * people.pluck("name")
   */
  pluck<K extends keyof T & (string | number)>(key: K, options: PluckOptions = {}): Bag<T[K]> {
    const loc = callerLocation();
    if (typeof key !== "string" && !(typeof key === "number" && Number.isInteger(key) && key >= 0))
      throw new BasinError(
        "BASIN_PLAN",
        `pluck() needs a field name or an array index, got ${JSON.stringify(key) ?? typeof key}`,
        loc,
      );
    const node: BagNode = { kind: "pluck", input: this.node, key, loc };
    if ("default" in options) node.default = maybe(options.default, "pluck's default", loc);
    return new Bag<T[K]>(node);
  }

  /**
   * Folds the items of each key with `binop`: [key, result] pairs (in no set order).
   * Each partition folds its own items first; `combine` then merges those partial
   * results (by default with `binop`, which must then accept a partial result as
   * its second argument).
   *
   * @example
   * // total amount per customer
   * orders.foldBy("customer", (acc, o) => acc + o.amount, { initial: 0, combine: (a, b) => a + b })
   */
  foldBy<A>(key: KeyArg<T>, binop: (acc: A, item: T) => A, options: FoldByOptions<A> = {}): Bag<[unknown, A]> {
    const loc = callerLocation();
    const binopR = reducerOf(binop, "the binop of foldBy", loc, options);
    const node: BagNode = {
      kind: "foldBy",
      input: this.node,
      key: keySpec(key, "foldBy", loc, options),
      binop: binopR,
      combine:
        options.combine === undefined
          ? binopR
          : reducerOf(options.combine, "the combine function of foldBy", loc, options),
      loc,
    };
    if ("initial" in options) node.initial = maybe(options.initial, "foldBy's initial", loc);
    if ("combineInitial" in options)
      node.combineInitial = maybe(options.combineInitial, "foldBy's combineInitial", loc);
    return new Bag<[unknown, A]>(node);
  }

  /**
   * Groups the items by key: [key, items] pairs (groups in no set order; a group's
   * items in bag order).
   *
   * @example
   * people.groupBy("city")
   */
  groupBy(key: KeyArg<T>, options: UserFnOptions = {}): Bag<[unknown, T[]]> {
    const loc = callerLocation();
    return new Bag<[unknown, T[]]>({
      kind: "groupBy",
      input: this.node,
      key: keySpec(key, "groupBy", loc, options),
      loc,
    });
  }

  /**
   * [item, count] for every distinct item (equal when their JSON text is).
   *
   * @example
   * words.frequencies() // [["the", 120], ["a", 97], ...]
   */
  frequencies(): Bag<[T, number]> {
    const loc = callerLocation();
    return new Bag<[T, number]>({
      kind: "foldBy",
      input: this.node,
      key: { identity: true },
      binop: { builtin: "count" },
      initial: { value: 0 },
      combine: { builtin: "add" },
      loc,
    });
  }

  /**
   * The `k` largest items (by `key` when given), largest first; ties in bag order.
   *
   * @example
   * words.frequencies().topK(10, 1) // the 10 most frequent words
   */
  topK(k: number, key?: KeyArg<T>, options: TopKOptions = {}): Bag<T> {
    const loc = callerLocation();
    if (!Number.isInteger(k) || k < 0)
      throw new BasinError("BASIN_PLAN", `topK() needs a non-negative integer k, got ${k}`, loc);
    return new Bag<T>({
      kind: "topK",
      input: this.node,
      k,
      key: keySpec(key, "topK", loc, options),
      descending: options.descending ?? true,
      loc,
    });
  }

  /**
   * The distinct items (by `key` when given: the first item of each key), in no set order.
   *
   * @example
   * words.distinct()
   */
  distinct(key?: KeyArg<T>, options: UserFnOptions = {}): Bag<T> {
    const loc = callerLocation();
    return new Bag<T>({ kind: "distinct", input: this.node, key: keySpec(key, "distinct", loc, options), loc });
  }

  /**
   * A lazy DataFrame of the items (objects): one column per entry of `types`, taken
   * from the field of that name (missing or null fields are null; dates and
   * timestamps from ISO strings).
   *
   * @example
   * people.toDataFrame({ name: "string", age: "int64" }).groupBy("age").agg(count())
   */
  toDataFrame(types: Record<string, DType>): DataFrame {
    const loc = callerLocation();
    const entries = Object.entries(types ?? {});
    if (entries.length === 0)
      throw new BasinError(
        "BASIN_PLAN",
        'toDataFrame() needs the columns and their types, e.g. { name: "string", age: "int64" }',
        loc,
      );
    const schema: Field[] = entries.map(([name, t]) => {
      if (!isDType(t))
        throw new BasinError("BASIN_PLAN", `toDataFrame: type "${String(t)}" for "${name}" is not a Basin type`, loc);
      return { name, type: t };
    });
    return new DataFrame({ kind: "fromBag", bag: this.node, schema, loc });
  }

  /**
   * The bag as a frame plan with one string column "item" (each item's JSON text):
   * how the workbench and the engine server show a bag result.
   *
   * @example
   * const plan = bag.fromItems([{ a: 1 }]).toPlan();
   */
  toPlan(): Plan {
    return {
      version: PLAN_VERSION,
      root: { kind: "fromBag", bag: this.node, schema: BAG_SCHEMA, raw: true, loc: this.node.loc },
    };
  }

  /**
   * Runs the bag on the cluster; resolves to its items (in partition order where the
   * operations keep order).
   *
   * @example
   * const items = await bag.fromItems([1, 2, 3], { partitions: 2 }).map((x) => x + 1).compute();
   */
  async compute(options: Pick<ComputeOptions, "cluster" | "onProgress" | "signal"> = {}): Promise<T[]> {
    return (await runPlan({ kind: "bag", node: this.node }, options)) as T[];
  }
}
