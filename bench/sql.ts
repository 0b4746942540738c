// Quoting for the SQL the bench builds for DuckDB.

/** A DuckDB identifier, quoted. */
export function quoteIdent(s: string): string {
  return `"${s.replaceAll('"', '""')}"`;
}

/** A DuckDB string literal. */
export function sqlString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}
