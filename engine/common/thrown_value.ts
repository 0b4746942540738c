// What user code threw when it is not an Error: shown as the user wrote it.

/**
 * A thrown value that is not an Error, as text: JSON where it can be (a string quoted,
 * an object's fields), else its own text; cut to 200 characters.
 *
 * @example
 * thrownValue({ bad: 2 }) // '{"bad":2}'
 */
export function thrownValue(v: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(v) ?? String(v); // undefined, a function or a symbol: their own text
  } catch {
    text = typeof v === "bigint" ? `${v}n` : Object.prototype.toString.call(v); // cyclic, or a BigInt inside
  }
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
