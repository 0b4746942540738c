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
import { normalizeRows, type Row } from "./compare.js";
import { sortAndStrideTable } from "./table_sample.js";
import type { Table } from "../engine/run/table.js";
import type { Question, Tables } from "./questions.js";
import type { ColumnType, Dataset, Schema, TableFile } from "./data_file.js";

/** Each column type in each system's vocabulary. */
const TYPES: Record<ColumnType, { duckdb: string; polars: pl.DataType; basin: DType }> = {
  string: { duckdb: "VARCHAR", polars: pl.Utf8, basin: "string" },
  int64: { duckdb: "BIGINT", polars: pl.Int64, basin: "int64" },
  float64: { duckdb: "DOUBLE", polars: pl.Float64, basin: "float64" },
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
 * A finished query's answer, read back after timing stops. `rows(order, stride)`
 * returns the rows sorted by the `order` columns (natively where the system can),
 * keeping every `stride`-th one, so huge answers (q10 has ~N groups) are checked on
 * an aligned sample instead of being pulled into JavaScript whole.
 */
export interface Answer {
  numRows: number;
  columns: string[];
  rows(order: readonly string[], stride: number): Promise<Row[]>;
}

function quoteIdent(s: string): string {
  return `"${s.replaceAll('"', '""')}"`;
}

/** One timed column of the results table. */
export interface Contender {
  /** Column label, e.g. `duckdb` or `polars+scan`. */
  readonly name: string;
  /** Loads the CSVs into memory (timed as the "load csv" row); absent for scan-only contenders. */
  load?(): Promise<void>;
  /** Whether the question can run; false shows "not supported". */
  supports(q: Question): boolean;
  /** Runs a question to completion (timed) and returns how to fetch its rows. */
  run(q: Question): Promise<Answer>;
  /** Releases resources. */
  close?(): void;
}

function sqlString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

function duckdbReadCsv(t: TableFile): string {
  const cols = Object.entries(typed(t.schema, (x) => x.duckdb))
    .map(([k, type]) => `${sqlString(k)}: ${sqlString(type)}`)
    .join(", ");
  return `read_csv(${sqlString(t.path)}, header = true, delim = ',', columns = {${cols}})`;
}

/** DuckDB over in-memory tables (loaded = true) or scanning the CSVs per query. */
export async function duckdbContender(data: Dataset, loaded: boolean): Promise<Contender> {
  const instance = await DuckDBInstance.create(":memory:");
  const conn: DuckDBConnection = await instance.connect();
  const scans = data.tables.map((t) => `${quoteIdent(t.name)} AS (SELECT * FROM ${duckdbReadCsv(t)})`).join(", ");
  return {
    name: loaded ? "duckdb" : "duckdb+scan",
    load: loaded
      ? async () => {
          for (const t of data.tables) {
            await conn.run(`CREATE OR REPLACE TABLE ${quoteIdent(t.name)} AS SELECT * FROM ${duckdbReadCsv(t)}`);
          }
        }
      : undefined,
    supports: () => true,
    async run(q) {
      const sql = loaded ? q.duckdb : `WITH ${scans} ${q.duckdb}`;
      const reader = await conn.runAndReadAll(sql);
      return {
        numRows: reader.currentRowCount,
        columns: reader.columnNames(),
        async rows(order, stride) {
          // Re-runs the query untimed, sorted and sampled inside DuckDB.
          const by = order.map(quoteIdent).join(", ");
          const sampled =
            `SELECT * EXCLUDE (__rn) FROM (SELECT *, row_number() OVER (ORDER BY ${by}) - 1 AS __rn ` +
            `FROM (${sql})) WHERE __rn % ${stride} = 0 ORDER BY __rn`;
          return normalizeRows((await conn.runAndReadAll(sampled)).getRowObjectsJS());
        },
      };
    },
    close: () => {
      conn.closeSync();
      instance.closeSync();
    },
  };
}

/** Polars over eagerly read DataFrames (loaded = true) or `scanCSV` per query. */
export function polarsContender(data: Dataset, loaded: boolean): Contender {
  const schema = (t: TableFile): Record<string, pl.DataType> => typed(t.schema, (x) => x.polars);
  let dfs: Tables<pl.DataFrame> | null = null;
  const frames = (): Tables<pl.LazyDataFrame> => {
    if (!loaded) return perTable(data, (t) => pl.scanCSV(t.path, { schema: schema(t) }));
    if (!dfs) throw new Error("polars: tables not loaded");
    const loadedDfs = dfs;
    return perTable(data, (t) => loadedDfs[t.name]!.lazy());
  };
  return {
    name: loaded ? "polars" : "polars+scan",
    load: loaded
      ? async () => {
          dfs = perTable(data, (t) => pl.readCSV(t.path, { schema: schema(t) }));
        }
      : undefined,
    supports: () => true,
    async run(q) {
      const out = await q.polars(frames()).collect();
      return {
        numRows: out.height,
        columns: out.columns,
        async rows(order, stride) {
          const sorted = out.sort([...order]);
          const sample = stride > 1 ? sorted.gatherEvery(stride) : sorted;
          return normalizeRows(sample.toRecords() as Record<string, unknown>[]);
        },
      };
    },
    close: () => {
      dfs = null;
    },
  };
}

/** A Basin result as an Answer (rows sorted and sampled in JavaScript). */
function basinAnswer(t: Table): Answer {
  return {
    numRows: t.numRows,
    columns: [...t.columnNames],
    async rows(order, stride) {
      return sortAndStrideTable(t, order, stride);
    },
  };
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
    load: async () => {
      cluster ??= new api.LocalCluster(options);
      for (const f of Object.values(frames ?? {})) f.unpersist();
      // CPU workers get 4 partitions each: smaller tasks pipeline better (G1_1e7 q10: 3.4 s
      // with 2 partitions, 1.9 s with 8, q1–q9 alike) and 8 partitions are the 509 MB file's
      // 64 MiB blocks as scanned, so the load concatenates nothing. GPU workers keep one each.
      const parts = Math.max(1, cluster.workerCount) * (options.gpus === "none" ? 4 : 1);
      const loaded: Record<string, api.DataFrame> = {};
      for (const t of data.tables)
        loaded[t.name] = await api
          .readCsv(t.path, { dtypes: typed(t.schema, (x) => x.basin) })
          .persist({ cluster, partitions: parts });
      frames = loaded;
    },
    supports: (q) => q.basin !== null,
    async run(q) {
      if (!q.basin || !frames || !cluster) throw new Error(frames ? "not supported" : `${name}: tables not loaded`);
      return basinAnswer(await q.basin(frames, api).compute({ cluster }));
    },
    close: () => {
      for (const f of Object.values(frames ?? {})) f.unpersist();
      frames = undefined;
      void cluster?.close();
    },
  };
}

/** Basin: lazy `readCsv` per query, so its times include the CSV scans. */
export function basinContender(data: Dataset): Contender {
  const frames = (): Tables<api.DataFrame> => {
    return perTable(data, (t) => api.readCsv(t.path, { dtypes: typed(t.schema, (x) => x.basin) }));
  };
  return {
    name: "basin",
    // Basin keeps no loaded table between queries: "load csv" times parsing every
    // column of every file (a count per column, so each result is one row).
    load: async () => {
      for (const all of Object.values(frames())) {
        const t = await all.agg(Object.fromEntries(all.columns.map((c) => [c, "count" as const]))).compute();
        if (t.numRows !== 1) throw new Error("basin: load returned no row");
      }
    },
    supports: (q) => q.basin !== null,
    async run(q) {
      if (!q.basin) throw new Error("not supported");
      return basinAnswer(await q.basin(frames(), api).compute());
    },
  };
}
