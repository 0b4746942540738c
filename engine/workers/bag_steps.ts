// Bag steps on a worker thread. A bag partition lives in the native store as a table
// with one string column of JSON text, one row per item (and a key column before it
// when keyed for a shuffle), so the scheduler's handles, reference counts, release
// and recompute-on-worker-loss work for bags unchanged, and the store's hash
// partitioning does their shuffles. Inside a task the items are plain JS values: a
// chain of map/filter/... decodes once and encodes once.
import {
  BAG_ITEM_COLUMN,
  BAG_KEY_COLUMN,
  type BagOp,
  type FnSpec,
  type JsonValue,
  type KeySpec,
  type Maybe,
  type Reducer,
} from "../common/bag.js";
import { BasinError, type SourceLocation } from "../common/errors.js";
import type { Field } from "../common/types.js";
import { columnsTable, convert, lineAt, withFile } from "../io/ndjson.js";
import { readAt } from "../io/read_at.js";
import { decodeStrings, native, type Handle, type JsStrings } from "../native/addon.js";
import { callUser, compileFn } from "./user_fn.js";
import { own } from "../common/own.js";

const utf8 = new TextDecoder("utf-8", { fatal: false });

/** A short rendering of an item for error messages. */
function show(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 60 ? `${s.slice(0, 60)}…` : s;
}

/**
 * The lines of bytes [start, end) of a text file (without line breaks), or for
 * format "json" the JSON value of each non-blank line; a bad line is a BASIN_PARSE
 * error naming file:line.
 */
export function readBagLines(path: string, start: number, end: number, format: "text" | "json"): JsonValue[] {
  return withFile(path, (fd) => {
    const text = utf8.decode(readAt(fd, start, end - start));
    const lines = text.split("\n");
    if (lines[lines.length - 1] === "") lines.pop(); // the break ending the last line starts no new line
    const out: JsonValue[] = [];
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i].endsWith("\r") ? lines[i].slice(0, -1) : lines[i];
      if (format === "text") {
        out.push(line);
        continue;
      }
      if (line.trim() === "") continue;
      try {
        out.push(JSON.parse(line) as JsonValue);
      } catch (e) {
        throw new BasinError(
          "BASIN_PARSE",
          `${path}:${lineAt(fd, start) + i}: not valid JSON (${(e as Error).message}): ${line.length > 60 ? `${line.slice(0, 60)}…` : line}; every line must be one JSON value`,
        );
      }
    }
    return out;
  });
}

/** The items of a bag partition's table (its last column). */
export function decodeItems(h: Handle): JsonValue[] {
  const t = native().tableToJs(h);
  const col = t.columns[t.columns.length - 1];
  const texts = Array.isArray(col.values) ? col.values : decodeStrings(col.values as JsStrings, col.validity);
  return texts.map((s) => JSON.parse(s ?? "null") as JsonValue);
}

/** A bag partition's table; `keyed`: items are [key, value] pairs, and the key's JSON goes in a column first for the shuffle. */
export function encodeItems(items: JsonValue[], keyed: boolean): Handle {
  const texts = items.map((x) => JSON.stringify(x));
  const item = { type: "string" as const, values: texts, validity: null };
  if (!keyed) return native().tableFromJs({ rows: items.length, names: [BAG_ITEM_COLUMN], columns: [item] });
  const keys = items.map((x) => JSON.stringify((x as JsonValue[])[0]));
  return native().tableFromJs({
    rows: items.length,
    names: [BAG_KEY_COLUMN, BAG_ITEM_COLUMN],
    columns: [{ type: "string", values: keys, validity: null }, item],
  });
}

/** A user function's result as an item: JSON has no `undefined` (or functions), so those are errors, not silent nulls. */
function asItem(v: unknown, spec: FnSpec, what: string, input: unknown, loc: SourceLocation | undefined): JsonValue {
  if (v === undefined || typeof v === "function" || typeof v === "symbol" || typeof v === "bigint")
    throw new BasinError(
      "BASIN_FUNCTION",
      `${what} function ${JSON.stringify(spec.name)} returned ${typeof v} for item ${show(input)}; bag items must be JSON values (return null for "nothing")`,
      loc,
    );
  return v as JsonValue;
}

function keyFn(spec: KeySpec, what: string, loc: SourceLocation | undefined): (x: JsonValue) => JsonValue {
  if ("identity" in spec) return (x) => x;
  if ("field" in spec) {
    const f = spec.field;
    return (x) => {
      if (typeof x !== "object" || x === null || !(f in x))
        throw new BasinError(
          "BASIN_FUNCTION",
          `${what}: item ${show(x)} has no ${typeof f === "number" ? `index ${f}` : `field ${JSON.stringify(f)}`}`,
          loc,
        );
      return (x as Record<string | number, JsonValue>)[f];
    };
  }
  const fn = spec.fn;
  const f = compileFn(fn);
  return (x) => asItem(callUser(f, fn, `${what} key`, loc, [x]), fn, `${what} key`, x, loc);
}

function reducer(
  r: Reducer,
  what: string,
  loc: SourceLocation | undefined,
): (acc: JsonValue, x: JsonValue) => JsonValue {
  if ("builtin" in r)
    return r.builtin === "count" ? (acc) => (acc as number) + 1 : (a, b) => (a as number) + (b as number);
  const f = compileFn(r.fn);
  return (acc, x) => asItem(callUser(f, r.fn, what, loc, [acc, x]), r.fn, what, x, loc);
}

/** Folds values into [key, acc] pairs per key (first appearance order); without `initial` a key's first value starts it. */
function foldPairs(
  pairs: Iterable<[JsonValue, JsonValue]>,
  f: (acc: JsonValue, x: JsonValue) => JsonValue,
  initial: Maybe | undefined,
): JsonValue[] {
  const acc = new Map<string, [JsonValue, JsonValue]>();
  for (const [k, v] of pairs) {
    const ks = JSON.stringify(k);
    const cur = acc.get(ks);
    if (cur) cur[1] = f(cur[1], v);
    else acc.set(ks, [k, initial ? f(structuredClone(initial.value), v) : v]);
  }
  return [...acc.values()];
}

/** Orders JSON values: numbers, then strings, then the rest by their JSON text. */
function compare(a: JsonValue, b: JsonValue): number {
  const rank = (v: JsonValue) => (typeof v === "number" ? 0 : typeof v === "string" ? 1 : 2);
  const ra = rank(a),
    rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 0) return (a as number) - (b as number);
  const sa = ra === 1 ? (a as string) : JSON.stringify(a),
    sb = ra === 1 ? (b as string) : JSON.stringify(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

function runOp(items: JsonValue[], op: BagOp): JsonValue[] {
  const loc = op.loc;
  switch (op.op) {
    case "map": {
      const f = compileFn(op.fn);
      return items.map((x) => asItem(callUser(f, op.fn, "map", loc, [x]), op.fn, "map", x, loc));
    }
    case "filter": {
      const f = compileFn(op.fn);
      return items.filter((x) => callUser(f, op.fn, "filter", loc, [x]));
    }
    case "flatMap": {
      const f = compileFn(op.fn);
      const out: JsonValue[] = [];
      for (const x of items) {
        const r = callUser(f, op.fn, "flatMap", loc, [x]);
        if (!Array.isArray(r))
          throw new BasinError(
            "BASIN_FUNCTION",
            `flatMap function ${JSON.stringify(op.fn.name)} returned ${show(r)} for item ${show(x)}; it must return an array`,
            loc,
          );
        for (const y of r) out.push(asItem(y, op.fn, "flatMap", x, loc));
      }
      return out;
    }
    case "pluck": {
      const k = op.key;
      return items.map((x) => {
        if (typeof x === "object" && x !== null && k in x) return (x as Record<string | number, JsonValue>)[k];
        if (op.default) return op.default.value;
        throw new BasinError(
          "BASIN_FUNCTION",
          `pluck: item ${show(x)} has no ${typeof k === "number" ? `index ${k}` : `field ${JSON.stringify(k)}`}; give a default: pluck(${JSON.stringify(k)}, { default: null })`,
          loc,
        );
      });
    }
    case "foldPartial": {
      const key = keyFn(op.key, "foldBy", loc);
      return foldPairs(
        items.map((x): [JsonValue, JsonValue] => [key(x), x]),
        reducer(op.binop, "foldBy binop", loc),
        op.initial,
      );
    }
    case "foldCombine":
      return foldPairs(items as [JsonValue, JsonValue][], reducer(op.combine, "foldBy combine", loc), op.initial);
    case "pairs": {
      const key = keyFn(op.key, "groupBy or distinct", loc);
      return items.map((x) => [key(x), x]);
    }
    case "groupPairs": {
      const groups = new Map<string, [JsonValue, JsonValue[]]>();
      for (const [k, v] of items as [JsonValue, JsonValue][]) {
        const ks = JSON.stringify(k);
        const g = groups.get(ks);
        if (g) g[1].push(v);
        else groups.set(ks, [k, [v]]);
      }
      return [...groups.values()];
    }
    case "firstPerKey": {
      const seen = new Map<string, JsonValue>();
      for (const [k, v] of items as [JsonValue, JsonValue][]) {
        const ks = JSON.stringify(k);
        if (!seen.has(ks)) seen.set(ks, v);
      }
      return [...seen.values()];
    }
    case "topK": {
      const key = keyFn(op.key, "topK", loc);
      const keyed = items.map((x, i) => ({ x, k: key(x), i }));
      const sign = op.descending ? -1 : 1;
      keyed.sort((a, b) => sign * compare(a.k, b.k) || a.i - b.i);
      return keyed.slice(0, op.k).map((e) => e.x);
    }
  }
}

/**
 * Runs bag ops over a partition's items.
 *
 * @example
 * runBagOps([1, 2, 3], [{ op: "filter", fn }]) // the items fn keeps
 */
export function runBagOps(items: JsonValue[], ops: BagOp[]): JsonValue[] {
  let out = items;
  for (const op of ops) out = runOp(out, op);
  return out;
}

/** A bag of objects as a table: field `name` of each item converted to the column's type; missing or null fields are null. */
export function itemsToTable(items: JsonValue[], schema: Field[], loc: SourceLocation | undefined): Handle {
  const values: unknown[][] = schema.map(() => new Array<unknown>(items.length));
  items.forEach((x, row) => {
    if (typeof x !== "object" || x === null || Array.isArray(x))
      throw new BasinError(
        "BASIN_CAST",
        `toDataFrame: item ${show(x)} is not an object; map the items to objects like { ${schema[0].name}: … } first`,
        loc,
      );
    schema.forEach((f, c) => {
      const v = own(x as Record<string, JsonValue>, f.name);
      if (v === null || v === undefined) return void (values[c][row] = null);
      const cell = convert(v, f.type);
      if (cell === undefined || (f.type === "string" && typeof v !== "string"))
        throw new BasinError(
          "BASIN_CAST",
          `toDataFrame: field "${f.name}" of item ${show(x)} is ${show(v)}, not ${f.type}; fix the items or the types`,
          loc,
        );
      values[c][row] = cell;
    });
  });
  return columnsTable(schema, values, items.length);
}
