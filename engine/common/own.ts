// Records keyed by column or key names: "constructor", "toString" and "__proto__" are
// names like any other, so a lookup must find only the record's own entries (a plain
// `record[name]` finds what every object inherits: a function, or Object.prototype).

/**
 * The record's own value for `key`, or undefined.
 *
 * @example
 * own({ a: 1 }, "constructor"); // undefined, not Object
 */
export function own<T>(record: Readonly<Record<string, T>> | undefined | null, key: string): T | undefined {
  return record != null && Object.hasOwn(record, key) ? record[key] : undefined;
}

/**
 * Sets `record[key]` as an own, enumerable entry, "__proto__" included (a plain
 * assignment of that one replaces the record's prototype instead).
 *
 * @example
 * const row = {}; setOwn(row, "__proto__", 1); Object.keys(row); // ["__proto__"]
 */
export function setOwn<T>(record: Record<string, T>, key: string, value: T): void {
  if (key === "__proto__")
    Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
  else record[key] = value;
}
