// Small helpers for readers that build native tables from JS columns.
import type { DType, Field } from "../common/types.js";
import { native, type Handle, type JsColumn, type JsTable } from "../native/addon.js";

function emptyValues(t: DType): JsColumn["values"] {
  switch (t) {
    case "int64":
    case "timestamp": return new BigInt64Array(0);
    case "float64": return new Float64Array(0);
    case "bool": return new Uint8Array(0);
    case "date": return new Int32Array(0);
    case "string": return [];
  }
}

/**
 * A table with no rows and the given columns.
 *
 * @example
 * native().tableFromJs(emptyTable([{ name: "a", type: "int64" }]))
 */
export function emptyTable(schema: Field[]): JsTable {
  return { rows: 0, names: schema.map((f) => f.name), columns: schema.map((f) => ({ type: f.type, values: emptyValues(f.type), validity: null })) };
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
