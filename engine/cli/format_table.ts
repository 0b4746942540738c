import type { Table, Value } from "../run/table.js";

/** Text of one cell as the CLI shows it. */
export function formatValue(v: Value): string {
  if (v === null) return "null";
  if (v instanceof Date) {
    // Past JS Date's ±275,760 years (an int64 timestamp can be): said, not thrown.
    if (Number.isNaN(v.getTime())) return "(beyond JS dates)";
    const iso = v.toISOString();
    // Years past 9999 take more digits ("+012000-01-01"): cut the time off the end, not at 10.
    return iso.endsWith("T00:00:00.000Z") ? iso.slice(0, -14) : iso.replace("T", " ").replace(/\.000Z$|Z$/, "");
  }
  if (typeof v === "number" && !Number.isInteger(v)) return String(Number(v.toPrecision(10)));
  return String(v);
}

// East Asian wide characters and emoji take two terminal columns.
const WIDE =
  /[\u1100-\u115F\u2E80-\uA4CF\uAC00-\uD7A3\uF900-\uFAFF\uFE30-\uFE4F\uFF00-\uFF60\uFFE0-\uFFE6\u{1F300}-\u{1F64F}\u{1F900}-\u{1F9FF}\u{20000}-\u{3FFFD}]/u;

/** Columns a string takes in a terminal. */
export function displayWidth(s: string): number {
  let w = 0;
  for (const ch of s) w += WIDE.test(ch) ? 2 : 1;
  return w;
}

/** Rows `basin run` prints of a result at most: its head and tail halves of these. */
export const MAX_PRINTED_ROWS = 20;

/** What formatTable reads of a table: only the rows it shows are read from `column`. */
export type PrintableTable = Pick<Table, "columnNames" | "numRows" | "schema" | "column">;

/**
 * An aligned text table; results over `maxRows` show their head and tail.
 *
 * @example
 * console.log(formatTable(await df.compute()));
 */
export function formatTable(t: PrintableTable, maxRows = MAX_PRINTED_ROWS): string {
  const names = t.columnNames;
  const half = Math.floor(maxRows / 2);
  const rowIdx =
    t.numRows <= maxRows
      ? [...Array(t.numRows).keys()]
      : [...Array(half).keys(), -1, ...Array.from({ length: half }, (_, i) => t.numRows - half + i)];
  const cols = names.map((n) => t.column(n));
  const numeric = t.schema.map((f) => f.type === "int64" || f.type === "float64");
  const cells = rowIdx.map((r) => (r < 0 ? names.map(() => "…") : cols.map((c) => formatValue(c[r]))));
  const header = [names, t.schema.map((f) => f.type)];
  const widths = names.map((_, c) => Math.max(...[...header, ...cells].map((row) => displayWidth(row[c]))));
  const pad = (s: string, c: number) => {
    const fill = " ".repeat(widths[c] - displayWidth(s));
    return numeric[c] ? fill + s : s + fill;
  };
  const line = (row: string[]) =>
    row
      .map((s, c) => pad(s, c))
      .join("  ")
      .trimEnd();
  const rule = widths.map((w) => "─".repeat(w)).join("  ");
  const body = [line(header[0]), line(header[1]), rule, ...cells.map(line)];
  body.push(`${t.numRows} row${t.numRows === 1 ? "" : "s"} × ${names.length} column${names.length === 1 ? "" : "s"}`);
  return body.join("\n");
}
