/**
 * The contenders the benchmark times: DuckDB and Polars on tables loaded in memory,
 * DuckDB and Polars scanning the CSVs per query (comparable to Basin, whose lazy
 * `readCsv` scans the files on every `compute()`), and Basin. Each works on any
 * {@link Dataset}: its tables go by their names (`x`, `small`, ...).
 */
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import pl from "nodejs-polars";
import * as api from "../engine/api/index.js";
import type { DType } from "../engine/common/types.js";
import { clearCsvBlockCache } from "../engine/lower/csv_blocks.js";
import { normalizeCell, normalizeRows } from "./compare.js";
import { clusterTracer, type RunTracer } from "./run_trace.js";
import { quoteIdent, sqlString } from "./sql.js";
import { basinDigest, writeParquetAnswer } from "./table_sample.js";
import type { Table } from "../engine/run/table.js";
import type { Question, Tables } from "./questions.js";
import type { ColumnType, Dataset, Schema, TableFile } from "./data_file.js";
import { duckdbTypeClass, polarsTypeClass, type ColumnDigest, type Digest } from "./digest.js";

/** Each column type in each system's vocabulary. */
const TYPES: Record<ColumnType, { duckdb: string; polars: pl.DataType; basin: DType }> = {
  string: { duckdb: "VARCHAR", polars: pl.Utf8, basin: "string" },
  int64: { duckdb: "BIGINT", polars: pl.Int64, basin: "int64" },
  float64: { duckdb: "DOUBLE", polars: pl.Float64, basin: "float64" },
  date: { duckdb: "DATE", polars: pl.Date, basin: "date" },
};

/** A table's schema in one system's vocabulary. */
function typed<T>(schema: Schema, pick: (t: (typeof TYPES)[ColumnType]) => T): Record<string, T> {
  return Object.fromEntries(Object.entries(schema).map(([k, t]) => [k, pick(TYPES[t])]));
}

/** Builds one value per table of the dataset, keyed by table name. */
function perTable<T>(data: Dataset, make: (t: TableFile) => T): Tables<T> {
  return Object.fromEntries(data.tables.map((t) => [t.name, make(t)]));
}

/**
 * A finished query's answer: the timed run's own result, held by the system that
 * computed it. `digest(order, stride)` reads what the check compares (after timing stops):
 * column names and type classes, statistics of every column over every row computed
 * inside that system, and the rows sorted by `order` (natively where the system can),
 * every `stride`-th of them (1: all; 0: none; the harness samples huge answers, see
 * digest.ts). Where the reference's answer and another's can both be written as
 * Parquet (DuckDB's, Basin's), every row is compared instead of a sample.
 */
export interface Answer {
  numRows: number;
  columns: string[];
  digest(order: readonly string[], stride: number): Promise<Digest>;
  /**
   * Writes the answer (the digested one) as a new Parquet file: where the reference's
   * and another system's answers both can, every row is compared (row_check.ts).
   */
  writeParquet?(path: string): Promise<void>;
  /** Frees what the answer holds for the check (DuckDB's kept table). */
  release?(): Promise<void>;
}

/** A column's statistics with the systems' conventions for empty and all-null columns made one. */
function columnDigest(
  c: Omit<ColumnDigest, "min" | "max" | "sum">,
  min: unknown,
  max: unknown,
  sum: unknown,
  rows: number,
): ColumnDigest {
  const empty = c.nulls === rows;
  const num = (v: unknown): number | null => {
    const x = normalizeCell(v);
    return typeof x === "number" ? x : null;
  };
  return {
    ...c,
    min: empty ? null : normalizeCell(min),
    max: empty ? null : normalizeCell(max),
    sum: empty || c.type === "date" || c.type === "timestamp" ? null : num(sum),
  };
}

/** One timed column of the results table. */
export interface Contender {
  /** Column label, e.g. `duckdb` or `polars+scan`. */
  readonly name: string;
  /**
   * Loads the tables into memory (timed as the "load" row); absent for scan-only
   * contenders. May resolve to the seconds to report, when it does untimed work too.
   */
  load?(): Promise<number | void>;
  /** Whether the question can run; false shows "not supported". */
  supports(q: Question): boolean;
  /** Runs a question to completion (timed) and returns how to fetch its rows. */
  run(q: Question): Promise<Answer>;
  /** Releases resources (a cluster's workers and GPU memory: awaited before the next system loads). */
  close?(): void | Promise<void>;

  /** Says where a run's time went (Basin's task spans and GPU copies), for the log. */
  readonly tracer?: RunTracer;
}

function duckdbRead(t: TableFile): string {
  if (t.format === "parquet") return `read_parquet(${sqlString(t.path)})`;
  const cols = Object.entries(typed(t.schema, (x) => x.duckdb))
    .map(([k, type]) => `${sqlString(k)}: ${sqlString(type)}`)
    .join(", ");
  return `read_csv(${sqlString(t.path)}, header = true, delim = ',', columns = {${cols}})`;
}

/** Statistics of every column of the DuckDB table `answer`, computed by DuckDB. */
async function duckdbStats(conn: DuckDBConnection, answer: string, rows: number): Promise<ColumnDigest[]> {
  const described = (await conn.runAndReadAll(`DESCRIBE ${answer}`)).getRowObjectsJS();
  const cols = described.map((d) => ({ name: String(d.column_name), type: duckdbTypeClass(String(d.column_type)) }));
  if (cols.length === 0) return [];
  const exprs = cols.map(({ name, type }, i) => {
    const x = quoteIdent(name);
    switch (type) {
      case "int":
      case "float":
      case "bool": {
        const d = `${x}::DOUBLE`;
        const ok = `NOT isnan(${d})`;
        return `count(*) FILTER (WHERE ${x} IS NULL OR isnan(${d})) AS n${i}, min(${d}) FILTER (WHERE ${ok}) AS lo${i}, max(${d}) FILTER (WHERE ${ok}) AS hi${i}, sum(${d}) FILTER (WHERE ${ok}) AS s${i}`;
      }
      case "string":
        return `count(*) FILTER (WHERE ${x} IS NULL) AS n${i}, min(${x}) AS lo${i}, max(${x}) AS hi${i}, sum(length(${x}))::DOUBLE AS s${i}`;
      case "timestamp":
        return `count(*) FILTER (WHERE ${x} IS NULL) AS n${i}, epoch_us(min(${x}))::DOUBLE AS lo${i}, epoch_us(max(${x}))::DOUBLE AS hi${i}, NULL AS s${i}`;
      default:
        return `count(*) FILTER (WHERE ${x} IS NULL) AS n${i}, min(${x}) AS lo${i}, max(${x}) AS hi${i}, NULL AS s${i}`;
    }
  });
  const r = (await conn.runAndReadAll(`SELECT ${exprs.join(", ")} FROM ${answer}`)).getRowObjectsJS()[0]!;
  return cols.map((c, i) =>
    columnDigest({ ...c, nulls: Number(r[`n${i}`]) }, r[`lo${i}`], r[`hi${i}`], r[`s${i}`], rows),
  );
}

/**
 * DuckDB over in-memory tables (loaded = true) or scanning the files per query. The
 * timed run materializes the answer as a temporary table (as Polars' collect and
 * Basin's compute hold theirs); the check reads that table, never a re-run.
 */
export async function duckdbContender(data: Dataset, loaded: boolean): Promise<Contender> {
  const instance = await DuckDBInstance.create(":memory:");
  const conn: DuckDBConnection = await instance.connect();
  const scans = data.tables.map((t) => `${quoteIdent(t.name)} AS (SELECT * FROM ${duckdbRead(t)})`).join(", ");
  const answer = "__bench_answer";
  let checked = 0;
  return {
    name: loaded ? "duckdb" : "duckdb+scan",
    load: loaded
      ? async () => {
          for (const t of data.tables) {
            await conn.run(`CREATE OR REPLACE TABLE ${quoteIdent(t.name)} AS SELECT * FROM ${duckdbRead(t)}`);
          }
        }
      : undefined,
    supports: () => true,
    async run(q) {
      // A query with its own WITH gets the scans as its first common table expressions.
      const own = /^\s*WITH\s/i.exec(q.duckdb);
      const sql = loaded
        ? q.duckdb
        : own
          ? `WITH ${scans}, ${q.duckdb.slice(own[0].length)}`
          : `WITH ${scans} ${q.duckdb}`;
      await conn.run(`CREATE OR REPLACE TEMP TABLE ${answer} AS ${sql}`);
      const numRows = Number((await conn.runAndReadAll(`SELECT count(*) AS n FROM ${answer}`)).getRowObjectsJS()[0]!.n);
      const columns = (await conn.runAndReadAll(`SELECT * FROM ${answer} LIMIT 0`)).columnNames();
      // The checked answer is kept under a name of its own (later runs replace `answer`)
      // until released, so that it can be written for the every-row comparison.
      const kept = `__bench_checked_${++checked}`;
      return {
        numRows,
        columns,
        async digest(order, stride) {
          await conn.run(`ALTER TABLE ${answer} RENAME TO ${kept}`);
          const by = order.map((c) => `${quoteIdent(c)} NULLS FIRST`).join(", ");
          const rowsSql =
            stride === 0
              ? null
              : stride === 1
                ? `SELECT * FROM ${kept} ORDER BY ${by}`
                : `SELECT * EXCLUDE (__rn) FROM (SELECT *, row_number() OVER (ORDER BY ${by}) - 1 AS __rn ` +
                  `FROM ${kept}) WHERE __rn % ${stride} = 0 ORDER BY __rn`;
          return {
            numRows,
            columns: await duckdbStats(conn, kept, numRows),
            rows: rowsSql ? normalizeRows((await conn.runAndReadAll(rowsSql)).getRowObjectsJS()) : [],
            stride,
          };
        },
        async writeParquet(path) {
          // Parquet has no 128-bit integer: DuckDB would write a HUGEINT (its sum of
          // integers) as a double, rounding sums past 2^53; DECIMAL(38,0) keeps them exact.
          const types = (await conn.runAndReadAll(`DESCRIBE ${kept}`)).getRowObjectsJS();
          const wide = types
            .filter((d) => String(d.column_type).toUpperCase() === "HUGEINT")
            .map((d) => quoteIdent(String(d.column_name)));
          const from = wide.length
            ? `(SELECT * REPLACE (${wide.map((c) => `${c}::DECIMAL(38,0) AS ${c}`).join(", ")}) FROM ${kept})`
            : kept;
          await conn.run(`COPY ${from} TO ${sqlString(path)} (FORMAT parquet)`);
        },
        async release() {
          await conn.run(`DROP TABLE IF EXISTS ${kept}`);
        },
      };
    },
    close: () => {
      conn.closeSync();
      instance.closeSync();
    },
  };
}

/** Statistics of every column of a Polars answer, computed by Polars. */
function polarsStats(out: pl.DataFrame): ColumnDigest[] {
  const cols = out.columns.map((name, i) => ({ name, type: polarsTypeClass(String(out.dtypes[i])) }));
  if (cols.length === 0) return [];
  const c = pl.col;
  const exprs = cols.flatMap(({ name, type }, i) => {
    const x = c(name);
    if (type === "int" || type === "float" || type === "bool") {
      const d = x.cast(pl.Float64).fillNan(null);
      return [
        d.isNull().sum().alias(`n${i}`),
        d.min().alias(`lo${i}`),
        d.max().alias(`hi${i}`),
        d.sum().alias(`s${i}`),
      ];
    }
    const n = x.isNull().sum().alias(`n${i}`);
    if (type === "string")
      return [
        n,
        x.min().alias(`lo${i}`),
        x.max().alias(`hi${i}`),
        x.str.lengths().cast(pl.Float64).sum().alias(`s${i}`),
      ];
    if (type === "timestamp") {
      const us = x.cast(pl.Datetime("us")).cast(pl.Int64).cast(pl.Float64);
      return [n, us.min().alias(`lo${i}`), us.max().alias(`hi${i}`), pl.lit(null).alias(`s${i}`)];
    }
    return [n, x.min().alias(`lo${i}`), x.max().alias(`hi${i}`), pl.lit(null).alias(`s${i}`)];
  });
  const r = out.select(...exprs).toRecords()[0]! as Record<string, unknown>;
  return cols.map((col, i) =>
    columnDigest({ ...col, nulls: Number(r[`n${i}`]) }, r[`lo${i}`], r[`hi${i}`], r[`s${i}`], out.height),
  );
}

/** Polars over eagerly read DataFrames (loaded = true) or `scanCSV`/`scanParquet` per query. */
export function polarsContender(data: Dataset, loaded: boolean): Contender {
  const schema = (t: TableFile): Record<string, pl.DataType> => typed(t.schema, (x) => x.polars);
  let dfs: Tables<pl.DataFrame> | null = null;
  const frames = (): Tables<pl.LazyDataFrame> => {
    if (!loaded)
      return perTable(data, (t) =>
        t.format === "parquet" ? pl.scanParquet(t.path) : pl.scanCSV(t.path, { schema: schema(t) }),
      );
    if (!dfs) throw new Error("polars: tables not loaded");
    const loadedDfs = dfs;
    return perTable(data, (t) => loadedDfs[t.name]!.lazy());
  };
  return {
    name: loaded ? "polars" : "polars+scan",
    load: loaded
      ? async () => {
          dfs = perTable(data, (t) =>
            t.format === "parquet" ? pl.readParquet(t.path) : pl.readCSV(t.path, { schema: schema(t) }),
          );
        }
      : undefined,
    supports: () => true,
    async run(q) {
      const out = await q.polars(frames()).collect();
      return {
        numRows: out.height,
        columns: out.columns,
        async digest(order, stride) {
          const sorted = () => (order.length > 0 ? out.sort([...order]) : out);
          const sample = stride === 0 ? null : stride > 1 ? sorted().gatherEvery(stride) : sorted();
          return {
            numRows: out.height,
            columns: polarsStats(out),
            rows: sample ? normalizeRows(sample.toRecords() as Record<string, unknown>[]) : [],
            stride,
          };
        },
      };
    },
    close: () => {
      dfs = null;
    },
  };
}

/** A Basin result as an Answer (statistics and rows read from the result's arrays). */
function basinAnswer(t: Table): Answer {
  return {
    numRows: t.numRows,
    columns: [...t.columnNames],
    async digest(order, stride) {
      return basinDigest(t, order, stride);
    },
    async writeParquet(path) {
      writeParquetAnswer(t, path);
    },
  };
}

/** A table of the dataset as a lazy Basin frame. */
function basinRead(t: TableFile): api.DataFrame {
  return t.format === "parquet"
    ? api.readParquet(t.path)
    : api.readCsv(t.path, { dtypes: typed(t.schema, (x) => x.basin) });
}

/**
 * Forgets the CSV block boundaries Basin remembers per file, so that a timed scan
 * finds them as DuckDB's and Polars' scans do (Parquet footers stay cached: a few
 * kilobytes per file, as DuckDB's own metadata reads).
 */
function coldScan(): void {
  clearCsvBlockCache();
}

/**
 * Starts a cluster's worker threads (untimed, as DuckDB's instance is created before
 * its timings): a one-row computation on it.
 */
async function startWorkers(cluster?: api.LocalCluster): Promise<void> {
  await api.fromColumns({ x: [1] }).compute(cluster ? { cluster } : {});
}

/**
 * Basin over tables persisted in memory once (the load row times reading and keeping
 * them), like DuckDB's and Polars' in-memory tables. With `gpus` the cluster has one
 * GPU worker per GPU besides its CPU workers, and group-bys run on the GPUs.
 */
export function basinMemoryContender(data: Dataset, name: string, options: api.LocalClusterOptions): Contender {
  let cluster: api.LocalCluster | undefined;
  let frames: Record<string, api.DataFrame> | undefined;
  return {
    name,
    tracer: clusterTracer(() => cluster),
    load: async () => {
      cluster ??= new api.LocalCluster(options);
      for (const f of Object.values(frames ?? {})) f.unpersist();
      await startWorkers(cluster);
      coldScan();
      const t0 = performance.now();
      // CPU workers get 4 partitions each: smaller tasks pipeline better (G1_1e7 q10: 3.4 s
      // with 2 partitions, 1.9 s with 8, q1–q9 alike) and 8 partitions are the 509 MB file's
      // 64 MiB blocks as scanned, so the load concatenates nothing. A GPU gets persist()'s
      // default: partitions of a quarter of its memory limit (the whole table in one
      // kernel pass where it fits; several under a small --device-memory-limit).
      const sized = options.gpus === "none" ? { partitions: Math.max(1, cluster.workerCount) * 4 } : {};
      const loaded: Record<string, api.DataFrame> = {};
      for (const t of data.tables) loaded[t.name] = await basinRead(t).persist({ cluster, ...sized });
      frames = loaded;
      return (performance.now() - t0) / 1000;
    },
    supports: (q) => q.basin !== null,
    async run(q) {
      if (!q.basin || !frames || !cluster) throw new Error(frames ? "not supported" : `${name}: tables not loaded`);
      return basinAnswer(await q.basin(frames, api).compute({ cluster }));
    },
    close: () => {
      for (const f of Object.values(frames ?? {})) f.unpersist();
      frames = undefined;
      return cluster?.close();
    },
  };
}

/**
 * Basin: a lazy `readCsv`/`readParquet` per query, so its times include the scans.
 * Its load row times reading every table and keeping it in memory (as DuckDB's and
 * Polars' loads do); the kept tables are freed again, untimed, since its queries scan.
 */
export function basinContender(data: Dataset): Contender {
  const frames = (): Tables<api.DataFrame> => perTable(data, basinRead);
  return {
    name: "basin",
    load: async () => {
      await startWorkers();
      coldScan();
      const kept: api.DataFrame[] = [];
      const t0 = performance.now();
      for (const t of data.tables) kept.push(await basinRead(t).persist());
      const seconds = (performance.now() - t0) / 1000;
      for (const k of kept) k.unpersist();
      return seconds;
    },
    supports: (q) => q.basin !== null,
    async run(q) {
      if (!q.basin) throw new Error("not supported");
      coldScan();
      return basinAnswer(await q.basin(frames(), api).compute());
    },
  };
}
