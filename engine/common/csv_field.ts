/**
 * One CSV field with RFC 4180 quoting: quoted when it holds a quote, a comma or a
 * line break, quotes doubled.
 *
 * @example
 * csvField('say "hi", world') // "\"say \"\"hi\"\", world\""
 */
export function csvField(s: string): string {
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
