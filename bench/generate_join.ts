/**
 * Generator for db-benchmark join data `J1_<N>_NA_0_0` (no NAs, unsorted), after
 * db-benchmark's `join-datagen.R`: four tables sharing three key spaces.
 *
 * For each key column idK (id1, id2, id3 with n = N/1e6, N/1e3, N distinct keys on
 * x's side) a random permutation of 1..1.1n is split into common keys (0.9n),
 * left-only (0.1n) and right-only (0.1n). x draws idK from common ∪ left-only, every
 * key at least once, the rest with replacement; the right tables draw from common ∪
 * right-only the same way. So ~90% of x's distinct keys match and each right table's
 * own key column (small.id1, medium.id2, big.id3) is unique. id4..id6 are `id%d` of
 * id1..id3; v1, v2 are uniform [0, 100) rounded to 6 decimals.
 *
 * With N = 1e6, small has a single row and every x.id1 matches it (db-benchmark
 * itself starts at N = 1e7, where small has 10 rows and 9 of x's 10 keys match).
 */
import { join } from "node:path";
import { seededRandom } from "../engine/common/random.js";
import {
  checkCount,
  isComplete,
  prettyCount,
  uniform100,
  writeCsv,
  type Dataset,
  type Schema,
  type TableFile,
} from "./data_file.js";
import type { GenerateOptions } from "./generate.js";

/** The join tables' columns, in file order, with their types. */
export const JOIN_SCHEMAS = {
  x: { id1: "int64", id2: "int64", id3: "int64", id4: "string", id5: "string", id6: "string", v1: "float64" },
  small: { id1: "int64", id4: "string", v2: "float64" },
  medium: { id1: "int64", id2: "int64", id4: "string", id5: "string", v2: "float64" },
  big: { id1: "int64", id2: "int64", id3: "int64", id4: "string", id5: "string", id6: "string", v2: "float64" },
} as const satisfies Record<string, Schema>;

/** A join table name. */
export type JoinTable = keyof typeof JOIN_SCHEMAS;

/** Rows of each table for x with `rows` rows (small: N/1e6, medium: N/1e3, big: N; at least 1). */
export function joinTableRows(rows: number): Record<JoinTable, number> {
  const n = (d: number): number => Math.max(1, Math.round(rows / d));
  return { x: rows, small: n(1e6), medium: n(1e3), big: rows };
}

/** File names as db-benchmark's: `J1_1e7_NA_0_0` (x), `J1_1e7_1e1_0_0` (small), ... */
export function joinFileNames(rows: number): Record<JoinTable, string> {
  const r = joinTableRows(rows);
  const name = (n: string): string => `J1_${prettyCount(rows)}_${n}_0_0`;
  return {
    x: name("NA"),
    small: name(prettyCount(r.small)),
    medium: name(prettyCount(r.medium)),
    big: name(prettyCount(r.big)),
  };
}

/** Key values of one key space, split like `split_xlr`: common, left-only, right-only. */
interface KeySplit {
  left: Int32Array;
  right: Int32Array;
}

function shuffle(a: Int32Array, rnd: () => number): Int32Array {
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    const t = a[i]!;
    a[i] = a[j]!;
    a[j] = t;
  }
  return a;
}

/** n keys on each side, of which round(0.9n) are shared, from a permutation of 1..n+(n-round(0.9n)). */
function splitKeys(n: number, rnd: () => number): KeySplit {
  const common = Math.min(n, Math.max(1, Math.round(n * 0.9)));
  const only = n - common;
  const perm = shuffle(
    Int32Array.from({ length: n + only }, (_, i) => i + 1),
    rnd,
  );
  const left = perm.slice(0, n);
  const right = new Int32Array(n);
  right.set(perm.subarray(0, common));
  right.set(perm.subarray(n), common);
  return { left, right };
}

/** `sample_all`: every key once, the rest drawn with replacement, shuffled. */
function sampleAll(keys: Int32Array, size: number, rnd: () => number): Int32Array {
  if (keys.length > size) throw new Error(`sampleAll: ${keys.length} keys do not fit in ${size} rows`);
  const out = new Int32Array(size);
  out.set(keys);
  for (let i = keys.length; i < size; i++) out[i] = keys[Math.floor(rnd() * keys.length)]!;
  return shuffle(out, rnd);
}

/** One CSV line per row from id columns (id1..id3 as given, id4..id6 their `id%d`) and a value. */
function lineOf(ids: readonly Int32Array[], rnd: () => number): (i: number) => string {
  return (i) => {
    let s = "";
    for (const c of ids) s += c[i] + ",";
    for (const c of ids) s += "id" + c[i] + ",";
    return s + uniform100(rnd) + "\n";
  };
}

/**
 * Generates (or reuses) the four join CSVs. They share their keys, so all four are
 * regenerated unless every one is complete (see `isComplete`).
 */
export async function generateJoin(opts: GenerateOptions = {}): Promise<Dataset> {
  const rows = opts.rows ?? 1e7;
  const log = opts.log ?? (() => {});
  checkCount("rows", rows);
  const dir = opts.dir ?? ".bench-data";
  const names = joinFileNames(rows);
  const counts = joinTableRows(rows);
  const order: JoinTable[] = ["x", "small", "medium", "big"];
  const tables: TableFile[] = order.map((t) => ({
    name: t,
    path: join(dir, `${names[t]}.csv`),
    schema: JOIN_SCHEMAS[t],
  }));
  const name = names.x;
  if (tables.every((t) => isComplete(t.path))) return { name, tables, reused: true, seconds: 0 };
  log(`generating ${name} (${rows} rows; small ${counts.small}, medium ${counts.medium}, big ${counts.big}) -> ${dir}`);
  const t0 = performance.now();
  const rnd = seededRandom(opts.seed ?? 108);
  const keys = [counts.small, counts.medium, counts.big].map((n) => splitKeys(n, rnd));
  // Which key spaces (id1, id2, id3) each table has, as in join-datagen.R.
  const width: Record<JoinTable, number> = { x: 3, small: 1, medium: 2, big: 3 };
  for (const [i, t] of order.entries()) {
    const ids = keys.slice(0, width[t]).map((k) => sampleAll(t === "x" ? k.left : k.right, counts[t], rnd));
    await writeCsv(tables[i]!.path, Object.keys(JOIN_SCHEMAS[t]), counts[t], lineOf(ids, rnd));
  }
  const seconds = (performance.now() - t0) / 1000;
  log(`generated ${name} in ${seconds.toFixed(1)} s`);
  return { name, tables, reused: false, seconds };
}
