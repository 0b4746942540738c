// Result cells in their wire form (engine/common/rpc.ts WireValue): JSON-safe,
// exact for int64, ISO text for dates and timestamps.
import type { WireValue } from "../common/rpc.js";
import { decodeStrings, type JsColumn, type JsStrings, type JsTable } from "../native/addon.js";
import { dateText, timestampParts } from "../common/civil_text.js";

function int64(b: bigint): WireValue {
  return b >= -9007199254740991n && b <= 9007199254740991n ? Number(b) : b.toString();
}

/** An ISO timestamp ("…T…Z", milliseconds, and microseconds when there are any), for any int64 microseconds. */
export function isoTimestamp(micros: bigint): string {
  const { date, time, micros: us } = timestampParts(micros);
  const frac = String(us).padStart(6, "0");
  return `${date}T${time}.${us % 1000 === 0 ? frac.slice(0, 3) : frac}Z`;
}

function column(c: JsColumn, rows: number): WireValue[] {
  if (c.type === "string") return decodeStrings(c.values as JsStrings, c.validity);
  const out = new Array<WireValue>(rows);
  for (let i = 0; i < rows; i++) {
    if (c.validity && !c.validity[i]) {
      out[i] = null;
      continue;
    }
    switch (c.type) {
      case "int64":
        out[i] = int64((c.values as BigInt64Array)[i]);
        break;
      case "float64": {
        const v = (c.values as Float64Array)[i];
        out[i] = Number.isFinite(v) ? v : String(v); // JSON has no NaN or Infinity
        break;
      }
      case "bool":
        out[i] = (c.values as Uint8Array)[i] !== 0;
        break;
      case "date":
        out[i] = dateText((c.values as Int32Array)[i]);
        break;
      case "timestamp":
        out[i] = isoTimestamp((c.values as BigInt64Array)[i]);
        break;
    }
  }
  return out;
}

/**
 * Column-major wire values of a table copied out of the store.
 *
 * @example
 * toWire(native().tableToJs(h)) // [[1, 2], ["a", null]]
 */
export function toWire(t: JsTable): WireValue[][] {
  return t.columns.map((c) => column(c, t.rows));
}
