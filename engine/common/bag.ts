// The serializable form of bags (partitioned collections of JSON values) and of the
// user functions they run. Plain JSON: functions travel as source text.
import type { SourceLocation } from "./errors.js";
import type { Field } from "./types.js";

/** An item of a bag: anything JSON can hold. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * A user function as it travels to worker threads: its source text (an expression
 * that evaluates to the function) and the outer values it may use, by name.
 */
export interface FnSpec {
  /** A JavaScript expression evaluating to the function. */
  source: string;
  /** The function's name for messages ("parse", or "anonymous"). */
  name: string;
  /** Values passed with `{ with: { name: value } }`: JSON values, or functions (captured the same way). */
  captured: Record<string, { value: JsonValue } | { fn: FnSpec }>;
}

/** How an item's key is found: a field (or index) of it, a function of it, or the item itself. */
export type KeySpec = { field: string | number } | { fn: FnSpec } | { identity: true };

/** A binary reducer: a user function `(acc, x) => acc`, or a built-in one. */
export type Reducer = { fn: FnSpec } | { builtin: "count" | "add" };

/** A value that may be absent (JSON has no `undefined`). */
export interface Maybe {
  value: JsonValue;
}

/** A node of a bag's plan; each knows where in the pipeline it was written. */
export type BagNode =
  | { kind: "items"; partitions: JsonValue[][]; loc?: SourceLocation }
  /** Lines of text files (format "text") or newline-delimited JSON values ("json"). */
  | { kind: "files"; files: string[]; format: "text" | "json"; blocksize: number; loc?: SourceLocation }
  | { kind: "map" | "filter" | "flatMap"; input: BagNode; fn: FnSpec; loc?: SourceLocation }
  | { kind: "pluck"; input: BagNode; key: string | number; default?: Maybe; loc?: SourceLocation }
  /** Per key, a fold of the items with `binop` from `initial`, then of the partial results with `combine`. */
  | {
      kind: "foldBy";
      input: BagNode;
      key: KeySpec;
      binop: Reducer;
      initial?: Maybe;
      combine: Reducer;
      combineInitial?: Maybe;
      loc?: SourceLocation;
    }
  /** [key, items of that key] pairs. */
  | { kind: "groupBy"; input: BagNode; key: KeySpec; loc?: SourceLocation }
  /** The first item of each distinct key (the item itself by default). */
  | { kind: "distinct"; input: BagNode; key: KeySpec; loc?: SourceLocation }
  /** The k items with the largest (or smallest) key, best first. */
  | { kind: "topK"; input: BagNode; k: number; key: KeySpec; descending: boolean; loc?: SourceLocation };

/**
 * What a bag step does to a partition's items in a worker. A step runs its ops in
 * order on the items in JS memory; items cross task boundaries as JSON text.
 */
export type BagOp =
  | { op: "map" | "filter" | "flatMap"; fn: FnSpec; loc?: SourceLocation }
  | { op: "pluck"; key: string | number; default?: Maybe; loc?: SourceLocation }
  /** Items → [key, acc] pairs, one per key, in order of first appearance. */
  | { op: "foldPartial"; key: KeySpec; binop: Reducer; initial?: Maybe; loc?: SourceLocation }
  /** [key, acc] pairs → [key, acc] pairs, one per key, folded with `combine`. */
  | { op: "foldCombine"; combine: Reducer; initial?: Maybe; loc?: SourceLocation }
  /** Items → [key, item] pairs. */
  | { op: "pairs"; key: KeySpec; loc?: SourceLocation }
  /** [key, item] pairs → [key, items] pairs, one per key. */
  | { op: "groupPairs"; loc?: SourceLocation }
  /** [key, item] pairs → the first item of each key. */
  | { op: "firstPerKey"; loc?: SourceLocation }
  | { op: "topK"; k: number; key: KeySpec; descending: boolean; loc?: SourceLocation };

/** The columns of a bag partition in the store: `item` (JSON text), after `key` when keyed for a shuffle. */
export const BAG_ITEM_COLUMN = "item";
export const BAG_KEY_COLUMN = "key";

/** The schema a bag partition's table has (items only). */
export const BAG_SCHEMA: Field[] = [{ name: BAG_ITEM_COLUMN, type: "string" }];
