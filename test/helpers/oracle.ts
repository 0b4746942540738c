// DuckDB as the oracle for pipeline results: same data, same question, rows
// compared after a canonical sort, floats with a relative tolerance.
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import { expect } from "vitest";
import type { Table } from "../../engine/api/index.js";

export type Row = Record<string, unknown>;

/** Normalizes a cell: bigint → number, Date → epoch ms, everything else as is. */
function norm(v: unknown): unknown {
  if (typeof v === "bigint") return Number(v);
  if (v instanceof Date) return v.getTime();
  return v;
}

function sortKey(row: unknown[]): string {
  return JSON.stringify(row.map((v) => (typeof v === "number" && !Number.isInteger(v) ? Number(v.toPrecision(8)) : v)));
}

function canonical(rows: unknown[][]): unknown[][] {
  return rows.map((r) => r.map(norm)).sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0));
}

export function tableRows(t: Table): unknown[][] {
  const cols = t.columnNames.map((n) => t.column(n));
  return Array.from({ length: t.numRows }, (_, r) => cols.map((c) => c[r]));
}

function close(a: unknown, b: unknown): boolean {
  if (typeof a === "number" && typeof b === "number") {
    if (Number.isNaN(a) && Number.isNaN(b)) return true;
    return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
  }
  return a === b;
}

/**
 * Asserts two row sets are equal as multisets (order ignored unless `ordered`).
 *
 * @example
 * expectSameRows(tableRows(t), await duck.rows("SELECT ..."), "q1");
 */
export function expectSameRows(actual: unknown[][], expected: unknown[][], label: string, ordered = false): void {
  const a = ordered ? actual.map((r) => r.map(norm)) : canonical(actual);
  const e = ordered ? expected.map((r) => r.map(norm)) : canonical(expected);
  expect(a.length, `${label}: row count`).toBe(e.length);
  for (let i = 0; i < a.length; i++) {
    const ok = a[i].length === e[i].length && a[i].every((v, j) => close(v, e[i][j]));
    if (!ok) expect(a[i], `${label}: row ${i}`).toEqual(e[i]);
  }
}

export class Duck {
  private constructor(private readonly conn: DuckDBConnection) {}

  static async open(): Promise<Duck> {
    const db = await DuckDBInstance.create(":memory:");
    return new Duck(await db.connect());
  }

  async run(sql: string): Promise<void> {
    await this.conn.run(sql);
  }

  /** Rows as arrays in column order. */
  async rows(sql: string): Promise<unknown[][]> {
    const r = await this.conn.runAndReadAll(sql);
    return r.getRowObjectsJS().map((o) => Object.values(o));
  }

  close(): void {
    this.conn.closeSync();
  }
}
