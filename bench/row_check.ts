/**
 * Every row of an answer compared with the reference's: both answers, written as
 * Parquet files by the systems that computed them, are read by a DuckDB instance made
 * for the comparison alone (no system's memory or threads outlive its own runs); both
 * are numbered in the check's order and joined row to row. Keys and non-float columns
 * must be equal, floats within `rtol` relative (NaN and null alike, as the digests
 * count them). At 1e8 rows this costs about what the sampled check costs (a sort of
 * each answer), and no row goes unseen.
 */
import { DuckDBInstance } from "@duckdb/node-api";
import type { ColumnDigest } from "./digest.js";
import { quoteIdent, sqlString } from "./sql.js";

/** A column as compared: floats (decimals too) as doubles with NaN as null, timestamps as microseconds (naive or UTC alike). */
function normalized(c: Pick<ColumnDigest, "name" | "type">): string {
  const q = quoteIdent(c.name);
  if (c.type === "float") return `CASE WHEN isnan(${q}::DOUBLE) THEN NULL ELSE ${q}::DOUBLE END AS ${q}`;
  if (c.type === "timestamp") return `epoch_us(${q}) AS ${q}`;
  return q;
}

/** SQL that is true where the reference's `r.c` and the answer's `o.c` disagree. */
function differs(c: Pick<ColumnDigest, "name" | "type">, keys: readonly string[], rtol: number): string {
  const r = `r.${quoteIdent(c.name)}`,
    o = `o.${quoteIdent(c.name)}`;
  if (c.type !== "float" || keys.includes(c.name)) return `(${r} IS DISTINCT FROM ${o})`;
  return (
    `((${r} IS NULL) <> (${o} IS NULL) OR (${r} IS NOT NULL AND ${r} <> ${o} AND ` +
    `(isinf(${r}) OR isinf(${o}) OR abs(${r} - ${o}) > ${rtol} * greatest(abs(${r}), abs(${o})) + 1e-12)))`
  );
}

/**
 * The first row where the answer in Parquet file `path` differs from the reference's in
 * Parquet file `reference` (both sorted by `order`, nulls first), as one line; null when
 * every row agrees. The caller has compared their column names, types and row counts.
 *
 * @example
 * await parquetRowDiff("/tmp/duckdb-q10.parquet", "/tmp/basin-q10.parquet", digest.columns, order, ["id1"], 1e-6)
 */
export async function parquetRowDiff(
  reference: string,
  path: string,
  columns: readonly Pick<ColumnDigest, "name" | "type">[],
  order: readonly string[],
  keys: readonly string[],
  rtol: number,
): Promise<string | null> {
  const sel = columns.map(normalized).join(", ");
  const by = order.map((c) => `${quoteIdent(c)} NULLS FIRST`).join(", ");
  // The row numbers' column: a name no answer column has.
  let rn = "__check_row";
  while (columns.some((c) => c.name === rn)) rn += "_";
  const side = (from: string) =>
    `SELECT *, row_number() OVER (ORDER BY ${by}) AS ${rn} FROM (SELECT ${sel} FROM ${from})`;
  const tests = columns.map((c) => differs(c, keys, rtol));
  // The differing columns by index (a name may hold a comma).
  const which = `concat_ws(',', ${columns.map((_, i) => `CASE WHEN ${tests[i]} THEN '${i}' END`).join(", ")})`;
  const values = columns
    .flatMap((c, i) => [`r.${quoteIdent(c.name)}::VARCHAR AS e${i}`, `o.${quoteIdent(c.name)}::VARCHAR AS a${i}`])
    .join(", ");
  const sql =
    `WITH r AS (${side(`read_parquet(${sqlString(reference)})`)}), o AS (${side(`read_parquet(${sqlString(path)})`)}) ` +
    `SELECT r.${rn} - 1 AS __row, ${which} AS __cols, ${values} FROM r JOIN o USING (${rn}) ` +
    `WHERE ${tests.join(" OR ")} ORDER BY r.${rn} LIMIT 1`;
  const instance = await DuckDBInstance.create(":memory:");
  let found: Record<string, unknown> | undefined;
  try {
    const conn = await instance.connect();
    try {
      found = (await conn.runAndReadAll(sql)).getRowObjectsJS()[0];
    } finally {
      conn.closeSync();
    }
  } finally {
    instance.closeSync();
  }
  if (!found) return null;
  const i = Number(String(found.__cols).split(",")[0]);
  return `row ${String(found.__row)} (in the check's order) column ${columns[i]!.name}: got ${String(found[`a${i}`])}, expected ${String(found[`e${i}`])}`;
}
