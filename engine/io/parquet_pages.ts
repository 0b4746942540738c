// The pages of a Parquet column chunk, walked and checked before a decoder sees
// them: every header must decode, every page must fit the chunk and end where the
// next begins, uncompressed pages must be as long as they say, and the data pages
// must hold the chunk's number of values. The native decoder (io/parquet_decode.cc)
// then checks each body as it decodes it; for parquet-wasm, which trusts them, the
// bodies are checked beforehand (damagedChunk).
import { readSync } from "node:fs";
import { native, type NativeParquetPage } from "../native/addon.js";
import { misshapen, PAGE_HEADER } from "./parquet_thrift.js";
import { decodeStructAt, fieldBool, fieldInt, fieldBig, fieldStruct, ThriftError, type TStruct } from "./thrift.js";

/** parquet.thrift PageType values (1, INDEX_PAGE, holds no values). */
export const DATA_PAGE = 0,
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

/** One page as its header describes it; `body` is a view of the chunk. */
export type ChunkPage = NativeParquetPage;

/**
 * The pages of column chunk `bytes` (its ColumnMetaData is `meta`), or why the
 * chunk is damaged.
 *
 * @example
 * const pages = chunkPages(chunkBytes, columnMeta);
 * if (typeof pages === "string") throw new Error(pages);
 */
export function chunkPages(bytes: Uint8Array, meta: TStruct): ChunkPage[] | string {
  const codec = fieldInt(meta, 4) ?? UNCOMPRESSED;
  const want = fieldBig(meta, 5);
  const pages: ChunkPage[] = [];
  let values = 0n;
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
    const page: ChunkPage = {
      type,
      body: bytes.subarray(end, end + stored),
      raw,
      values: 0,
      encoding: -1,
      levelBytes: 0,
      compressed,
    };
    if (type === DATA_PAGE) {
      const v1 = fieldStruct(header, 5);
      if (!v1) return "a data page has no header";
      page.values = fieldInt(v1, 1) ?? -1;
      page.encoding = fieldInt(v1, 2) ?? -1;
      if (page.values < 0) return "a data page has no value count";
      values += BigInt(page.values);
    }
    if (type === DATA_PAGE_V2) {
      if (!v2) return "a data page has no header";
      const n = fieldInt(v2, 1) ?? -1,
        nulls = fieldInt(v2, 2) ?? 0,
        levels = (fieldInt(v2, 5) ?? 0) + (fieldInt(v2, 6) ?? 0);
      if (n < 0 || nulls < 0 || nulls > n || levels < 0 || levels > stored) return "a data page's counts contradict it";
      page.values = n;
      page.encoding = fieldInt(v2, 4) ?? -1;
      page.levelBytes = levels;
      values += BigInt(n);
    }
    if (type === DICTIONARY_PAGE) {
      const d = fieldStruct(header, 7) ?? new Map();
      page.values = fieldInt(d, 1) ?? -1;
      page.encoding = fieldInt(d, 2) ?? 0;
      if (page.values < 0) return "a dictionary page has no value count";
    }
    pages.push(page);
    at = end + stored;
  }
  if (want !== undefined && values !== want) return `its pages hold ${values} values, its metadata says ${want}`;
  return pages;
}

/**
 * Why the column chunk `bytes` (its ColumnMetaData is `meta`) is damaged, or null:
 * the page walk, then (in native code, io/parquet_pages.cc) each Snappy block must
 * decompress to the size its page says and each V1 data page of a flat column must
 * hold the levels and values its header counts.
 *
 * @example
 * const why = damagedChunk(chunkBytes, columnMeta);
 */
export function damagedChunk(bytes: Uint8Array, meta: TStruct, column?: PageColumn): string | null {
  const pages = chunkPages(bytes, meta);
  if (typeof pages === "string") return pages;
  const codec = fieldInt(meta, 4) ?? UNCOMPRESSED;
  let dictionary = 0;
  for (const p of pages) {
    const checkValues = p.type === DATA_PAGE && column !== undefined && (!p.compressed || codec === SNAPPY);
    if ((p.compressed && codec === SNAPPY) || checkValues) {
      const why = native().parquetPageDamage(p.body, {
        codec: p.compressed ? codec : UNCOMPRESSED,
        raw: p.raw,
        levels: p.levelBytes,
        ...(checkValues
          ? {
              values: {
                count: p.values,
                encoding: p.encoding,
                physical: column.physical,
                optional: column.optional,
                dictionary,
              },
            }
          : {}),
      });
      if (why) return why;
    }
    if (p.type === DICTIONARY_PAGE) dictionary = p.values;
  }
  return null;
}

/**
 * Values in the first data page of the column chunk at [start, start + length) of the
 * open file `fd` (after its dictionary page, if any), read from the page headers alone;
 * undefined when they do not decode. Writers make pages of about equal size: this tells
 * whether a slice of the row group can decode less than all of the chunk (DuckDB
 * writes one page per chunk; Arrow, Spark and Basin pages of 1 MB or 131,072 rows).
 *
 * @example
 * firstDataPageValues(fd, chunk.start, chunk.length) // 131072
 */
export function firstDataPageValues(fd: number, start: number, length: number): number | undefined {
  const end = start + length;
  for (let at = start, pages = 0; at < end && pages < 4; pages++) {
    const head = new Uint8Array(Math.min(4096, end - at));
    readSync(fd, head, 0, head.length, at);
    let header: TStruct, size: number;
    try {
      [header, size] = decodeStructAt(head, 0);
    } catch {
      return undefined;
    }
    const type = fieldInt(header, 1);
    if (type === DATA_PAGE) return fieldInt(fieldStruct(header, 5) ?? new Map(), 1);
    if (type === DATA_PAGE_V2) return fieldInt(fieldStruct(header, 8) ?? new Map(), 1);
    at += size + Math.max(0, fieldInt(header, 3) ?? 0);
  }
  return undefined;
}
