/**
 * What the generators share: the description of a generated dataset (its CSV tables
 * and their schemas), db-benchmark's file naming, completion markers, and a chunked
 * CSV writer.
 */
import { createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { once } from "node:events";
import { dirname } from "node:path";

/** A column type, mapped to each system's own vocabulary in `systems.ts`. */
export type ColumnType = "string" | "int64" | "float64" | "date";

/** Column name → type, in file order. */
export type Schema = Readonly<Record<string, ColumnType>>;

/** One file of a dataset, queried under `name` (the DuckDB table / CTE name). */
export interface TableFile {
  name: string;
  path: string;
  /** The CSV's columns, given to every reader; Parquet files carry their own (empty here). */
  schema: Schema;
  /** Default "csv". */
  format?: "csv" | "parquet";
}

/** A generated (or reused) dataset: one or more tables. */
export interface Dataset {
  /** Dataset name, e.g. `G1_1e7_1e2_0_0` or `J1_1e7_NA_0_0`; also the report section id. */
  name: string;
  tables: TableFile[];
  /** True when existing files were reused. */
  reused: boolean;
  /** Seconds spent generating (0 when reused). */
  seconds: number;
}

/** Formats a count the way db-benchmark names files: 1e7, 1e2, or the plain number. */
export function prettyCount(n: number): string {
  const e = Math.log10(n);
  return Number.isInteger(e) ? `1e${e}` : String(n);
}

/** A value uniform in [0, 100) rounded to 6 decimals, as db-benchmark's `round(runif(n, max=100), 6)`. */
export function uniform100(rnd: () => number): number {
  return Math.round(rnd() * 100 * 1e6) / 1e6;
}

const marker = (path: string): string => `${path}.done`;

/** True when `path` exists with a `.done` marker holding its byte size (a complete earlier write). */
export function isComplete(path: string): boolean {
  if (!existsSync(path) || !existsSync(marker(path))) return false;
  return readFileSync(marker(path), "utf8").trim() === String(statSync(path).size);
}

/**
 * Writes a CSV file of `rows` lines produced by `line(i)` (each ending in `\n`) after
 * the header, through a temporary file, then writes the `.done` marker.
 */
export async function writeCsv(
  path: string,
  columns: readonly string[],
  rows: number,
  line: (i: number) => string,
): Promise<void> {
  async function* chunks(): AsyncGenerator<string> {
    const chunkBytes = 1 << 20;
    let buf = "";
    for (let i = 0; i < rows; i++) {
      buf += line(i);
      if (buf.length >= chunkBytes) {
        yield buf;
        buf = "";
      }
    }
    yield buf;
  }
  await writeCsvChunks(path, columns, chunks());
}

/**
 * Writes a CSV file of the header and then `chunks` (whole lines each) in order,
 * through a temporary file, then writes the `.done` marker.
 */
export async function writeCsvChunks(
  path: string,
  columns: readonly string[],
  chunks: AsyncIterable<string>,
): Promise<void> {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp`;
  const out = createWriteStream(tmp, { highWaterMark: 1 << 22 });
  out.write(columns.join(",") + "\n");
  for await (const text of chunks) if (!out.write(text)) await once(out, "drain");
  out.end();
  await once(out, "finish");
  renameSync(tmp, path);
  writeFileSync(marker(path), String(statSync(path).size));
}

/** Checks a row count argument. */
export function checkCount(what: string, n: number): void {
  if (!Number.isInteger(n) || n < 1) throw new Error(`${what} must be a positive integer, got ${n}`);
}
