// The footer of a Parquet file, read without the data: the schema (mapped to Basin
// types), row groups, and their column chunks with byte ranges and min/max/null
// statistics. Also cuts a smaller, valid Parquet file out of a big one holding only
// some row groups and columns, so a worker reads just the bytes it needs.
import { closeSync, openSync, statSync } from "node:fs";
import { BasinError } from "../common/errors.js";
import type { DType, Field } from "../common/types.js";
import {
  decodeStruct,
  encodeStruct,
  fieldBig,
  fieldBool,
  fieldBytes,
  fieldInt,
  fieldString,
  fieldStruct,
  fieldStructs,
  T,
  ThriftError,
  type TStruct,
  type TValue,
} from "./thrift.js";
import { readAt } from "./read_at.js";
import { damagedChunk } from "./parquet_pages.js";
import { FILE_METADATA, misshapen } from "./parquet_thrift.js";

/** Parquet physical types (parquet.thrift `Type`). */
const PHYS = ["BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"] as const;

/** How statistics of a column compare with Basin values. */
export type StatKind = "int" | "float" | "bool" | "string" | "date" | "timestamp" | "none";

export interface ParquetColumn {
  name: string;
  /** The Basin type, or why the column cannot be read. */
  type: DType | { unsupported: string };
  stat: StatKind;
  physical: (typeof PHYS)[number];
  /** Index of the column's chunk in a row group (its first leaf, for nested columns). */
  leaf: number;
  /** Index of the column's element in the footer's schema list. */
  element: number;
  /** Multiplier to microseconds for timestamp statistics (e.g. 1000 for millis, 1/1000 for nanos). */
  toMicros: number;
  /** An INT32 holding unsigned values. */
  unsigned?: boolean;
}

export interface ChunkStats {
  min?: Uint8Array;
  max?: Uint8Array;
  nullCount?: number;
}

export interface RowGroupInfo {
  rows: number;
  bytes: number;
  chunks: { start: number; length: number; stats: ChunkStats }[];
}

export interface ParquetFooter {
  path: string;
  size: number;
  rows: number;
  columns: ParquetColumn[];
  rowGroups: RowGroupInfo[];
  /** The decoded FileMetaData, for cutting sub-files. */
  meta: TStruct;
}

function corrupt(path: string, what: string): never {
  throw new BasinError(
    "BASIN_IO",
    `${path} is not a readable Parquet file: ${what}; check that the file is Parquet and was written completely`,
  );
}

const MAGIC = "PAR1";
const text = new TextDecoder();

/** Basin type of a flat Parquet column, from its physical and logical/converted types. */
function columnType(el: TStruct): {
  type: DType | { unsupported: string };
  stat: StatKind;
  toMicros: number;
  unsigned?: boolean;
} {
  const physical = PHYS[fieldInt(el, 1) ?? -1];
  const converted = fieldInt(el, 6);
  const logical = fieldStruct(el, 10);
  const no = (what: string) => ({ type: { unsupported: what }, stat: "none" as const, toMicros: 1 });
  const ts = logical && fieldStruct(logical, 8);
  if (ts || converted === 9 || converted === 10) {
    const unit = ts ? fieldStruct(ts, 2) : undefined;
    const toMicros = unit ? (unit.has(1) ? 1000 : unit.has(3) ? 1 / 1000 : 1) : converted === 9 ? 1000 : 1;
    return { type: "timestamp", stat: "timestamp", toMicros };
  }
  if ((logical && logical.has(6)) || converted === 6) return { type: "date", stat: "date", toMicros: 1 };
  if ((logical && logical.has(5)) || converted === 5) return no("decimal");
  if ((logical && logical.has(7)) || converted === 7 || converted === 8) return no("time of day");
  const int = logical && fieldStruct(logical, 10);
  const unsigned =
    (int && fieldBool(int, 2) === false) || (converted !== undefined && converted >= 11 && converted <= 14);
  switch (physical) {
    case "BOOLEAN":
      return { type: "bool", stat: "bool", toMicros: 1 };
    case "INT32":
      return { type: "int64", stat: unsigned ? "none" : "int", toMicros: 1, unsigned };
    case "INT64":
      if (unsigned) return no("unsigned 64-bit integer");
      return { type: "int64", stat: "int", toMicros: 1 };
    case "INT96":
      return { type: "timestamp", stat: "none", toMicros: 1 };
    case "FLOAT":
    case "DOUBLE":
      return { type: "float64", stat: "float", toMicros: 1 };
    case "BYTE_ARRAY": {
      const isText =
        converted === 0 ||
        converted === 4 ||
        converted === 19 ||
        (logical !== undefined && (logical.has(1) || logical.has(4) || logical.has(12)));
      return isText ? { type: "string", stat: "string", toMicros: 1 } : no("binary");
    }
    case "FIXED_LEN_BYTE_ARRAY":
      return no(logical?.has(14) ? "uuid" : logical?.has(15) ? "float16" : "fixed-length binary");
    default:
      return no(`physical type ${String(fieldInt(el, 1))}`);
  }
}

function parseFooter(path: string, size: number, meta: TStruct): ParquetFooter {
  const schema = fieldStructs(meta, 2);
  if (schema.length === 0) corrupt(path, "the footer has no schema");
  const columns: ParquetColumn[] = [];
  // A flat schema is a root with one leaf per column; groups mean nesting, and a
  // nested column has one chunk per leaf below it.
  let leaves = 0;
  for (let i = 1; i < schema.length; i++) {
    const el = schema[i];
    const name = fieldString(el, 4) ?? `column${i}`;
    const [leaf, element] = [leaves, i];
    if ((fieldInt(el, 5) ?? 0) > 0 || fieldInt(el, 3) === 2) {
      columns.push({
        name,
        type: { unsupported: "nested (struct, list or map)" },
        stat: "none",
        physical: "BYTE_ARRAY",
        toMicros: 1,
        leaf,
        element,
      });
      let pending = fieldInt(el, 5) ?? 0;
      if (pending === 0) leaves++; // a repeated primitive
      while (pending > 0 && i + 1 < schema.length) {
        const children = fieldInt(schema[++i], 5) ?? 0;
        if (children === 0) leaves++;
        pending += children - 1;
      }
      continue;
    }
    leaves++;
    if (columns.some((c) => c.name === name)) corrupt(path, `it has two columns named "${name}"`);
    columns.push({ name, ...columnType(el), physical: PHYS[fieldInt(el, 1) ?? 0], leaf, element });
  }
  const rowGroups: RowGroupInfo[] = fieldStructs(meta, 4).map((rg) => {
    const chunks = fieldStructs(rg, 1).map((cc) => {
      const md = fieldStruct(cc, 3);
      if (!md) corrupt(path, "a column chunk has no metadata (encrypted or external column chunks are not supported)");
      const data = Number(fieldBig(md, 9) ?? 0n);
      const dict = Number(fieldBig(md, 11) ?? 0n);
      const start = dict > 0 && dict < data ? dict : data;
      const length = Number(fieldBig(md, 7) ?? 0n);
      if (start < 4 || length < 0 || start + length > size) corrupt(path, "a column chunk lies outside the file");
      const st = fieldStruct(md, 12);
      const stats: ChunkStats = {};
      if (st) {
        stats.nullCount = fieldInt(st, 3);
        // min_value/max_value are exact in the column's sort order; the legacy
        // min/max only for signed numbers, where the old order was right.
        const legacyOk =
          PHYS[fieldInt(md, 1) ?? -1] !== "BYTE_ARRAY" && PHYS[fieldInt(md, 1) ?? -1] !== "FIXED_LEN_BYTE_ARRAY";
        stats.min = fieldBytes(st, 6) ?? (legacyOk ? fieldBytes(st, 2) : undefined);
        stats.max = fieldBytes(st, 5) ?? (legacyOk ? fieldBytes(st, 1) : undefined);
      }
      return { start, length, stats };
    });
    if (chunks.length !== leaves)
      corrupt(path, `a row group has ${chunks.length} column chunks for ${leaves} leaf columns`);
    const rows = fieldInt(rg, 3) ?? 0;
    if (rows < 0) corrupt(path, `a row group claims ${rows} rows`);
    return { rows, bytes: Number(fieldBig(rg, 2) ?? 0n), chunks };
  });
  // num_rows and row_groups are required: a footer without them is damaged, not empty.
  if (fieldBig(meta, 3) === undefined || !meta.has(4)) corrupt(path, "its footer has no row count or no row groups");
  const rows = Number(fieldBig(meta, 3));
  const inGroups = rowGroups.reduce((n, g) => n + g.rows, 0);
  if (rows !== inGroups) corrupt(path, `it claims ${rows} rows but its row groups hold ${inGroups}`);
  return { path, size, rows, columns, rowGroups, meta };
}

const cache = new Map<string, ParquetFooter>();
const MAX_ENTRIES = 256;

/**
 * The footer of a Parquet file (cached per file version), or BASIN_IO naming the
 * file and what is wrong with it.
 *
 * @example
 * readParquetFooter("trips.parquet").rowGroups.length
 */
export function readParquetFooter(path: string): ParquetFooter {
  let st;
  try {
    st = statSync(path);
  } catch {
    throw new BasinError("BASIN_IO", `${path}: no such file; check the path`);
  }
  const key = JSON.stringify([path, st.size, st.mtimeMs, st.ino]);
  const hit = cache.get(key);
  if (hit) return hit;
  if (st.size < 12) corrupt(path, `it has only ${st.size} bytes`);
  const fd = openSync(path, "r");
  let footer: ParquetFooter;
  try {
    const head = text.decode(readAt(fd, 0, 4));
    const tail = readAt(fd, st.size - 8, 8);
    const magic = text.decode(tail.subarray(4));
    if (magic === "PARE") corrupt(path, "the footer is encrypted, which Basin does not read");
    if (head !== MAGIC || magic !== MAGIC) corrupt(path, `it does not start and end with "${MAGIC}"`);
    const len = new DataView(tail.buffer, tail.byteOffset).getUint32(0, true);
    if (len <= 0 || len > st.size - 12)
      corrupt(path, `the footer length ${len} does not fit the file's ${st.size} bytes`);
    let meta: TStruct;
    try {
      meta = decodeStruct(readAt(fd, st.size - 8 - len, len));
    } catch (e) {
      if (e instanceof ThriftError) corrupt(path, `the footer does not decode (${e.message})`);
      throw e;
    }
    const bad = misshapen(meta, FILE_METADATA, "the footer");
    if (bad) corrupt(path, bad);
    footer = parseFooter(path, st.size, meta);
  } finally {
    closeSync(fd);
  }
  if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
  cache.set(key, footer);
  return footer;
}

/** The footer's columns as a Basin schema, or BASIN_IO naming the first unreadable column. */
export function parquetSchema(f: ParquetFooter, loc?: string): Field[] {
  return f.columns.map((c) => {
    if (typeof c.type === "object")
      throw new BasinError(
        "BASIN_IO",
        `${f.path}: column "${c.name}" has Parquet type ${c.type.unsupported}, which Basin cannot read; leave it out with readParquet(path, { columns: [...] }) or convert it when writing the file`,
        loc,
      );
    return { name: c.name, type: c.type };
  });
}

function i64(v: number): TValue {
  return { type: T.I64, v: BigInt(v) };
}

/**
 * A standalone Parquet file with only row groups `groups` and columns `columns`
 * (file indices) of `f`: the chunks' bytes plus a footer whose offsets point at
 * them. Reads just those bytes from disk.
 *
 * @example
 * readParquet(cutParquet(footer, [2, 3], [0, 4]))
 */
export function cutParquet(f: ParquetFooter, groups: number[], columns: number[]): Uint8Array {
  const leaves = columns.map((c) => f.columns[c].leaf);
  const total = groups.reduce((n, g) => n + leaves.reduce((m, c) => m + f.rowGroups[g].chunks[c].length, 0), 0);
  const meta: TStruct = new Map(f.meta);
  // The new footer: filtered schema, column orders and row groups; no embedded Arrow
  // schema (it would list the dropped columns).
  const schema = fieldStructs(f.meta, 2);
  const root: TStruct = new Map(schema[0]);
  root.set(5, { type: T.I32, v: columns.length });
  meta.set(2, {
    type: T.LIST,
    elem: T.STRUCT,
    v: [root, ...columns.map((c) => schema[f.columns[c].element])].map((s) => ({ type: T.STRUCT, v: s })),
  });
  const orders = meta.get(7);
  if (orders?.type === T.LIST) meta.set(7, { ...orders, v: leaves.map((c) => orders.v[c]) });
  const kv = meta.get(5);
  if (kv?.type === T.LIST)
    meta.set(5, { ...kv, v: kv.v.filter((x) => !(x.type === T.STRUCT && fieldString(x.v, 1) === "ARROW:schema")) });
  const body = new Uint8Array(4 + total);
  body.set(new TextEncoder().encode(MAGIC));
  let at = 4,
    rows = 0;
  const fd = openSync(f.path, "r");
  try {
    const rgs = fieldStructs(f.meta, 4);
    const outGroups: TValue[] = groups.map((g) => {
      const rg: TStruct = new Map(rgs[g]);
      const ccs = fieldStructs(rgs[g], 1);
      const groupStart = at;
      let uncompressed = 0;
      const outChunks = leaves.map((c, k) => {
        const { start, length } = f.rowGroups[g].chunks[c];
        const bytes = readAt(fd, start, length);
        const md: TStruct = new Map(fieldStruct(ccs[c], 3));
        const col = f.columns[columns[k]];
        // Flat columns Basin reads: their pages' levels and values are checked too.
        const el = schema[col.element];
        const repetition = el ? fieldInt(el, 3) : undefined;
        const flat = typeof col.type === "string" && (repetition === 0 || repetition === 1);
        const damage = damagedChunk(
          bytes,
          md,
          flat ? { physical: fieldInt(el, 1) ?? -1, optional: repetition === 1 } : undefined,
        );
        if (damage) corrupt(f.path, `column "${f.columns[columns[k]].name}", row group ${g}: ${damage}`);
        body.set(bytes, at);
        const shift = BigInt(at - start);
        const cc: TStruct = new Map(ccs[c]);
        for (const id of [9, 10, 11]) {
          const v = md.get(id);
          if (v?.type === T.I64 && v.v > 0n) md.set(id, { type: T.I64, v: v.v + shift });
        }
        md.delete(14); // bloom filter
        md.delete(15);
        uncompressed += Number(fieldBig(md, 6) ?? 0n);
        cc.set(3, { type: T.STRUCT, v: md });
        cc.set(2, i64(at));
        for (const id of [4, 5, 6, 7]) cc.delete(id); // page indexes
        at += length;
        return { type: T.STRUCT, v: cc } as TValue;
      });
      rg.set(1, { type: T.LIST, elem: T.STRUCT, v: outChunks });
      rg.set(2, i64(uncompressed));
      rg.set(5, i64(groupStart));
      rg.set(6, i64(at - groupStart));
      rg.delete(7);
      rows += f.rowGroups[g].rows;
      return { type: T.STRUCT, v: rg };
    });
    meta.set(4, { type: T.LIST, elem: T.STRUCT, v: outGroups });
  } finally {
    closeSync(fd);
  }
  meta.set(3, i64(rows));
  const footer = encodeStruct(meta);
  const out = new Uint8Array(body.length + footer.length + 8);
  out.set(body);
  out.set(footer, body.length);
  new DataView(out.buffer).setUint32(body.length + footer.length, footer.length, true);
  out.set(new TextEncoder().encode(MAGIC), body.length + footer.length + 4);
  return out;
}
