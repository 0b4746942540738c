/**
 * Generator for db-benchmark groupby data `G1_<N>_<K>_0_0` (no NAs, unsorted).
 *
 * Columns, exactly as db-benchmark's `groupby-datagen.R`:
 * id1, id2 `id%03d` (K levels); id3 `id%010d` (N/K levels); id4, id5 int 1..K;
 * id6 int 1..N/K; v1 int 1..5; v2 int 1..15; v3 float uniform [0, 100) rounded to
 * 6 decimals. Values come from a seeded PRNG so the file is identical across runs.
 */
import { createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { once } from "node:events";
import { join } from "node:path";
import { seededRandom } from "../engine/common/random.js";

/** Options for {@link generateGroupby}. */
export interface GenerateOptions {
  /** Number of rows (default 1e7). */
  rows?: number;
  /** Cardinality parameter K (default 100). */
  k?: number;
  /** Output directory (default `.bench-data`). */
  dir?: string;
  /** PRNG seed (default 108, db-benchmark's seed). */
  seed?: number;
  /** Called with progress messages. */
  log?: (msg: string) => void;
}

/** A generated data file. */
export interface GeneratedData {
  /** Absolute or relative path of the CSV file. */
  path: string;
  /** Dataset name, e.g. `G1_1e7_1e2_0_0`. */
  name: string;
  rows: number;
  k: number;
  /** True when an existing file was reused. */
  reused: boolean;
  /** Seconds spent generating (0 when reused). */
  seconds: number;
}

/** The CSV column names, in file order. */
export const GROUPBY_COLUMNS = ["id1", "id2", "id3", "id4", "id5", "id6", "v1", "v2", "v3"] as const;

/** Formats a count the way db-benchmark names files: 1e7, 1e2, or the plain number. */
export function prettyCount(n: number): string {
  const e = Math.log10(n);
  return Number.isInteger(e) ? `1e${e}` : String(n);
}

/** Dataset name for N rows and K, e.g. `G1_1e7_1e2_0_0`. */
export function groupbyName(rows: number, k: number): string {
  return `G1_${prettyCount(rows)}_${prettyCount(k)}_0_0`;
}


function pad(n: number, width: number): string {
  const s = String(n);
  return s.length >= width ? s : "0".repeat(width - s.length) + s;
}

/**
 * Generates (or reuses) the groupby CSV. A `<name>.csv.done` marker holding the byte
 * size is written after a complete write; a file is reused only when the marker
 * matches its size.
 */
export async function generateGroupby(opts: GenerateOptions = {}): Promise<GeneratedData> {
  const rows = opts.rows ?? 1e7;
  const k = opts.k ?? 100;
  const dir = opts.dir ?? ".bench-data";
  const seed = opts.seed ?? 108;
  const log = opts.log ?? (() => {});
  if (!Number.isInteger(rows) || rows < 1) throw new Error(`rows must be a positive integer, got ${rows}`);
  if (!Number.isInteger(k) || k < 1) throw new Error(`k must be a positive integer, got ${k}`);
  const name = groupbyName(rows, k);
  const path = join(dir, `${name}.csv`);
  const marker = `${path}.done`;
  if (existsSync(path) && existsSync(marker)) {
    const expected = readFileSync(marker, "utf8").trim();
    if (expected === String(statSync(path).size)) {
      return { path, name, rows, k, reused: true, seconds: 0 };
    }
  }
  mkdirSync(dir, { recursive: true });
  log(`generating ${name} (${rows} rows) -> ${path}`);
  const t0 = performance.now();
  const rnd = seededRandom(seed);
  const nk = Math.max(1, Math.round(rows / k));
  const int = (n: number): number => 1 + Math.floor(rnd() * n);
  // Precompute the small string key levels.
  const lvK = Array.from({ length: k }, (_, i) => `id${pad(i + 1, 3)}`);
  const tmp = `${path}.tmp`;
  const out = createWriteStream(tmp, { highWaterMark: 1 << 22 });
  const chunkBytes = 1 << 20;
  let buf = GROUPBY_COLUMNS.join(",") + "\n";
  for (let i = 0; i < rows; i++) {
    const v3 = Math.round(rnd() * 100 * 1e6) / 1e6;
    buf +=
      lvK[int(k) - 1] + "," + lvK[int(k) - 1] + ",id" + pad(int(nk), 10) + "," +
      int(k) + "," + int(k) + "," + int(nk) + "," + int(5) + "," + int(15) + "," + v3 + "\n";
    if (buf.length >= chunkBytes) {
      if (!out.write(buf)) await once(out, "drain");
      buf = "";
    }
  }
  out.end(buf);
  await once(out, "finish");
  renameSync(tmp, path);
  writeFileSync(marker, String(statSync(path).size));
  const seconds = (performance.now() - t0) / 1000;
  log(`generated ${name} in ${seconds.toFixed(1)} s`);
  return { path, name, rows, k, reused: false, seconds };
}
