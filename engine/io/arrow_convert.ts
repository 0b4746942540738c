// Arrow record batches ↔ Basin tables, column by column over typed arrays (no JS
// value per cell): the bridge for the Parquet and Arrow IPC readers and writers.
import type { Data, DataType, RecordBatch } from "apache-arrow";
import { arrowLib } from "./arrow_lib.js";
import { BasinError } from "../common/errors.js";
import type { DType, Field } from "../common/types.js";
import type { JsColumn, JsStrings, JsTable } from "../native/addon.js";

/**
 * The Basin type an Arrow type reads as, or why it cannot be read.
 *
 * @example
 * dtypeOfArrow(new Int32()) // "int64"
 */
export function dtypeOfArrow(t: DataType): DType | { unsupported: string } {
  const { DataType } = arrowLib();
  // Parameters outside the format's enums come from damaged metadata: never guess a width.
  if (DataType.isInt(t) && ![8, 16, 32, 64].includes(t.bitWidth)) return { unsupported: `${t.bitWidth}-bit integer` };
  if (DataType.isFloat(t) && ![0, 1, 2].includes(t.precision)) return { unsupported: `float precision ${t.precision}` };
  if (DataType.isDate(t) && ![0, 1].includes(t.unit)) return { unsupported: `date unit ${t.unit}` };
  if (DataType.isTimestamp(t) && ![0, 1, 2, 3].includes(t.unit)) return { unsupported: `timestamp unit ${t.unit}` };
  if (DataType.isInt(t)) return t.bitWidth === 64 && !t.isSigned ? { unsupported: "unsigned 64-bit integer" } : "int64";
  if (DataType.isFloat(t)) return "float64";
  if (DataType.isBool(t)) return "bool";
  if (DataType.isUtf8(t) || DataType.isLargeUtf8(t) || DataType.isNull(t)) return "string";
  if (DataType.isDate(t)) return "date";
  if (DataType.isTimestamp(t)) return "timestamp";
  if (DataType.isDictionary(t) && dtypeOfArrow(t.dictionary) === "string") return "string";
  return { unsupported: String(t) };
}

/** A column of a file that contradicts itself (lengths, counts, keys). */
function corrupt(name: string, what: string): never {
  throw new BasinError("BASIN_IO", `column "${name}": ${what}; the file is corrupt or was written wrongly`);
}

/** The bitmap's bit for row i (after the data's offset), with its length checked by the caller. */
function bitsOf(bits: Uint8Array, offset: number, n: number, out: Uint8Array): number {
  let ones = 0;
  for (let i = 0; i < n; i++) {
    const j = offset + i;
    out[i] = (bits[j >> 3] >> (j & 7)) & 1;
    ones += out[i];
  }
  return ones;
}

/** Bytes per row → one validity byte per row (Basin's layout), or null when all valid. */
function validityOf(d: Data, name: string): Uint8Array | null {
  const { Type } = arrowLib();
  if (d.nullCount === 0) {
    // No nulls claimed: a bitmap that has some contradicts the count (damage).
    const bits = d.nullBitmap;
    if (bits && bits.length * 8 >= d.offset + d.length && d.typeId !== Type.Null) {
      const valid = bitsOf(bits, d.offset, d.length, new Uint8Array(d.length));
      if (valid !== d.length) corrupt(name, `it counts no nulls but its validity bitmap has ${d.length - valid}`);
    }
    return null;
  }
  const out = new Uint8Array(d.length);
  if (d.typeId === Type.Null) return out;
  const bits = d.nullBitmap;
  if (!bits || bits.length * 8 < d.offset + d.length)
    corrupt(name, `it counts ${d.nullCount} nulls in ${d.length} rows but its validity bitmap is missing or short`);
  const valid = bitsOf(bits, d.offset, d.length, out);
  if (d.nullCount > 0 && d.length - valid !== d.nullCount)
    corrupt(name, `it counts ${d.nullCount} nulls but its validity bitmap has ${d.length - valid}`);
  return out;
}

const SCALE_TO_MICROS: Record<number, bigint> = { 0: 1_000_000n, 1: 1000n, 2: 1n };

function toBigInt64(values: ArrayLike<number | bigint>, n: number): BigInt64Array {
  if (values instanceof BigInt64Array) return values.subarray(0, n);
  const out = new BigInt64Array(n);
  for (let i = 0; i < n; i++) out[i] = BigInt(values[i]);
  return out;
}

/** Utf8/LargeUtf8 data as bulk strings; the addon checks the offsets and the UTF-8. */
function stringsOf(d: Data, name: string): JsStrings {
  const off = d.valueOffsets as Int32Array | BigInt64Array | undefined;
  const n = d.length;
  if (!off || off.length < n + 1) corrupt(name, `it has ${off?.length ?? 0} string offsets for ${n} rows`);
  const chars = (d.values as Uint8Array | undefined) ?? new Uint8Array(0);
  const base = Number(off[0]);
  const offsets = new Float64Array(n + 1);
  for (let i = 0; i <= n; i++) {
    offsets[i] = Number(off[i]) - base;
    if (i > 0 && !(offsets[i] >= offsets[i - 1])) corrupt(name, `its string offsets go backwards at row ${i}`);
  }
  if (!(base >= 0 && base + offsets[n] <= chars.length))
    corrupt(name, `its string offsets reach past the ${chars.length} bytes of its text`);
  return { offsets, chars: chars.subarray(base), ascii: false };
}

/** Dictionary-encoded strings, each key checked against the dictionary, gathered as bulk strings. */
function dictionaryStrings(d: Data, validity: Uint8Array | null, name: string): JsStrings {
  const { Type } = arrowLib();
  const dict = d.dictionary?.data[0] as Data | undefined;
  if (!dict || (dict.typeId !== Type.Utf8 && dict.typeId !== Type.LargeUtf8))
    corrupt(name, "its dictionary is missing or not text");
  const words = stringsOf(dict, name);
  const keys = d.values as ArrayLike<number | bigint> | undefined;
  const n = d.length;
  if (!keys || keys.length < n) corrupt(name, `it has ${keys?.length ?? 0} dictionary keys for ${n} rows`);
  const offsets = new Float64Array(n + 1);
  const picked: number[] = new Array<number>(n).fill(-1);
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    // Keys are checked in null slots too (writers put 0 there): a bad one is damage.
    const k = Number(keys[i]);
    if (!(k >= 0 && k < dict.length)) corrupt(name, `row ${i + 1}'s dictionary key ${k} is not below ${dict.length}`);
    if (validity && !validity[i]) {
      offsets[i + 1] = bytes;
      continue;
    }
    const len = words.offsets[k + 1] - words.offsets[k];
    if (!(len >= 0)) corrupt(name, `its dictionary's string offsets are out of order`);
    picked[i] = k;
    bytes += len;
    offsets[i + 1] = bytes;
  }
  const chars = new Uint8Array(bytes);
  for (let i = 0; i < n; i++) {
    const k = picked[i];
    if (k >= 0) chars.set(words.chars.subarray(words.offsets[k], words.offsets[k + 1]), offsets[i]);
  }
  return { offsets, chars, ascii: false };
}

function column(d: Data, type: DType, name: string): JsColumn {
  const { Type } = arrowLib();
  const n = d.length;
  const validity = validityOf(d, name);
  const bad = (): never => {
    throw new BasinError(
      "BASIN_IO",
      `column "${name}" holds Arrow ${String(d.type)} values, which do not read as ${type}`,
    );
  };
  if (d.typeId === Type.Null) {
    const values =
      type === "string"
        ? { offsets: new Float64Array(n + 1), chars: new Uint8Array(0), ascii: true }
        : type === "date"
          ? new Int32Array(n)
          : type === "float64"
            ? new Float64Array(n)
            : type === "bool"
              ? new Uint8Array(n)
              : new BigInt64Array(n);
    return { type, values, validity };
  }
  const fixedWidth = d.typeId !== Type.Bool && d.typeId !== Type.Utf8 && d.typeId !== Type.LargeUtf8;
  if (fixedWidth && ((d.values as ArrayLike<unknown> | undefined)?.length ?? 0) < n)
    corrupt(name, `it has fewer values than its ${n} rows`);
  switch (type) {
    case "int64":
      if (d.typeId !== Type.Int) bad();
      return { type, values: toBigInt64(d.values as ArrayLike<number | bigint>, n), validity };
    case "float64": {
      if (d.typeId !== Type.Float && d.typeId !== Type.Int) bad();
      const v = d.values as ArrayLike<number | bigint>;
      if (v instanceof Float64Array) return { type, values: v.subarray(0, n), validity };
      // Half floats arrive as raw uint16 bits: read them through the vector.
      const half = d.typeId === Type.Float && (d.type as unknown as { precision: number }).precision === 0;
      const out = new Float64Array(n);
      for (let i = 0; i < n; i++) out[i] = half ? halfToFloat(Number(v[i])) : Number(v[i]);
      return { type, values: out, validity };
    }
    case "bool": {
      if (d.typeId !== Type.Bool) bad();
      const bits = d.values as Uint8Array | undefined;
      if (!bits || bits.length * 8 < d.offset + n) corrupt(name, `its bitmap of values is shorter than its ${n} rows`);
      const out = new Uint8Array(n);
      bitsOf(bits, d.offset, n, out);
      return { type, values: out, validity };
    }
    case "string": {
      if (d.typeId === Type.Utf8 || d.typeId === Type.LargeUtf8) return { type, values: stringsOf(d, name), validity };
      if (d.typeId !== Type.Dictionary) bad();
      return { type, values: dictionaryStrings(d, validity, name), validity };
    }
    case "date": {
      if (d.typeId !== Type.Date) bad();
      const v = d.values as Int32Array | BigInt64Array;
      if (v instanceof Int32Array) return { type, values: v.subarray(0, n), validity };
      const out = new Int32Array(n); // date64: milliseconds
      for (let i = 0; i < n; i++) out[i] = Math.floor(Number(v[i]) / 86_400_000);
      return { type, values: out, validity };
    }
    case "timestamp": {
      if (d.typeId !== Type.Timestamp) bad();
      const unit = (d.type as unknown as { unit: number }).unit;
      const v = toBigInt64(d.values as ArrayLike<number | bigint>, n);
      if (unit === 2) return { type, values: v, validity };
      const out = new BigInt64Array(n);
      if (unit === 3) {
        // Nanoseconds to microseconds, rounding towards minus infinity.
        for (let i = 0; i < n; i++) out[i] = v[i] >= 0n ? v[i] / 1000n : -((-v[i] + 999n) / 1000n);
      } else {
        const k = SCALE_TO_MICROS[unit];
        for (let i = 0; i < n; i++) out[i] = v[i] * k;
      }
      return { type, values: out, validity };
    }
  }
}

function halfToFloat(h: number): number {
  const s = h & 0x8000 ? -1 : 1,
    e = (h >> 10) & 0x1f,
    f = h & 0x3ff;
  if (e === 0) return s * 2 ** -14 * (f / 1024);
  if (e === 31) return f ? NaN : s * Infinity;
  return s * 2 ** (e - 15) * (1 + f / 1024);
}

/**
 * A record batch as a Basin table with the columns of `schema`, read by name.
 *
 * @example
 * native().tableFromJs(batchToJs(batch, [{ name: "a", type: "int64" }]))
 */
export function batchToJs(batch: RecordBatch, schema: Field[]): JsTable {
  const columns = schema.map((f) => {
    const v = batch.getChild(f.name);
    if (!v) throw new BasinError("BASIN_IO", `column "${f.name}" is missing from the data`);
    const d = v.data[0] as Data;
    return column(d, f.type, f.name);
  });
  return { rows: batch.numRows, names: schema.map((f) => f.name), columns };
}

/** The Arrow type Basin writes for a column type. */
export function arrowTypeOf(t: DType, largeStrings = false): DataType {
  const { Int64, Float64, Bool, Utf8, LargeUtf8, DateDay, TimestampMicrosecond } = arrowLib();
  switch (t) {
    case "int64":
      return new Int64();
    case "float64":
      return new Float64();
    case "bool":
      return new Bool();
    case "string":
      return largeStrings ? new LargeUtf8() : new Utf8();
    case "date":
      return new DateDay();
    case "timestamp":
      return new TimestampMicrosecond();
  }
}

function packBits(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(((bytes.length + 63) >> 6) << 3);
  for (let i = 0; i < bytes.length; i++) if (bytes[i]) out[i >> 3] |= 1 << (i & 7);
  return out;
}

function arrowData(c: JsColumn, rows: number): Data {
  const { makeData, Int64, Float64, Bool, Utf8, LargeUtf8, DateDay, TimestampMicrosecond } = arrowLib();
  const nullBitmap = c.validity ? packBits(c.validity) : undefined;
  const nullCount = c.validity ? c.validity.reduce((n, v) => n + (v ? 0 : 1), 0) : 0;
  const base = { length: rows, nullCount, nullBitmap };
  switch (c.type) {
    case "int64":
      return makeData({ ...base, type: new Int64(), data: c.values as BigInt64Array });
    case "float64":
      return makeData({ ...base, type: new Float64(), data: c.values as Float64Array });
    case "bool":
      return makeData({ ...base, type: new Bool(), data: packBits(c.values as Uint8Array) });
    case "date":
      return makeData({ ...base, type: new DateDay(), data: c.values as Int32Array });
    case "timestamp":
      return makeData({ ...base, type: new TimestampMicrosecond(), data: c.values as BigInt64Array });
    case "string": {
      const s = c.values as JsStrings;
      const bytes = s.offsets[rows] ?? 0;
      if (bytes < 2 ** 31)
        return makeData({ ...base, type: new Utf8(), data: s.chars, valueOffsets: Int32Array.from(s.offsets) });
      return makeData({
        ...base,
        type: new LargeUtf8(),
        data: s.chars,
        valueOffsets: BigInt64Array.from(s.offsets, (x) => BigInt(x)),
      });
    }
  }
}

/**
 * A Basin table (as `tableToJs` gives it) as an Arrow record batch.
 *
 * @example
 * tableToIPC(new arrow.Table([jsToBatch(native().tableToJs(h))]))
 */
export function jsToBatch(t: JsTable): RecordBatch {
  const { makeData, Field: ArrowField, Schema: ArrowSchema, Struct, RecordBatch } = arrowLib();
  const data = t.columns.map((c) => arrowData(c, t.rows));
  const fields = t.names.map((name, i) => new ArrowField(name, data[i].type, true));
  const schema = new ArrowSchema(fields);
  const struct = makeData({ type: new Struct(fields), length: t.rows, nullCount: 0, children: data });
  return new RecordBatch(schema, struct);
}
