// The pages of a Parquet column chunk, walked and checked before the decoder sees
// them: the decoder (parquet-wasm) trusts page sizes and value counts, so a damaged
// header could read another page's bytes as values. Every header must decode, every
// page must fit the chunk and end where the next begins, uncompressed pages must be as
// long as they say, and the data pages must hold the chunk's number of values.
import { decodeStructAt, fieldBool, fieldInt, fieldBig, fieldStruct, ThriftError, type TStruct } from "./thrift.js";

const DATA_PAGE = 0,
  DICTIONARY_PAGE = 2,
  DATA_PAGE_V2 = 3;
const UNCOMPRESSED = 0,
  SNAPPY = 1;

/**
 * A raw Snappy block, decompressed (or, with `measure`, only its tags walked), or
 * null when the tags do not add up to the length it starts with: Snappy has no
 * checksum, and the decoder does not insist on that length.
 */
function snappy(b: Uint8Array, measure: boolean): Uint8Array | number | null {
  let at = 0,
    want = 0;
  for (let shift = 0; ; shift += 7) {
    if (at >= b.length || shift > 28) return null;
    const x = b[at++];
    want += (x & 0x7f) * 2 ** shift;
    if (!(x & 0x80)) break;
  }
  const out = measure ? undefined : new Uint8Array(want);
  let n = 0;
  while (at < b.length) {
    const tag = b[at++];
    let len: number;
    if ((tag & 3) === 0) {
      len = tag >> 2;
      if (len >= 60) {
        const extra = len - 59;
        if (at + extra > b.length) return null;
        len = 0;
        for (let i = 0; i < extra; i++) len += b[at + i] * 2 ** (8 * i);
        at += extra;
      }
      len += 1;
      if (at + len > b.length || n + len > want) return null;
      out?.set(b.subarray(at, at + len), n);
      at += len;
    } else {
      const offsetBytes = [0, 1, 2, 4][tag & 3];
      len = (tag & 3) === 1 ? ((tag >> 2) & 7) + 4 : (tag >> 2) + 1;
      if (at + offsetBytes > b.length) return null;
      let offset = (tag & 3) === 1 ? (tag >> 5) << 8 : 0;
      for (let i = 0; i < offsetBytes; i++) offset += b[at + i] * 2 ** (8 * i);
      at += offsetBytes;
      if (offset === 0 || offset > n || n + len > want) return null; // a copy from before the start
      if (out) for (let i = 0; i < len; i++) out[n + i] = out[n - offset + i];
    }
    n += len;
  }
  if (n !== want) return null;
  return out ?? want;
}

/** A flat column's shape, for checking what its data pages hold. */
export interface PageColumn {
  /** The physical type (parquet.thrift `Type`: 0 BOOLEAN … 7 FIXED_LEN_BYTE_ARRAY). */
  physical: number;
  /** OPTIONAL (definition levels of bit width 1) rather than REQUIRED. */
  optional: boolean;
}

const PLAIN = 0,
  PLAIN_DICTIONARY = 2,
  RLE_DICTIONARY = 8;
const WIDTH: Record<number, number> = { 1: 4, 2: 8, 3: 12, 4: 4, 5: 8 };

/**
 * Walks an RLE/bit-packed hybrid run of `count` values of `bits` bits in b[at..end):
 * calls `each(value, times)` and returns where it ended, or -1 when the runs do not
 * fit (a bit-packed group's padding past `count` is allowed).
 */
function hybrid(
  b: Uint8Array,
  at: number,
  end: number,
  bits: number,
  count: number,
  each: (v: number, n: number) => void,
): number {
  const valueBytes = (bits + 7) >> 3;
  let seen = 0;
  while (seen < count) {
    let h = 0;
    for (let shift = 0; ; shift += 7) {
      if (at >= end || shift > 28) return -1;
      const x = b[at++];
      h += (x & 0x7f) * 2 ** shift;
      if (!(x & 0x80)) break;
    }
    if (h % 2 === 1) {
      const groups = (h - 1) / 2;
      const bytes = groups * bits;
      if (groups === 0 || at + bytes > end) return -1;
      for (let i = 0; i < groups * 8 && seen + i < count; i++) {
        let v = 0;
        for (let k = 0; k < bits; k++) {
          const bit = i * bits + k;
          v |= ((b[at + (bit >> 3)] >> (bit & 7)) & 1) << k;
        }
        each(v >>> 0, 1);
      }
      at += bytes;
      seen += groups * 8;
    } else {
      const n = h / 2;
      if (n === 0 || at + valueBytes > end) return -1;
      let v = 0;
      for (let k = 0; k < valueBytes; k++) v += b[at + k] * 2 ** (8 * k);
      at += valueBytes;
      each(v, Math.min(n, count - seen));
      seen += n;
    }
  }
  return at;
}

/** Why a V1 data page's levels and values contradict its header, or null. */
function damagedValues(
  page: Uint8Array,
  n: number,
  encoding: number,
  col: PageColumn,
  dictionary: number,
): string | null {
  let at = 0,
    present = n;
  if (col.optional) {
    if (page.length < 4) return "a data page has no definition levels";
    const len = new DataView(page.buffer, page.byteOffset).getUint32(0, true);
    if (4 + len > page.length) return "a data page's definition levels run past the page";
    present = 0;
    let bad = false;
    const end = hybrid(page, 4, 4 + len, 1, n, (v, k) => {
      if (v > 1) bad = true;
      present += v * k;
    });
    if (end < 0 || bad) return "a data page's definition levels do not decode";
    at = 4 + len;
  }
  const rest = page.length - at;
  if (encoding === PLAIN && col.physical in WIDTH) {
    if (rest !== present * WIDTH[col.physical])
      return `a data page holds ${rest} bytes of values for ${present} values`;
  } else if (encoding === PLAIN && col.physical === 0) {
    if (rest < Math.ceil(present / 8)) return "a data page holds too few bits of values";
  } else if (encoding === PLAIN && col.physical === 6) {
    const dv = new DataView(page.buffer, page.byteOffset);
    for (let i = 0; i < present; i++) {
      if (at + 4 > page.length) return "a data page's strings run past the page";
      at += 4 + dv.getUint32(at, true);
    }
    if (at !== page.length) return "a data page's strings do not fill it exactly";
  } else if ((encoding === PLAIN_DICTIONARY || encoding === RLE_DICTIONARY) && present > 0) {
    const bits = page[at];
    if (bits === undefined || bits > 32) return "a data page's dictionary indices have no valid bit width";
    let bad = false;
    const end = hybrid(page, at + 1, page.length, bits, present, (v) => {
      if (v >= dictionary) bad = true;
    });
    if (end < 0 || bad) return `a data page's dictionary indices do not decode or reach past the ${dictionary} entries`;
  }
  return null;
}

/**
 * Why the column chunk `bytes` (its ColumnMetaData is `meta`) is damaged, or null.
 *
 * @example
 * const why = damagedChunk(chunkBytes, columnMeta);
 */
export function damagedChunk(bytes: Uint8Array, meta: TStruct, column?: PageColumn): string | null {
  const codec = fieldInt(meta, 4) ?? UNCOMPRESSED;
  const want = fieldBig(meta, 5);
  let values = 0n;
  let dictionary = 0;
  for (let at = 0; at < bytes.length;) {
    let header: TStruct, end: number;
    try {
      [header, end] = decodeStructAt(bytes, at);
    } catch (e) {
      if (e instanceof ThriftError) return `a page header at byte ${at} of the chunk does not decode (${e.message})`;
      throw e;
    }
    const type = fieldInt(header, 1);
    const raw = fieldInt(header, 2) ?? -1,
      stored = fieldInt(header, 3) ?? -1;
    if (type === undefined || type < 0 || type > 3) return `a page has an unknown type ${type}`;
    if (raw < 0 || stored < 0) return `a page has a negative or missing size`;
    if (end + stored > bytes.length) return `a page of ${stored} bytes runs past the end of its chunk`;
    const v2 = fieldStruct(header, 8);
    const compressed = codec !== UNCOMPRESSED && (type !== DATA_PAGE_V2 || (v2 && fieldBool(v2, 7)) !== false);
    if (!compressed && raw !== stored) return `an uncompressed page says ${raw} bytes but holds ${stored}`;
    // A V1 data page of a flat column is read whole (decompressed where Snappy):
    // its levels and values must agree with its header.
    const v1 = type === DATA_PAGE ? (fieldStruct(header, 5) ?? new Map()) : undefined;
    const readWhole = v1 !== undefined && column !== undefined && (!compressed || codec === SNAPPY);
    if (compressed && codec === SNAPPY) {
      // A V2 page keeps its levels uncompressed in front of the compressed values.
      const levels = v2 ? (fieldInt(v2, 5) ?? 0) + (fieldInt(v2, 6) ?? 0) : 0;
      const got = levels > stored ? null : snappy(bytes.subarray(end + levels, end + stored), !readWhole);
      const size = got instanceof Uint8Array ? got.length : got;
      if (size !== raw - levels) return `a Snappy page does not decompress to the ${raw} bytes it says`;
      if (readWhole) {
        const why = damagedValues(got as Uint8Array, fieldInt(v1, 1) ?? 0, fieldInt(v1, 2) ?? -1, column, dictionary);
        if (why) return why;
      }
    } else if (readWhole) {
      const why = damagedValues(
        bytes.subarray(end, end + stored),
        fieldInt(v1, 1) ?? 0,
        fieldInt(v1, 2) ?? -1,
        column,
        dictionary,
      );
      if (why) return why;
    }
    if (type === DATA_PAGE) values += BigInt(fieldInt(v1 ?? new Map(), 1) ?? 0);
    if (type === DATA_PAGE_V2) {
      if (!v2) return "a data page has no header";
      const n = fieldInt(v2, 1) ?? -1,
        nulls = fieldInt(v2, 2) ?? 0,
        levels = (fieldInt(v2, 5) ?? 0) + (fieldInt(v2, 6) ?? 0);
      if (n < 0 || nulls < 0 || nulls > n || levels < 0 || levels > stored) return "a data page's counts contradict it";
      values += BigInt(n);
    }
    if (type === DICTIONARY_PAGE) {
      dictionary = fieldInt(fieldStruct(header, 7) ?? new Map(), 1) ?? -1;
      if (dictionary < 0) return "a dictionary page has no value count";
    }
    at = end + stored;
  }
  if (want !== undefined && values !== want) return `its pages hold ${values} values, its metadata says ${want}`;
  return null;
}
