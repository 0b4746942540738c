// Small helpers for readers that build native tables from JS columns.
import type { DType, Field } from "../common/types.js";
import { BasinError } from "../common/errors.js";
import { decodeStrings, native, type Handle, type JsColumn, type JsStrings, type JsTable } from "../native/addon.js";

function emptyValues(t: DType): JsColumn["values"] {
  switch (t) {
    case "int64":
    case "timestamp":
      return new BigInt64Array(0);
    case "float64":
      return new Float64Array(0);
    case "bool":
      return new Uint8Array(0);
    case "date":
      return new Int32Array(0);
    case "string":
      return [];
  }
}

/**
 * A table with no rows and the given columns.
 *
 * @example
 * native().tableFromJs(emptyTable([{ name: "a", type: "int64" }]))
 */
export function emptyTable(schema: Field[]): JsTable {
  return {
    rows: 0,
    names: schema.map((f) => f.name),
    columns: schema.map((f) => ({ type: f.type, values: emptyValues(f.type), validity: null })),
  };
}

/** Puts JS tables into the store as one table (concatenated in order); none gives an empty one. */
export function tablesToHandle(parts: JsTable[], schema: Field[]): Handle {
  const addon = native();
  if (parts.length === 0) return addon.tableFromJs(emptyTable(schema));
  if (parts.length === 1) return addon.tableFromJs(parts[0]);
  const handles: Handle[] = [];
  try {
    for (const p of parts) handles.push(addon.tableFromJs(p));
    return addon.concat(handles);
  } finally {
    for (const h of handles) addon.release(h);
  }
}

type TypedValues = BigInt64Array | Float64Array | Uint8Array | Int32Array;

function concatTyped(parts: TypedValues[]): TypedValues {
  const n = parts.reduce((s, p) => s + p.length, 0);
  const out = new (parts[0].constructor as new (n: number) => TypedValues)(n);
  let at = 0;
  for (const p of parts) {
    (out as Uint8Array).set(p as Uint8Array, at);
    at += p.length;
  }
  return out;
}

function concatStrings(parts: JsStrings[]): JsStrings {
  const chars = concatTyped(parts.map((p) => p.chars)) as Uint8Array;
  const offsets = new Float64Array(parts.reduce((s, p) => s + p.offsets.length - 1, 0) + 1);
  let row = 0,
    base = 0;
  for (const p of parts) {
    for (let i = 1; i < p.offsets.length; i++) offsets[row + i] = base + p.offsets[i];
    row += p.offsets.length - 1;
    base += p.chars.length;
  }
  return { offsets, chars, ascii: parts.every((p) => p.ascii), binary: parts.some((p) => p.binary) };
}

function concatColumn(cols: JsColumn[], rows: number[]): JsColumn {
  const values = cols.map((c) => c.values);
  const joined: JsColumn["values"] = values.every((v) => Array.isArray(v))
    ? (values as (string | null)[][]).flat()
    : values.every((v) => !Array.isArray(v) && "offsets" in v)
      ? concatStrings(values as JsStrings[])
      : values.some((v) => Array.isArray(v) || "offsets" in v)
        ? cols.flatMap((c) => (Array.isArray(c.values) ? c.values : decodeStrings(c.values as JsStrings, c.validity)))
        : concatTyped(values as TypedValues[]);
  const validity = cols.some((c) => c.validity)
    ? (concatTyped(cols.map((c, i) => c.validity ?? new Uint8Array(rows[i]).fill(1))) as Uint8Array)
    : null;
  return { type: cols[0].type, values: joined, validity };
}

/**
 * The rows of same-schema JS tables (a result's partitions), one after another.
 *
 * @example
 * concatJsTables(refs.map((h) => native().tableToJs(h)))
 */
export function concatJsTables(parts: JsTable[]): JsTable {
  if (parts.length === 1) return parts[0];
  if (parts.length === 0) throw new BasinError("BASIN_INTERNAL", "a result with no partitions");
  return {
    rows: parts.reduce((n, p) => n + p.rows, 0),
    names: parts[0].names,
    columns: parts[0].columns.map((_, j) => concatJsColumns(parts, j)),
  };
}

/**
 * Column `j` of same-schema JS tables, one after another.
 *
 * @example
 * concatJsColumns(parts, 0).values
 */
export function concatJsColumns(parts: JsTable[], j: number): JsColumn {
  if (parts.length === 1) return parts[0].columns[j];
  return concatColumn(
    parts.map((p) => p.columns[j]),
    parts.map((p) => p.rows),
  );
}
