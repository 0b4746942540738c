/**
 * Column types of Basin. The numbers are the native DType codes (native/src/store/column.h).
 *
 * @example
 * const t: DType = "float64";
 */
export type DType = "int64" | "float64" | "bool" | "string" | "date" | "timestamp";

export const DTYPES: readonly DType[] = ["int64", "float64", "bool", "string", "date", "timestamp"];

export function isDType(s: string): s is DType {
  return (DTYPES as readonly string[]).includes(s);
}

export function isNumeric(t: DType): boolean {
  return t === "int64" || t === "float64";
}

/** A named, typed column of a schema. */
export interface Field {
  name: string;
  type: DType;
}

/** An ordered list of fields. */
export type Schema = readonly Field[];

/**
 * Whether a JS number is a whole number int64 holds (1e19 is not: a double).
 *
 * @example
 * fitsInt64(2 ** 62) // true
 */
export function fitsInt64(v: number): boolean {
  return Number.isInteger(v) && v >= -(2 ** 63) && v < 2 ** 63;
}
