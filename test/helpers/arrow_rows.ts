// Rows of an apache-arrow table in the shape DuckDB's rows take in the oracle
// (test/helpers/oracle.ts): dates as Date, timestamps as epoch microseconds (compare
// them with DuckDB's `epoch_us(ts)`), everything else as apache-arrow gives it.
import type { Table } from "apache-arrow";

/**
 * The rows of columns `names` of `t`; the columns named in `micros` are timestamps.
 *
 * @example
 * expectSameRows(arrowRows(t, ["i", "ts"], ["ts"]), await duck.rows("SELECT i, epoch_us(ts) FROM e"), "arrow");
 */
export function arrowRows(t: Table, names: string[], micros: string[] = ["ts"], dates: string[] = ["d"]): unknown[][] {
  const cols = names.map((n) => t.getChild(n)!);
  return Array.from({ length: t.numRows }, (_, r) =>
    cols.map((c, j) => {
      const v = c.get(r) as unknown;
      if (dates.includes(names[j]) && typeof v === "number") return new Date(v);
      if (micros.includes(names[j]) && typeof v === "bigint") return Number(v);
      if (micros.includes(names[j]) && typeof v === "number") return Math.round(v * 1000); // ms with a fraction
      return v;
    }),
  );
}
