// Decodes the bridge's columnar JSON (resources/dask_bridge/basin_wire.py) into the
// JsTable form the native store takes, and writes requests to it (bridgeJson).
import { randomUUID } from "node:crypto";
import { BasinError } from "../../common/errors.js";
import type { DType } from "../../common/types.js";
import type { JsColumn, JsTable } from "../../native/addon.js";

export interface WireColumn {
  type: DType;
  /** int64 values sent as decimal strings (beyond 2^53). */
  big?: boolean;
  values: (number | string | boolean | null)[];
}

export interface WireTable {
  rows: number;
  names: string[];
  columns: WireColumn[];
}

const SPECIAL: Record<string, number> = { NaN: NaN, Infinity: Infinity, "-Infinity": -Infinity };

function decodeColumn(c: WireColumn, rows: number): JsColumn {
  if (c.values.length !== rows)
    throw new BasinError("BASIN_INTERNAL", `the Dask bridge sent ${c.values.length} values for ${rows} rows`);
  let validity: Uint8Array | null = null;
  if (c.values.some((v) => v === null)) validity = Uint8Array.from(c.values, (v) => (v === null ? 0 : 1));
  switch (c.type) {
    case "int64":
    case "timestamp":
      return {
        type: c.type,
        validity,
        values: BigInt64Array.from(c.values, (v) => (v === null ? 0n : BigInt(v as number | string))),
      };
    case "float64":
      return {
        type: c.type,
        validity,
        values: Float64Array.from(c.values, (v) =>
          v === null ? 0 : typeof v === "string" ? SPECIAL[v] : (v as number),
        ),
      };
    case "date":
      return { type: c.type, validity, values: Int32Array.from(c.values, (v) => (v === null ? 0 : (v as number))) };
    case "bool":
      return { type: c.type, validity, values: Uint8Array.from(c.values, (v) => (v === true ? 1 : 0)) };
    case "string":
      return { type: c.type, validity, values: c.values as (string | null)[] };
  }
}

/**
 * @example
 * const handle = native().tableFromJs(decodeWireTable(reply.table));
 */
export function decodeWireTable(t: WireTable): JsTable {
  return { rows: t.rows, names: t.names, columns: t.columns.map((c) => decodeColumn(c, t.rows)) };
}

/** Marks a number JSON cannot write, until the text is finished (a string no plan holds: it has a NUL and a random part). */
const FLOAT_MARK = `\u0000basin-float-${randomUUID()}:`;
const MARKED = new RegExp(`"${escapeRegExp(JSON.stringify(FLOAT_MARK).slice(1, -1))}(NaN|-?Infinity|-0\\.0)"`, "g");

function escapeRegExp(s: string): string {
  return s.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&");
}

/**
 * A request to the bridge as one line of JSON, with NaN, ±Infinity and -0 kept as
 * the NaN / Infinity / -0.0 tokens Python's json reads (JSON.stringify makes null of
 * the first three and 0 of -0: a fromColumns NaN or lit(Infinity) became a null on Dask).
 *
 * @example
 * bridgeJson({ value: NaN }) // '{"value":NaN}'
 */
export function bridgeJson(value: unknown): string {
  let marked = false;
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v !== "number" || (Number.isFinite(v) && !Object.is(v, -0))) return v;
    marked = true;
    return (
      FLOAT_MARK + (Number.isNaN(v) ? "NaN" : v === Infinity ? "Infinity" : v === -Infinity ? "-Infinity" : "-0.0")
    );
  });
  return marked ? text.replace(MARKED, "$1") : text;
}
