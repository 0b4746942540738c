// Generated rows (one object a row) as native tables and as DuckDB oracle tables, and
// native tables back as rows, for the kernel tests under test/native.
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import type { DType } from "../../engine/common/types.js";
import {
  decodeStrings,
  native,
  type Handle,
  type JsColumn,
  type JsStrings,
  type JsTable,
} from "../../engine/native/addon.js";

/** The DuckDB column types a row field may be appended as. */
export type RawSql = "BIGINT" | "DOUBLE" | "VARCHAR" | "BOOLEAN" | "INTEGER";

/**
 * One column of a row type `R`: the field it reads, its Basin type on the native side,
 * and how DuckDB stores it.
 *
 * Field values are `null` or, by `type`: a `bigint` (or integral `number`) for `int64`
 * and `timestamp` (microseconds), a `number` for `float64`, a `boolean` for `bool`, a
 * `number` of days since 1970-01-01 for `date`, a `string` for `string`.
 *
 * @example
 * const COLS: NativeCol<Row>[] = [
 *   { name: "k", type: "int64", sql: "BIGINT" },
 *   { name: "flag", type: "bool", sql: "INTEGER", view: "flag::BOOLEAN" },
 *   { name: "day", type: "date", sql: "INTEGER", view: daysToDate("day") },
 * ];
 */
export interface NativeCol<R> {
  /** The row field, also the column's name on both sides. */
  name: Extract<keyof R, string>;
  /** The column's type in the native table. */
  type: DType;
  /**
   * The raw DuckDB column type. A `bool` may be `BOOLEAN` or `INTEGER` (appended as 0/1);
   * a `date` is stored as `INTEGER` days and a `timestamp` as `BIGINT` microseconds.
   */
  sql: RawSql;
  /**
   * SQL expression over the raw column that gives the typed view's column (it is
   * selected `AS name`), e.g. `flag::BOOLEAN` or {@link daysToDate}; the raw column as
   * it is when left out.
   */
  view?: string;
}

/** Options of {@link rowsToJsTable}. */
export interface JsTableOptions {
  /**
   * Give a column with no nulls `validity: null` instead of a mask of all ones (an
   * empty table keeps its empty mask). Default false: every column gets a mask.
   */
  nullValidityWhenComplete?: boolean;
}

/** A view expression turning an INTEGER column of days since 1970-01-01 into a DATE. */
export const daysToDate = (column: string): string => `DATE '1970-01-01' + ${column}`;

/**
 * Converts rows into a {@link JsTable} for `native().tableFromJs`, one column per entry
 * of `cols`, in that order. A null field is a 0 bit in the column's validity and a zero
 * (or `null` string) in its values.
 *
 * @example
 * const h = native().tableFromJs(rowsToJsTable(rows, COLS));
 */
export function rowsToJsTable<R>(
  rows: readonly R[],
  cols: readonly NativeCol<R>[],
  opts: JsTableOptions = {},
): JsTable {
  const n = rows.length;
  return {
    rows: n,
    names: cols.map((c) => c.name),
    columns: cols.map((c): JsColumn => {
      const field = (r: R): unknown => r[c.name];
      const validity = Uint8Array.from(rows, (r) => (field(r) === null ? 0 : 1));
      let values: JsColumn["values"];
      switch (c.type) {
        case "int64":
        case "timestamp":
          values = BigInt64Array.from(rows, (r) => (field(r) === null ? 0n : BigInt(field(r) as bigint | number)));
          break;
        case "float64":
          values = Float64Array.from(rows, (r) => (field(r) as number | null) ?? 0);
          break;
        case "bool":
          values = Uint8Array.from(rows, (r) => (field(r) ? 1 : 0));
          break;
        case "date":
          values = Int32Array.from(rows, (r) => (field(r) as number | null) ?? 0);
          break;
        default:
          values = rows.map((r) => field(r) as string | null);
      }
      const complete = n > 0 && validity.every((v) => v === 1);
      return { type: c.type, values, validity: opts.nullValidityWhenComplete && complete ? null : validity };
    }),
  };
}

/**
 * Registers, in the calling test file, a `beforeAll` that opens an in-memory DuckDB and
 * an `afterAll` that closes it.
 *
 * @returns an object whose `con` is that connection (read it inside tests and hooks:
 * it throws before `beforeAll` has run).
 * @example
 * const duck = duckPerFile();
 * it("…", async () => { const view = await loadRowsIntoDuck(duck.con, rows, COLS); });
 */
export function duckPerFile(): { readonly con: DuckDBConnection } {
  let db: DuckDBInstance | undefined;
  let con: DuckDBConnection | undefined;
  beforeAll(async () => {
    db = await DuckDBInstance.create(":memory:");
    con = await db.connect();
  });
  afterAll(() => {
    con?.closeSync();
    db?.closeSync();
  });
  return {
    get con(): DuckDBConnection {
      if (!con) throw new Error("duckPerFile: the connection opens in beforeAll");
      return con;
    },
  };
}

let tableSeq = 0;

/**
 * Loads rows into DuckDB through an appender: a table `rawN` with each column's `sql`
 * type, and over it a view `tN` that selects each column's `view` expression (or the
 * raw column) under its name.
 *
 * @returns the name of the typed view, to query as the oracle's input.
 * @example
 * const view = await loadRowsIntoDuck(con, rows, COLS);
 * const got = await con.runAndReadAll(`SELECT count(*) FROM ${view}`);
 */
export async function loadRowsIntoDuck<R>(
  con: DuckDBConnection,
  rows: readonly R[],
  cols: readonly NativeCol<R>[],
): Promise<string> {
  const seq = ++tableSeq;
  const raw = `raw${seq}`;
  await con.run(`CREATE TABLE ${raw} (${cols.map((c) => `${c.name} ${c.sql}`).join(", ")})`);
  const app = await con.createAppender(raw);
  for (const r of rows) {
    for (const c of cols) {
      const v: unknown = r[c.name];
      if (v === null) {
        app.appendNull();
        continue;
      }
      switch (c.sql) {
        case "BIGINT":
          app.appendBigInt(BigInt(v as bigint | number));
          break;
        case "DOUBLE":
          app.appendDouble(v as number);
          break;
        case "VARCHAR":
          app.appendVarchar(v as string);
          break;
        case "BOOLEAN":
          app.appendBoolean(v as boolean);
          break;
        case "INTEGER":
          app.appendInteger(typeof v === "boolean" ? (v ? 1 : 0) : (v as number));
          break;
      }
    }
    app.endRow();
  }
  app.flushSync();
  app.closeSync();
  const view = `t${seq}`;
  const select = cols.map((c) => (c.view === undefined ? c.name : `${c.view} AS ${c.name}`));
  await con.run(`CREATE VIEW ${view} AS SELECT ${select.join(", ")} FROM ${raw}`);
  return view;
}

/**
 * Registers, in the calling test file, an `afterEach` that releases every handle passed
 * to the returned `track` during the test and then expects the native store to hold no
 * handles and no buffers (so a test that leaks fails).
 *
 * @returns `track`, which records a handle and returns it.
 * @example
 * const track = trackHandles();
 * it("…", () => { const h = track(native().tableFromJs(js)); … });
 */
export function trackHandles(): (h: Handle) => Handle {
  let live: Handle[] = [];
  afterEach(() => {
    for (const h of live) native().release(h);
    live = [];
    const s = native().storeStats();
    expect(s.handles).toBe(0);
    expect(s.buffers).toBe(0);
  });
  return (h) => (live.push(h), h);
}

/** A native table's cells, row by row: `null` where a cell is not valid, strings decoded. */
export function cellsOf(t: JsTable): unknown[][] {
  const out: unknown[][] = [];
  const values = t.columns.map((c) =>
    c.type === "string" ? decodeStrings(c.values as JsStrings, c.validity) : (c.values as ArrayLike<unknown>),
  );
  for (let i = 0; i < t.rows; i++)
    out.push(t.columns.map((c, j) => (c.validity && !c.validity[i] ? null : (values[j][i] ?? null))));
  return out;
}

/**
 * Asserts a native table holds `want`, row by row and cell by cell: null and undefined
 * match each other; `float64` columns compare with `floatEq` (on numbers); strings
 * compare as they are; the other cells as bigints. Fails at the first differing cell,
 * naming its row and column.
 *
 * @example
 * expectSameCells(native().tableToJs(h), await duckRows(sql), "q1", (a, b) => a === b);
 */
export function expectSameCells(
  got: JsTable,
  want: unknown[][],
  label: string,
  floatEq: (a: number, b: number) => boolean,
): void {
  const same = (a: unknown, b: unknown, float: boolean): boolean => {
    if (a === null || b === null || a === undefined || b === undefined) return (a ?? null) === (b ?? null);
    if (float) return floatEq(Number(a), Number(b));
    if (typeof a === "string" || typeof b === "string") return a === b;
    return BigInt(a as bigint | number) === BigInt(b as bigint | number);
  };
  const g = cellsOf(got);
  expect(g.length, `${label}: rows`).toBe(want.length);
  for (let i = 0; i < g.length; i++)
    for (let j = 0; j < got.columns.length; j++) {
      if (!same(g[i][j], want[i][j], got.columns[j].type === "float64"))
        throw new Error(
          `${label}: row ${i} column ${got.names[j]}: got ${String(g[i][j])}, want ${String(want[i][j])}`,
        );
    }
}
