/**
 * Generator for db-benchmark groupby data `G1_<N>_<K>_0_0` (no NAs, unsorted).
 *
 * Columns, exactly as db-benchmark's `groupby-datagen.R`:
 * id1, id2 `id%03d` (K levels); id3 `id%010d` (N/K levels); id4, id5 int 1..K;
 * id6 int 1..N/K; v1 int 1..5; v2 int 1..15; v3 float uniform [0, 100) rounded to
 * 6 decimals. Values come from a seeded PRNG so the file is identical across runs.
 */
import { join } from "node:path";
import { checkCount, isComplete, prettyCount, writeCsvChunks, type Dataset, type Schema } from "./data_file.js";
import { parallelRows } from "./generate_parallel.js";

/** Options for the generators ({@link generateGroupby}, `generateJoin`). */
export interface GenerateOptions {
  /** Number of rows (default 1e7). */
  rows?: number;
  /** Cardinality parameter K (default 100; groupby only). */
  k?: number;
  /** Output directory (default `.bench-data`). */
  dir?: string;
  /** PRNG seed (default 108, db-benchmark's seed). */
  seed?: number;
  /** Called with progress messages. */
  log?: (msg: string) => void;
}

/** The groupby CSV's columns, in file order, with their types. */
export const GROUPBY_SCHEMA: Schema = {
  id1: "string",
  id2: "string",
  id3: "string",
  id4: "int64",
  id5: "int64",
  id6: "int64",
  v1: "int64",
  v2: "int64",
  v3: "float64",
};

/** Dataset name for N rows and K, e.g. `G1_1e7_1e2_0_0`. */
export function groupbyName(rows: number, k: number): string {
  return `G1_${prettyCount(rows)}_${prettyCount(k)}_0_0`;
}

/**
 * Rows [start, end) of the groupby CSV. Each row draws nine numbers from one mulberry32
 * stream (seededRandom's): v3 first, then id1 … v2, so row r starts at state
 * seed + 9r·0x6d2b79f5 (mod 2^32) and any row range can be made on its own. Runs in
 * generator threads from its source text: it uses nothing but its arguments.
 */
export function groupbyChunk(p: { seed: number; k: number; nk: number }, start: number, end: number): string {
  const step = 0x6d2b79f5;
  let a = (p.seed + Math.imul((start * 9) % 4294967296, step)) >>> 0;
  const rnd = (): number => {
    a = (a + step) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number): number => 1 + Math.floor(rnd() * n);
  const pad = (n: number, width: number): string => String(n).padStart(width, "0");
  const lvK = Array.from({ length: p.k }, (_, i) => `id${pad(i + 1, 3)}`);
  const lines: string[] = [];
  for (let r = start; r < end; r++) {
    const v3 = Math.round(rnd() * 100 * 1e6) / 1e6;
    const id1 = lvK[int(p.k) - 1],
      id2 = lvK[int(p.k) - 1],
      id3 = pad(int(p.nk), 10);
    const id4 = int(p.k),
      id5 = int(p.k),
      id6 = int(p.nk),
      v1 = int(5),
      v2 = int(15);
    lines.push(`${id1},${id2},id${id3},${id4},${id5},${id6},${v1},${v2},${v3}\n`);
  }
  return lines.join("");
}

/**
 * Generates (or reuses) the groupby CSV, table `x`. A `<name>.csv.done` marker
 * holding the byte size is written after a complete write; a file is reused only
 * when the marker matches its size.
 */
export async function generateGroupby(opts: GenerateOptions = {}): Promise<Dataset> {
  const rows = opts.rows ?? 1e7;
  const k = opts.k ?? 100;
  const log = opts.log ?? (() => {});
  checkCount("rows", rows);
  checkCount("k", k);
  const name = groupbyName(rows, k);
  const path = join(opts.dir ?? ".bench-data", `${name}.csv`);
  const tables = [{ name: "x", path, schema: GROUPBY_SCHEMA }];
  if (isComplete(path)) return { name, tables, reused: true, seconds: 0 };
  log(`generating ${name} (${rows} rows) -> ${path}`);
  const t0 = performance.now();
  const params = { seed: opts.seed ?? 108, k, nk: Math.max(1, Math.round(rows / k)) };
  await writeCsvChunks(path, Object.keys(GROUPBY_SCHEMA), parallelRows(rows, groupbyChunk, params));
  const seconds = (performance.now() - t0) / 1000;
  log(`generated ${name} in ${seconds.toFixed(1)} s`);
  return { name, tables, reused: false, seconds };
}
