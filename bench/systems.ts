/**
 * The contenders the benchmark times: DuckDB and Polars on a table loaded in memory,
 * DuckDB and Polars scanning the CSV per query (comparable to Basin, whose lazy
 * `readCsv` scans the file on every `compute()`), and Basin.
 */
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import pl from "nodejs-polars";
import type { BasinApi, BasinFrame } from "./basin-contract.js";
import type { DType } from "../engine/common/types.js";
import { compareCells, normalizeCell, normalizeRows, sortRows, type Row } from "./compare.js";
import type { Table } from "../engine/api/table.js";
import type { Question } from "./questions.js";

/** Column type of the groupby CSV in each system's vocabulary. */
const SCHEMA: Record<string, { duckdb: string; polars: pl.DataType; basin: string }> = {
  id1: { duckdb: "VARCHAR", polars: pl.Utf8, basin: "string" },
  id2: { duckdb: "VARCHAR", polars: pl.Utf8, basin: "string" },
  id3: { duckdb: "VARCHAR", polars: pl.Utf8, basin: "string" },
  id4: { duckdb: "BIGINT", polars: pl.Int64, basin: "int64" },
  id5: { duckdb: "BIGINT", polars: pl.Int64, basin: "int64" },
  id6: { duckdb: "BIGINT", polars: pl.Int64, basin: "int64" },
  v1: { duckdb: "BIGINT", polars: pl.Int64, basin: "int64" },
  v2: { duckdb: "BIGINT", polars: pl.Int64, basin: "int64" },
  v3: { duckdb: "DOUBLE", polars: pl.Float64, basin: "float64" },
};

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

/** Sorts rows in JavaScript and keeps every `stride`-th one (the fallback path). */
function sortAndStride(rows: Row[], order: readonly string[], stride: number): Row[] {
  const sorted = sortRows(rows, order, []);
  return stride <= 1 ? sorted : sorted.filter((_, i) => i % stride === 0);
}

/**
 * The same for a Basin result, without building one object per row (1e7 row
 * objects do not fit in Node's heap): sort row indices over the columns, then
 * build only the rows that are kept.
 */
function sortAndStrideTable(t: Table, order: readonly string[], stride: number): Row[] {
  const names = t.columnNames;
  const cols = new Map(names.map((n) => [n, t.column(n).map(normalizeCell)]));
  const keys = order.map((k) => cols.get(k)!);
  const idx = Array.from({ length: t.numRows }, (_, i) => i);
  idx.sort((a, b) => {
    for (const c of keys) {
      const d = compareCells(c[a], c[b]);
      if (d !== 0) return d;
    }
    return 0;
  });
  const kept = stride <= 1 ? idx : idx.filter((_, i) => i % stride === 0);
  return kept.map((r) => Object.fromEntries(names.map((n) => [n, cols.get(n)![r]])));
}

function quoteIdent(s: string): string {
  return `"${s.replaceAll('"', '""')}"`;
}

/** One timed column of the results table. */
export interface Contender {
  /** Column label, e.g. `duckdb` or `polars+scan`. */
  readonly name: string;
  /** Loads the CSV into memory (timed as the "load csv" row); absent for scan-only contenders. */
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

function duckdbReadCsv(path: string): string {
  const cols = Object.entries(SCHEMA)
    .map(([k, t]) => `'${k}': '${t.duckdb}'`)
    .join(", ");
  return `read_csv(${sqlString(path)}, header = true, delim = ',', columns = {${cols}})`;
}

/** DuckDB over an in-memory table `x` (loaded = true) or scanning the CSV per query. */
export async function duckdbContender(path: string, loaded: boolean): Promise<Contender> {
  const instance = await DuckDBInstance.create(":memory:");
  const conn: DuckDBConnection = await instance.connect();
  const scan = duckdbReadCsv(path);
  return {
    name: loaded ? "duckdb" : "duckdb+scan",
    load: loaded
      ? async () => {
          await conn.run("DROP TABLE IF EXISTS x");
          await conn.run(`CREATE TABLE x AS SELECT * FROM ${scan}`);
        }
      : undefined,
    supports: () => true,
    async run(q) {
      const sql = loaded ? q.duckdb : `WITH x AS (SELECT * FROM ${scan}) ${q.duckdb}`;
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

function polarsSchema(): Record<string, pl.DataType> {
  return Object.fromEntries(Object.entries(SCHEMA).map(([k, t]) => [k, t.polars]));
}

/** Polars over an eagerly read DataFrame (loaded = true) or `scanCSV` per query. */
export function polarsContender(path: string, loaded: boolean): Contender {
  let df: pl.DataFrame | null = null;
  const frame = (): pl.LazyDataFrame => {
    if (!loaded) return pl.scanCSV(path, { schema: polarsSchema() });
    if (!df) throw new Error("polars: table not loaded");
    return df.lazy();
  };
  return {
    name: loaded ? "polars" : "polars+scan",
    load: loaded
      ? async () => {
          df = pl.readCSV(path, { schema: polarsSchema() });
        }
      : undefined,
    supports: () => true,
    async run(q) {
      const out = await q.polars(frame()).collect();
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
      df = null;
    },
  };
}

/** Basin: lazy `readCsv` per query, so its times include the CSV scan. */
export function basinContender(path: string, api: BasinApi | Error): Contender {
  const dtypes = Object.fromEntries(Object.entries(SCHEMA).map(([k, t]) => [k, t.basin as DType]));
  const frame = (): BasinFrame => {
    if (api instanceof Error) throw api;
    return api.readCsv(path, { dtypes });
  };
  return {
    name: "basin",
    // Basin keeps no loaded table between queries: "load csv" times parsing every
    // column of the file (a count per column, so the result itself is one row).
    load: async () => {
      const all = frame();
      const t = await all.agg(Object.fromEntries(all.columns.map((c) => [c, "count" as const]))).compute();
      if (t.numRows !== 1) throw new Error("basin: load returned no row");
    },
    supports: (q) => q.basin !== null,
    async run(q) {
      if (!q.basin) throw new Error("not supported");
      if (api instanceof Error) throw api;
      const t = await q.basin(frame(), api).compute();
      return {
        numRows: t.numRows,
        columns: [...t.columnNames],
        async rows(order, stride) {
          return sortAndStrideTable(t, order, stride);
        },
      };
    },
  };
}
