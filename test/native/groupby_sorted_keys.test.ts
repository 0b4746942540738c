// A single integer key already in order (lineitem read by l_orderkey, and the parts a
// shuffle makes of it) is grouped by its runs, with no hash table
// (native/src/ops/groupby.cc GroupSortedRuns). Its groups, their order (first
// appearance) and every aggregate must be those a hash grouping gives: checked here
// against a JS oracle over sorted keys, keys sorted but for one row (the hash path),
// extremes, dates before 1970, booleans, one row and none.
import { afterEach, expect, it } from "vitest";
import { native, type Handle, type JsColumn } from "../../engine/native/addon.js";
import type { NativeAgg } from "../../engine/graph/kernel_args.js";

const handles: Handle[] = [];
const track = (h: Handle) => (handles.push(h), h);
afterEach(() => {
  for (const h of handles.splice(0)) native().release(h);
});

type Key = bigint | number | boolean;

/** Groups in order of first appearance, with count, integer sum, first and last value, distinct values. */
function oracle(keys: Key[], values: bigint[]) {
  const groups = new Map<Key, { n: number; sum: bigint; first: bigint; last: bigint; distinct: Set<bigint> }>();
  keys.forEach((k, i) => {
    const g = groups.get(k);
    if (!g) groups.set(k, { n: 1, sum: values[i], first: values[i], last: values[i], distinct: new Set([values[i]]) });
    else {
      g.n++;
      g.sum += values[i];
      g.last = values[i];
      g.distinct.add(values[i]);
    }
  });
  return [...groups].map(([k, g]) => [k, BigInt(g.n), g.sum, g.first, g.last, BigInt(g.distinct.size)]);
}

const AGGS: NativeAgg[] = [
  { op: "count", column: -1, name: "n" },
  { op: "sum", column: 1, name: "sum" },
  { op: "first", column: 1, name: "first" },
  { op: "last", column: 1, name: "last" },
  { op: "nunique", column: 1, name: "distinct" },
];

function keyColumn(type: "int64" | "date" | "bool", keys: Key[]): JsColumn {
  if (type === "int64") return { type, values: BigInt64Array.from(keys as bigint[]), validity: null };
  if (type === "date") return { type, values: Int32Array.from(keys as number[]), validity: null };
  return { type, values: Uint8Array.from(keys as boolean[], (b) => (b ? 1 : 0)), validity: null };
}

function grouped(type: "int64" | "date" | "bool", keys: Key[], values: bigint[]): unknown[][] {
  const h = track(
    native().tableFromJs({
      rows: keys.length,
      names: ["k", "v"],
      columns: [keyColumn(type, keys), { type: "int64", values: BigInt64Array.from(values), validity: null }],
    }),
  );
  const t = native().tableToJs(track(native().groupByAgg(h, [0], AGGS, "full")));
  const cell = (c: JsColumn, i: number): unknown =>
    c.type === "bool" ? (c.values as Uint8Array)[i] === 1 : (c.values as ArrayLike<unknown>)[i];
  return Array.from({ length: t.rows }, (_, i) => t.columns.map((c) => cell(c, i)));
}

/** Sorted keys with runs of 1 to 7 rows, starting at `start`, stepping by up to `step`. */
function sortedRuns(rows: number, start: bigint, step: bigint): bigint[] {
  const out: bigint[] = [];
  let k = start;
  for (let i = 0; out.length < rows; i++) {
    const run = 1 + ((i * 5) % 7);
    for (let j = 0; j < run && out.length < rows; j++) out.push(k);
    k += 1n + (BigInt(i * 7919) % step);
  }
  return out;
}

const valuesFor = (n: number) => Array.from({ length: n }, (_, i) => BigInt(((i * 104_729) % 1009) - 500));

it("groups int64 keys in order by their runs, as a hash grouping does", () => {
  for (const rows of [0, 1, 2, 1000, 200_000]) {
    const keys = sortedRuns(rows, -(2n ** 40n), 1000n);
    const values = valuesFor(rows);
    expect(grouped("int64", keys, values), `${rows} rows`).toEqual(oracle(keys, values));
  }
});

it("groups keys that are in order but for their last row by hashing, with the same answers", () => {
  const keys = sortedRuns(100_000, 0n, 50n);
  keys.push(keys[0]); // one step back: the run path gives up, the hash path groups it with the first run
  const values = valuesFor(keys.length);
  const got = grouped("int64", keys, values);
  expect(got).toEqual(oracle(keys, values));
  expect(got[0][1], "the last row is counted with the first run (of one row)").toBe(2n);
});

it("groups sorted keys at the ends of int64, all-equal keys, dates before 1970 and booleans", () => {
  const extremes = [-(2n ** 63n), -(2n ** 63n), -1n, 0n, 0n, 0n, 1n, 2n ** 63n - 1n, 2n ** 63n - 1n];
  expect(grouped("int64", extremes, valuesFor(9))).toEqual(oracle(extremes, valuesFor(9)));
  const same = Array.from({ length: 5000 }, () => 42n);
  expect(grouped("int64", same, valuesFor(5000))).toEqual(oracle(same, valuesFor(5000)));
  const days = sortedRuns(3000, -30_000n, 20n).map(Number);
  expect(grouped("date", days, valuesFor(3000))).toEqual(oracle(days, valuesFor(3000)));
  const flags = [false, false, false, true, true];
  expect(grouped("bool", flags, valuesFor(5))).toEqual(oracle(flags, valuesFor(5)));
});
