// Differential cases for scalar expressions: the same in-memory columns go to Basin
// (fromColumns, with empty and one-row partitions) and to a DuckDB table `t`; every
// case must match DuckDB and give the same rows on 1 and 4 workers.
import { afterAll, beforeAll, describe, it } from "vitest";
import { fromColumns, type DataFrame, type DType, type InputValue } from "../../engine/api/index.js";
import { Duck } from "./oracle.js";
import { expectOnBoth, twoClusters } from "./clusters.js";

export interface ExprCase {
  name: string;
  basin: (t: DataFrame) => DataFrame;
  sql: string;
}

const SQL_TYPES: Record<DType, string> = {
  int64: "BIGINT",
  float64: "DOUBLE",
  bool: "BOOLEAN",
  string: "VARCHAR",
  date: "DATE",
  timestamp: "TIMESTAMP",
};

function sqlLiteral(v: InputValue, type: DType): string {
  if (v === null || v === undefined) return "NULL";
  if (type === "string") return `'${String(v).replaceAll("'", "''")}'`;
  if (typeof v === "number" && (!Number.isFinite(v) || Object.is(v, -0)))
    return `'${Object.is(v, -0) ? "-0.0" : v}'::DOUBLE`; // NaN, ±Infinity, -0
  if (v instanceof Date)
    return type === "date" ? `DATE '${v.toISOString().slice(0, 10)}'` : `make_timestamp(${v.getTime() * 1000})`;
  return String(v);
}

/** CREATE TABLE `name` in DuckDB holding exactly these columns. */
export async function loadDuck(
  duck: Duck,
  name: string,
  cols: Record<string, InputValue[]>,
  types: Record<string, DType>,
): Promise<void> {
  const names = Object.keys(cols);
  await duck.run(`CREATE TABLE ${name} (${names.map((n) => `${n} ${SQL_TYPES[types[n]]}`).join(", ")})`);
  const rows = cols[names[0]].length;
  for (let lo = 0; lo < rows; lo += 500) {
    const values: string[] = [];
    for (let i = lo; i < Math.min(rows, lo + 500); i++)
      values.push(`(${names.map((n) => sqlLiteral(cols[n][i], types[n])).join(", ")})`);
    await duck.run(`INSERT INTO ${name} VALUES ${values.join(", ")}`);
  }
}

/**
 * Registers a describe block running `cases` over `cols` (every column's type given).
 *
 * @example
 * describeExprCases("strings", { s: ["a", null] }, { s: "string" }, [{ name: "len", basin: (t) => t.select(col("s").str.len()), sql: "SELECT length(s) FROM t" }]);
 */
export function describeExprCases(
  title: string,
  cols: Record<string, InputValue[]>,
  types: Record<string, DType>,
  cases: ExprCase[],
): void {
  let duck: Duck;
  const clusters = twoClusters();
  const rows = cols[Object.keys(cols)[0]].length;

  beforeAll(async () => {
    duck = await Duck.open();
    await loadDuck(duck, "t", cols, types);
  });

  afterAll(() => duck.close());

  describe(title, () => {
    it.each(cases)("$name matches DuckDB, with 1 and 4 workers alike", async (c) => {
      const frame = c.basin(fromColumns(cols, { partitions: [0, 1, rows - 4, 0, 1, 2, 0], types }));
      await expectOnBoth(clusters, frame, await duck.rows(c.sql), c.name);
    });
  });
}
