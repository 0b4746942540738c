// Decodes row groups of a Parquet file into the native store, in a worker: only
// the needed column chunks are read from disk. Flat columns with PLAIN or dictionary
// PLAIN, dictionary, DELTA and BYTE_STREAM_SPLIT pages (what Basin, DuckDB, Arrow,
// Polars and Spark write) are decoded by the addon straight into the store; anything
// else (nested columns, INT96, fixed-length binary, LZ4 pages) goes through
// parquet-wasm and Arrow. Gzip and Brotli pages are inflated here, by Node's zlib.
import { closeSync, openSync } from "node:fs";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { BasinError } from "../common/errors.js";
import type { DType, Field } from "../common/types.js";
import type { NativeExpr } from "../graph/kernel_args.js";
import { native, type Handle } from "../native/addon.js";
import { batchToJs } from "./arrow_convert.js";
import { arrowLib, parquetLib } from "./arrow_lib.js";
import { emptyTable, tablesToHandle } from "./tables.js";
import { cutParquet, readParquetFooter, type ParquetFooter } from "./parquet_footer.js";
import { chunkPages, DATA_PAGE, DATA_PAGE_V2, DICTIONARY_PAGE, type ChunkPage } from "./parquet_pages.js";
import { ReadArena } from "./read_at.js";
import { fieldInt, fieldStruct, fieldStructs } from "./thrift.js";

/** The columns a scan hands on (indices into its columns, with their names): the rest were read for its predicate. */
export interface ScanSelect {
  index: number[];
  names: string[];
}

/**
 * Row groups `rowGroups` of a Parquet file as one table with `columns`; with a
 * `predicate` (over those columns), only the rows it holds for. The addon tests a
 * string column's conditions on its dictionary entries and gathers only kept strings.
 * With `rows`, only rows [start, end) of its one row group (see sliceOfGroup).
 *
 * @example
 * const h = scanParquet("trips.parquet", [0, 1], [{ name: "fare", type: "float64" }]);
 */
export function scanParquet(
  path: string,
  rowGroups: number[],
  columns: Field[],
  predicate?: NativeExpr,
  select?: ScanSelect,
  rows?: [number, number],
): Handle {
  const footer = readParquetFooter(path);
  const index = columns.map((c) => {
    const i = footer.columns.findIndex((x) => x.name === c.name);
    if (i < 0)
      throw new BasinError(
        "BASIN_IO",
        `${path} has no column "${c.name}" (it changed since the pipeline was planned?); the columns are: ${footer.columns.map((x) => x.name).join(", ")}`,
      );
    return i;
  });
  for (const g of rowGroups)
    if (g >= footer.rowGroups.length)
      throw new BasinError(
        "BASIN_IO",
        `${path} has ${footer.rowGroups.length} row groups, not ${g + 1}; did the file change while the pipeline ran?`,
      );
  const addon = native();
  if (rowGroups.length === 0 || columns.length === 0) {
    const empty = addon.tableFromJs(emptyTable(columns));
    return select ? selected(empty, select, columns) : empty;
  }
  const decoded = rows
    ? sliceOfGroup(footer, rowGroups, index, rows)
    : decodeNatively(footer, rowGroups, index, predicate, select);
  if (decoded !== null && !rows) return decoded;
  let all = decoded ?? decodeWithArrow(footer, rowGroups, index, columns);
  if (rows && decoded === null) all = replaced(all, addon.slice(all, rows[0], rows[1] - rows[0]));
  if (predicate) all = replaced(all, addon.filter(all, predicate));
  return select ? selected(all, select, columns) : all;
}

/**
 * Rows [start, end) of the one row group in `groups`, decoding of each column only the
 * data pages those rows lie on (and its dictionary): a row group larger than a task may
 * hold is read in slices, each holding about its share. Columns are read one at a
 * time, their pages' rows cut to the slice, and set side by side. Null when a column
 * needs parquet-wasm (which decodes the whole row group).
 */
function sliceOfGroup(
  footer: ParquetFooter,
  groups: number[],
  index: number[],
  [start, end]: [number, number],
): Handle | null {
  if (groups.length !== 1)
    throw new BasinError("BASIN_INTERNAL", `a Parquet scan of rows ${start}..${end} names ${groups.length} row groups`);
  const addon = native();
  const parts: Handle[] = [];
  try {
    for (const i of index) {
      const whole = decodeNatively(footer, groups, [i], undefined, undefined, [start, end]);
      if (whole === null) return null;
      parts.push(whole);
    }
    return addon.beside(parts);
  } finally {
    for (const h of parts) addon.release(h);
  }
}

/** `next`, after letting go of `h`. */
function replaced(h: Handle, next: Handle): Handle {
  native().release(h);
  return next;
}

/** The selected columns of `h` (a table of `columns`, released here). */
function selected(h: Handle, select: ScanSelect, columns: Field[]): Handle {
  const exprs = select.index.map((index): NativeExpr => ({ kind: "col", index, type: columns[index].type }));
  try {
    return native().evalExprs(h, exprs, select.names);
  } finally {
    native().release(h);
  }
}

const PLAIN = 0,
  PLAIN_DICTIONARY = 2,
  RLE = 3,
  DELTA_BINARY_PACKED = 5,
  DELTA_LENGTH_BYTE_ARRAY = 6,
  DELTA_BYTE_ARRAY = 7,
  RLE_DICTIONARY = 8,
  BYTE_STREAM_SPLIT = 9;
const BOOLEAN = 0,
  INT32 = 1,
  INT64 = 2,
  INT96 = 3,
  DOUBLE = 5,
  BYTE_ARRAY = 6,
  FIXED_LEN_BYTE_ARRAY = 7;

/** The pages' encodings the addon decodes for a column of this physical type. */
function decodable(p: ChunkPage, physical: number): boolean {
  if (p.type === DICTIONARY_PAGE) return p.encoding === PLAIN || p.encoding === PLAIN_DICTIONARY;
  if (p.type !== DATA_PAGE && p.type !== DATA_PAGE_V2) return true; // index pages are skipped
  switch (p.encoding) {
    case PLAIN:
    case PLAIN_DICTIONARY:
    case RLE_DICTIONARY:
      return true;
    case RLE:
      return physical === BOOLEAN;
    case DELTA_BINARY_PACKED:
      return physical === INT32 || physical === INT64;
    case DELTA_LENGTH_BYTE_ARRAY:
    case DELTA_BYTE_ARRAY:
      return physical === BYTE_ARRAY;
    case BYTE_STREAM_SPLIT:
      return physical >= INT32 && physical <= DOUBLE && physical !== INT96;
    default:
      return false;
  }
}

/** Codecs Node inflates (parquet.thrift CompressionCodec 2 GZIP, 4 BROTLI). */
const INFLATE: Record<number, (b: Uint8Array, o: { maxOutputLength: number }) => Uint8Array> = {
  2: gunzipSync,
  4: brotliDecompressSync,
};

/** The page with its values inflated: an uncompressed page for the addon. */
function inflated(
  p: ChunkPage,
  inflate: (b: Uint8Array, o: { maxOutputLength: number }) => Uint8Array,
  path: string,
): ChunkPage {
  if (!p.compressed) return p;
  let values: Uint8Array;
  try {
    // No more than the page says: a damaged page must not inflate to gigabytes.
    values = inflate(p.body.subarray(p.levelBytes), { maxOutputLength: Math.max(1, p.raw - p.levelBytes) });
  } catch (e) {
    throw new BasinError(
      "BASIN_IO",
      `${path} is not a readable Parquet file: a compressed page does not inflate (${e instanceof Error ? e.message : String(e)}); check that the file was written completely`,
    );
  }
  const body = new Uint8Array(p.levelBytes + values.length);
  body.set(p.body.subarray(0, p.levelBytes));
  body.set(values, p.levelBytes);
  return { ...p, body, compressed: false };
}

/** This thread's column chunks, read again by every scan (the addon copies what it decodes). */
const chunks = new ReadArena();

/**
 * The columns decoded by the addon, or null when one of them needs parquet-wasm. With
 * `rows` (one column of one row group): only its data pages overlapping those rows, cut to them.
 */
function decodeNatively(
  footer: ParquetFooter,
  groups: number[],
  index: number[],
  predicate: NativeExpr | undefined,
  select: ScanSelect | undefined,
  rows?: [number, number],
): Handle | null {
  const addon = native();
  const schema = fieldStructs(footer.meta, 2);
  const rgs = fieldStructs(footer.meta, 4);
  const specs: Parameters<typeof addon.parquetDecode>[0]["columns"] = [];
  const cut: PageCut = { first: 0, rows: 0 };
  const fd = openSync(footer.path, "r");
  chunks.reset();
  try {
    for (const i of index) {
      const col = footer.columns[i];
      const el = schema[col.element];
      const physical = fieldInt(el, 1) ?? -1;
      const repetition = fieldInt(el, 3);
      if (typeof col.type !== "string" || (repetition !== 0 && repetition !== 1)) return null;
      if (physical === INT96 || physical === FIXED_LEN_BYTE_ARRAY) return null;
      const pages: (ChunkPage & { group: number })[] = [];
      let codec = -1;
      for (const g of groups) {
        const meta = fieldStruct(fieldStructs(rgs[g], 1)[col.leaf], 3) ?? new Map();
        const stored = fieldInt(meta, 4) ?? 0;
        const chunkCodec = INFLATE[stored] ? 0 : stored;
        if (!addon.parquetCodecSupported(chunkCodec) || (codec >= 0 && chunkCodec !== codec)) return null;
        codec = chunkCodec;
        const { start, length } = footer.rowGroups[g].chunks[col.leaf];
        const chunk = chunkPages(chunks.read(fd, start, length), meta);
        if (typeof chunk === "string")
          throw new BasinError(
            "BASIN_IO",
            `${footer.path} is not a readable Parquet file: column "${col.name}", row group ${g}: ${chunk}; check that the file is Parquet and was written completely`,
          );
        if (!chunk.every((p) => decodable(p, physical))) return null;
        for (const p of rows ? pagesOfRows(chunk, rows, cut) : chunk)
          pages.push({ ...(INFLATE[stored] ? inflated(p, INFLATE[stored], footer.path) : p), group: g });
      }
      specs.push({
        name: col.name,
        type: col.type satisfies DType,
        physical,
        optional: repetition === 1,
        unsigned: col.unsigned === true,
        timeMul: col.type === "timestamp" && col.toMicros > 1 ? col.toMicros : 1,
        timeDiv: col.type === "timestamp" && col.toMicros < 1 ? Math.round(1 / col.toMicros) : 1,
        codec,
        pages,
      });
    }
  } finally {
    closeSync(fd);
  }
  const decoded = addon.parquetDecode({
    path: footer.path,
    rows: rows ? cut.rows : groups.reduce((n, g) => n + footer.rowGroups[g].rows, 0),
    columns: specs,
    ...(predicate ? { predicate } : {}),
    ...(select ? { outputs: select.index, outputNames: select.names } : {}),
  });
  if (!rows) return decoded;
  try {
    return addon.slice(decoded, rows[0] - cut.first, rows[1] - rows[0]);
  } finally {
    addon.release(decoded);
  }
}

/** Where the data pages a slice decodes begin (a row of the group), and how many rows they hold. */
interface PageCut {
  first: number;
  rows: number;
}

/**
 * The pages of a flat column chunk that rows [start, end) need: its dictionary and the
 * data pages they lie on (a data page holds one value, or null, a row); `cut` learns
 * where those pages begin and how many rows they hold.
 */
function pagesOfRows(chunk: ChunkPage[], [start, end]: [number, number], cut: PageCut): ChunkPage[] {
  const out: ChunkPage[] = [];
  cut.first = -1;
  cut.rows = 0;
  let at = 0;
  for (const p of chunk) {
    if (p.type === DICTIONARY_PAGE) {
      out.push(p);
      continue;
    }
    if (p.type !== DATA_PAGE && p.type !== DATA_PAGE_V2) continue; // index pages
    const from = at;
    at += p.values;
    if (at <= start || from >= end) continue;
    if (cut.first < 0) cut.first = from;
    cut.rows += p.values;
    out.push(p);
  }
  return out;
}

/** The columns through parquet-wasm (a cut file of just those chunks) and Arrow. */
function decodeWithArrow(footer: ParquetFooter, groups: number[], index: number[], columns: Field[]): Handle {
  const path = footer.path;
  const rows = groups.reduce((n, g) => n + footer.rowGroups[g].rows, 0);
  let ipc: Uint8Array;
  try {
    ipc = parquetLib()
      .readParquet(cutParquet(footer, groups, index), { batchSize: Math.max(1, rows) })
      .intoIPCStream();
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new BasinError(
      "BASIN_IO",
      `${path}: row groups ${groups.join(", ")} do not decode (${why}); the file may be corrupt or use an encoding Basin cannot read`,
    );
  }
  const table = arrowLib().tableFromIPC(ipc);
  try {
    return tablesToHandle(
      table.batches.map((b) => batchToJs(b, columns)),
      columns,
    );
  } catch (e) {
    throw BasinError.inFile(e, path);
  }
}
