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
 * The bytes a raw Snappy block decompresses to, walked tag by tag without
 * decompressing, or -1 when the tags do not add up to the length it starts with
 * (Snappy has no checksum, and the decoder does not insist on that length).
 */
function snappyLength(b: Uint8Array): number {
  let at = 0,
    want = 0;
  for (let shift = 0; ; shift += 7) {
    if (at >= b.length || shift > 28) return -1;
    const x = b[at++];
    want += (x & 0x7f) * 2 ** shift;
    if (!(x & 0x80)) break;
  }
  let out = 0;
  while (at < b.length) {
    const tag = b[at++];
    let len: number;
    if ((tag & 3) === 0) {
      len = tag >> 2;
      if (len >= 60) {
        const extra = len - 59;
        if (at + extra > b.length) return -1;
        len = 0;
        for (let i = 0; i < extra; i++) len += b[at + i] * 2 ** (8 * i);
        at += extra;
      }
      len += 1;
      at += len; // literal bytes
      if (at > b.length) return -1;
    } else {
      const offsetBytes = [0, 1, 2, 4][tag & 3];
      len = (tag & 3) === 1 ? ((tag >> 2) & 7) + 4 : (tag >> 2) + 1;
      if (at + offsetBytes > b.length) return -1;
      let offset = (tag & 3) === 1 ? (tag >> 5) << 8 : 0;
      for (let i = 0; i < offsetBytes; i++) offset += b[at + i] * 2 ** (8 * i);
      at += offsetBytes;
      if (offset === 0 || offset > out) return -1; // a copy from before the start
    }
    out += len;
    if (out > want) return -1;
  }
  return out === want ? want : -1;
}

/**
 * Why the column chunk `bytes` (its ColumnMetaData is `meta`) is damaged, or null.
 *
 * @example
 * const why = damagedChunk(chunkBytes, columnMeta);
 */
export function damagedChunk(bytes: Uint8Array, meta: TStruct): string | null {
  const codec = fieldInt(meta, 4) ?? UNCOMPRESSED;
  const want = fieldBig(meta, 5);
  let values = 0n;
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
    if (compressed && codec === SNAPPY) {
      // A V2 page keeps its levels uncompressed in front of the compressed values.
      const levels = v2 ? (fieldInt(v2, 5) ?? 0) + (fieldInt(v2, 6) ?? 0) : 0;
      if (levels > stored || snappyLength(bytes.subarray(end + levels, end + stored)) !== raw - levels)
        return `a Snappy page does not decompress to the ${raw} bytes it says`;
    }
    if (type === DATA_PAGE) values += BigInt(fieldInt(fieldStruct(header, 5) ?? new Map(), 1) ?? 0);
    if (type === DATA_PAGE_V2) {
      if (!v2) return "a data page has no header";
      const n = fieldInt(v2, 1) ?? -1,
        nulls = fieldInt(v2, 2) ?? 0,
        levels = (fieldInt(v2, 5) ?? 0) + (fieldInt(v2, 6) ?? 0);
      if (n < 0 || nulls < 0 || nulls > n || levels < 0 || levels > stored) return "a data page's counts contradict it";
      values += BigInt(n);
    }
    if (type === DICTIONARY_PAGE && (fieldInt(fieldStruct(header, 7) ?? new Map(), 1) ?? -1) < 0)
      return "a dictionary page has no value count";
    at = end + stored;
  }
  if (want !== undefined && values !== want) return `its pages hold ${values} values, its metadata says ${want}`;
  return null;
}
