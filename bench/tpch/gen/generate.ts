// Generates the eight TPC-H tables into a folder: one Parquet file per table (and a
// CSV per table with `csv`). Tasks (chunks of tables) run in worker threads, in any
// order; their parts are appended to the files in task order, so the files are the
// same whatever the number of workers.
import {
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  closeSync,
  openSync,
  writeSync,
  renameSync,
} from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { ParquetStitcher } from "./stitch.js";
import { chunkCount, GROUP_TABLES, GROUPS, scaleOf, type Task } from "./tables.js";
import { runTask, type Part } from "./task.js";
import { textPool } from "./text.js";
import type { TaskMessage, WorkerSetup } from "./worker.js";

/** The tables, in the order they are generated. */
export const TPCH_TABLES = GROUPS.flatMap((g) => GROUP_TABLES[g]);

/** Bumped whenever the generated data changes, so a folder of older data is regenerated. */
export const GENERATOR_VERSION = 1;

export interface GenerateOptions {
  sf: number;
  /** The folder (created if missing). */
  out: string;
  /** Worker threads (default: the cores available); 0 runs every task on this thread. */
  workers?: number;
  /** Also write `<table>.csv`. */
  csv?: boolean;
  /** Progress lines. */
  log?: (line: string) => void;
}

export interface TableSummary {
  table: string;
  rows: number;
  bytes: number;
}

export interface GenerateSummary {
  sf: number;
  seconds: number;
  tables: TableSummary[];
}

/** The tasks of a scale factor, in output order. */
export function tasksOf(sf: number): Task[] {
  const s = scaleOf(sf);
  return GROUPS.flatMap((group) => Array.from({ length: chunkCount(group, s) }, (_, index) => ({ group, index })));
}

/** Appends CSV parts to `<table>.csv` through a `.partial` file. */
class CsvAppender {
  private readonly fd: number;
  constructor(
    private readonly path: string,
    header: string,
  ) {
    this.fd = openSync(`${path}.partial`, "w");
    this.put(new TextEncoder().encode(header));
  }
  put(b: Uint8Array): void {
    let done = 0;
    while (done < b.length) done += writeSync(this.fd, b, done, b.length - done);
  }
  finish(): void {
    closeSync(this.fd);
    renameSync(`${this.path}.partial`, this.path);
  }
}

/** Where a worker's module lies: beside this one once transpiled (dist/), or null when running from TypeScript. */
function workerFile(): string | null {
  const url = new URL("./worker.js", import.meta.url);
  const path = fileURLToPath(url);
  return existsSync(path) && !import.meta.url.endsWith(".ts") ? path : null;
}

/** Runs the tasks, handing each one's parts to `take` in task order. */
async function runTasks(
  tasks: Task[],
  o: GenerateOptions,
  pool: Uint8Array,
  take: (parts: Part[]) => void,
): Promise<void> {
  const csv = o.csv ?? false;
  const want = Math.min(o.workers ?? availableParallelism(), tasks.length);
  const file = want > 0 ? workerFile() : null;
  // Run from TypeScript (tests) there is no worker module: without a worker count asked for, run inline.
  if (want > 0 && !file && o.workers !== undefined)
    throw new Error(
      "the TPC-H generator's worker threads need the transpiled bench (node scripts/build.mjs), or workers: 0",
    );
  if (!file) {
    for (const t of tasks) take(runTask(t, o.sf, pool, csv));
    return;
  }
  const shared = new SharedArrayBuffer(pool.length);
  new Uint8Array(shared).set(pool);
  const setup: WorkerSetup = { sf: o.sf, csv, pool: shared };
  const workers = Array.from({ length: want }, () => new Worker(file, { workerData: setup }));
  const done = new Map<number, Part[]>();
  let next = 0; // next task to send
  let written = 0; // next task to append
  const window = 2 * want;
  try {
    await new Promise<void>((resolve, reject) => {
      const send = (w: Worker) => {
        if (next < tasks.length && next < written + window) {
          const m: TaskMessage = { seq: next, task: tasks[next++] };
          w.postMessage(m);
          return true;
        }
        return false;
      };
      const idle: Worker[] = [];
      for (const w of workers) {
        w.on("error", reject);
        w.on("exit", (code) => {
          if (code !== 0) reject(new Error(`a generator worker exited with code ${code}`));
        });
        w.on("message", (m: { seq: number; parts: Part[] }) => {
          done.set(m.seq, m.parts);
          try {
            while (done.has(written)) {
              const parts = done.get(written)!;
              done.delete(written++);
              take(parts);
            }
          } catch (e) {
            reject(e);
            return;
          }
          if (written === tasks.length) return resolve();
          if (!send(w)) idle.push(w);
          while (idle.length > 0 && send(idle[idle.length - 1])) idle.pop();
        });
        if (!send(w)) idle.push(w);
      }
    });
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/** The marker a complete folder holds: what was generated, by which generator version. */
interface DoneMarker {
  version: number;
  sf: number;
  csv: boolean;
  tables: TableSummary[];
}

/**
 * Generates TPC-H at scale factor `sf` into `out` (see the file's header).
 *
 * @example
 * await generateTpch({ sf: 0.01, out: ".bench-data/tpch-sf0.01" })
 */
export async function generateTpch(o: GenerateOptions): Promise<GenerateSummary> {
  if (!(o.sf > 0) || !Number.isFinite(o.sf)) throw new Error(`--sf: expected a positive scale factor, got ${o.sf}`);
  const t0 = performance.now();
  mkdirSync(o.out, { recursive: true });
  rmSync(join(o.out, ".done"), { force: true });
  const stitchers = new Map<string, ParquetStitcher>();
  const csvs = new Map<string, CsvAppender>();
  const rows = new Map<string, number>();
  const tasks = tasksOf(o.sf);
  let finished = 0;
  const pool = textPool();
  await runTasks(tasks, o, pool, (parts) => {
    for (const p of parts) {
      let st = stitchers.get(p.table);
      if (!st) stitchers.set(p.table, (st = new ParquetStitcher(join(o.out, `${p.table}.parquet`))));
      st.append(p.parquet);
      if (p.csv) {
        let c = csvs.get(p.table);
        if (!c) csvs.set(p.table, (c = new CsvAppender(join(o.out, `${p.table}.csv`), p.header ?? "")));
        c.put(p.csv);
      }
      rows.set(p.table, (rows.get(p.table) ?? 0) + p.rows);
    }
    finished++;
    if (o.log && (finished % 20 === 0 || finished === tasks.length))
      o.log(`tpch sf ${o.sf}: ${finished}/${tasks.length} chunks, ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  });
  const tables = TPCH_TABLES.map((table) => {
    const { bytes } = stitchers.get(table)!.finish();
    csvs.get(table)?.finish();
    return { table, rows: rows.get(table) ?? 0, bytes };
  });
  const marker: DoneMarker = { version: GENERATOR_VERSION, sf: o.sf, csv: o.csv ?? false, tables };
  writeFileSync(join(o.out, ".done"), JSON.stringify(marker, null, 2) + "\n");
  return { sf: o.sf, seconds: (performance.now() - t0) / 1000, tables };
}

/** Whether `dir` holds a complete generation at `sf` by this generator version (with CSV when `csv`). */
export function tpchReady(dir: string, sf: number, csv = false): boolean {
  try {
    const m = JSON.parse(readFileSync(join(dir, ".done"), "utf8")) as DoneMarker;
    return m.version === GENERATOR_VERSION && m.sf === sf && (m.csv || !csv);
  } catch {
    return false;
  }
}

/**
 * The folder of TPC-H data at `sf`, generated unless already there: tests and the
 * bench call this (default folder `.bench-data/tpch-sf<sf>`).
 *
 * @example
 * const dir = await ensureTpch(0.01); // .bench-data/tpch-sf0.01
 */
export async function ensureTpch(
  sf: number,
  dir = join(".bench-data", `tpch-sf${sf}`),
  o: Omit<GenerateOptions, "sf" | "out"> = {},
): Promise<string> {
  if (!tpchReady(dir, sf, o.csv)) await generateTpch({ ...o, sf, out: dir });
  return dir;
}
