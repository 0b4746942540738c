// Quoting for the POSIX shell commands Basin sends over SSH and writes into batch scripts.

/**
 * A word for a POSIX shell, single-quoted.
 *
 * @example
 * shellQuote("it's") // 'it'\''s'
 */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
