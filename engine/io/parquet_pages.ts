// The pages of a Parquet column chunk, walked and checked before the decoder sees
// them: the decoder (parquet-wasm) trusts page sizes and value counts, so a damaged
// header could read another page's bytes as values. Every header must decode, every
// page must fit the chunk and end where the next begins, uncompressed pages must be as
// long as they say, and the data pages must hold the chunk's number of values.
import { native } from "../native/addon.js";
import { misshapen, PAGE_HEADER } from "./parquet_thrift.js";
import { decodeStructAt, fieldBool, fieldInt, fieldBig, fieldStruct, ThriftError, type TStruct } from "./thrift.js";

const DATA_PAGE = 0,
  DICTIONARY_PAGE = 2,
  DATA_PAGE_V2 = 3;
const UNCOMPRESSED = 0,
  SNAPPY = 1;

/** A flat column's shape, for checking what its data pages hold. */
export interface PageColumn {
  /** The physical type (parquet.thrift `Type`: 0 BOOLEAN … 7 FIXED_LEN_BYTE_ARRAY). */
  physical: number;
  /** OPTIONAL (definition levels of bit width 1) rather than REQUIRED. */
  optional: boolean;
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
    const misfit = misshapen(header, PAGE_HEADER, "a page header");
    if (misfit) return `${misfit} (at byte ${at} of the chunk)`;
    const type = fieldInt(header, 1);
    const raw = fieldInt(header, 2) ?? -1,
      stored = fieldInt(header, 3) ?? -1;
    if (type === undefined || type < 0 || type > 3) return `a page has an unknown type ${type}`;
    if (raw < 0 || stored < 0) return `a page has a negative or missing size`;
    if (end + stored > bytes.length) return `a page of ${stored} bytes runs past the end of its chunk`;
    const v2 = fieldStruct(header, 8);
    const compressed = codec !== UNCOMPRESSED && (type !== DATA_PAGE_V2 || (v2 && fieldBool(v2, 7)) !== false);
    if (!compressed && raw !== stored) return `an uncompressed page says ${raw} bytes but holds ${stored}`;
    // The body, in native code (io/parquet_pages.cc): a Snappy block must decompress
    // to the size the page says, and a V1 data page of a flat column must hold the
    // levels and values its header counts.
    const v1 = type === DATA_PAGE ? (fieldStruct(header, 5) ?? new Map()) : undefined;
    const checkValues = v1 !== undefined && column !== undefined && (!compressed || codec === SNAPPY);
    if ((compressed && codec === SNAPPY) || checkValues) {
      const why = native().parquetPageDamage(bytes.subarray(end, end + stored), {
        codec: compressed ? codec : UNCOMPRESSED,
        raw,
        levels: v2 ? (fieldInt(v2, 5) ?? 0) + (fieldInt(v2, 6) ?? 0) : 0,
        ...(checkValues
          ? {
              values: {
                count: fieldInt(v1, 1) ?? 0,
                encoding: fieldInt(v1, 2) ?? -1,
                physical: column.physical,
                optional: column.optional,
                dictionary,
              },
            }
          : {}),
      });
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
