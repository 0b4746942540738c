// Result cells in their wire form (engine/common/rpc.ts WireValue): JSON-safe,
// exact for int64, ISO text for dates and timestamps.
import type { WireValue } from "../common/rpc.js";
import { decodeStrings, type JsColumn, type JsStrings, type JsTable } from "../native/addon.js";
import { floorMillis } from "../common/duration.js";

const DAY_MS = 86_400_000;

function int64(b: bigint): WireValue {
  return b >= -9007199254740991n && b <= 9007199254740991n ? Number(b) : b.toString();
}

/** An ISO timestamp with microseconds when they are not zero. */
export function isoTimestamp(micros: bigint): string {
  const ms = floorMillis(micros);
  const iso = new Date(Number(ms)).toISOString();
  const us = Number(micros - ms * 1000n);
  return us === 0 ? iso : `${iso.slice(0, -1)}${String(us).padStart(3, "0")}Z`;
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
        out[i] = new Date((c.values as Int32Array)[i] * DAY_MS).toISOString().slice(0, 10);
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
