// Arrow IPC files (file and stream formats) without reading them whole: the
// message headers are walked to find the schema, dictionary and record batch
// messages, and a worker reads only the bytes of the batches it decodes.
import { closeSync, openSync, statSync } from "node:fs";
import type { Message, Schema as ArrowSchema } from "apache-arrow";
import type { RecordBatch as RecordBatchHeader } from "apache-arrow/ipc/metadata/message";
import type { FileBlock } from "apache-arrow/ipc/metadata/file";
import { BasinError } from "../common/errors.js";
import type { Field } from "../common/types.js";
import type { Handle } from "../native/addon.js";
import { batchToJs, dtypeOfArrow } from "./arrow_convert.js";
import { arrowFileLib, arrowLib } from "./arrow_lib.js";
import { notArrow as bad, verifyFooter, verifyMessage } from "./arrow_verify.js";
import { tablesToHandle } from "./tables.js";
import { readAt } from "./read_at.js";

export type ByteRange = [number, number];

export interface ArrowLayout {
  schema: ArrowSchema;
  /** Every dictionary batch, in file order. */
  dictionaries: ByteRange[];
  batches: ByteRange[];
  /**
   * The dictionary batches in effect at each record batch, in order: per dictionary,
   * the last one that replaced it before the batch and the deltas after that (a
   * stream may replace a dictionary between batches).
   */
  batchDictionaries: ByteRange[][];
}

const FILE_MAGIC = "ARROW1";
const cache = new Map<string, ArrowLayout>();

/** A record batch's (or dictionary's) buffers and nodes, checked against its body. */
function checkBatch(path: string, pos: number, bodyLength: number, batch: RecordBatchHeader, columns: number): void {
  if (batch.compression)
    throw new BasinError(
      "BASIN_IO",
      `${path}: the batch at byte ${pos} is compressed (${batch.compression.type === 1 ? "ZSTD" : "LZ4"}), which Basin does not read yet; write the file uncompressed (pyarrow: compression=None; Polars: compression="uncompressed")`,
    );
  const length = Number(batch.length);
  if (!(length >= 0 && Number.isSafeInteger(length))) bad(path, `the batch at byte ${pos} claims ${batch.length} rows`);
  // Writers lay buffers out one after another, each at a multiple of 8: a buffer that
  // overlaps the one before it, or sits off that grid, has a damaged offset.
  let prevEnd = 0;
  for (const b of batch.buffers) {
    const offset = Number(b.offset),
      size = Number(b.length);
    if (!(offset >= 0 && size >= 0 && offset + size <= bodyLength))
      bad(path, `a buffer of the batch at byte ${pos} lies outside its ${bodyLength}-byte body`);
    if (size === 0) continue;
    if (offset % 8 !== 0 || offset < prevEnd)
      bad(path, `a buffer of the batch at byte ${pos} overlaps another or is not aligned (offset ${offset})`);
    prevEnd = offset + size;
  }
  // In a flat schema (one node per column) every column has the batch's length.
  const flat = batch.nodes.length === columns;
  for (const n of batch.nodes) {
    const rows = Number(n.length),
      nulls = Number(n.nullCount);
    if (!(rows >= 0 && nulls >= 0 && nulls <= rows && (flat ? rows === length : rows <= length)))
      bad(
        path,
        `a column of the batch at byte ${pos} claims ${n.length} rows and ${n.nullCount} nulls in a batch of ${length}`,
      );
  }
}

function sameSchema(a: ArrowSchema, b: ArrowSchema): boolean {
  const describe = (s: ArrowSchema) => JSON.stringify(s.fields.map((f) => [f.name, String(f.type), f.nullable]));
  return describe(a) === describe(b);
}

/**
 * Where the messages of an Arrow IPC file or stream are (cached per file version).
 *
 * @example
 * arrowLayout("trips.arrow").batches.length // partitions
 */
export function arrowLayout(path: string): ArrowLayout {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) throw new BasinError("BASIN_IO", `${path}: no such file; check the path`);
  const key = JSON.stringify([path, st.size, st.mtimeMs, st.ino]);
  const hit = cache.get(key);
  if (hit) return hit;
  const fd = openSync(path, "r");
  try {
    const isFile = new TextDecoder().decode(readAt(fd, 0, 6)) === FILE_MAGIC;
    if (isFile && st.size < 18) bad(path, "it starts with ARROW1 but is cut short");
    // The file format is a stream between the magic and a footer.
    let end = st.size;
    const layout: Omit<ArrowLayout, "schema"> & { schema?: ArrowSchema } = {
      dictionaries: [],
      batches: [],
      batchDictionaries: [],
    };
    const inEffect = new Map<number, ByteRange[]>(); // dictionary id → its batches now in effect
    // The file format's footer lists where each batch is: it must agree with the walk
    // (readers that follow the footer would read other bytes).
    let footerBlocks: { batches: FileBlock[]; dictionaries: FileBlock[] } | undefined;
    const metaLengths = new Map<number, number>();
    const dictionaryIds = new Set<number>();
    let streamSchema: ArrowSchema | undefined; // the file format's copy, checked against the footer's
    if (isFile) {
      const tail = readAt(fd, st.size - 10, 10);
      if (new TextDecoder().decode(tail.subarray(4)) !== FILE_MAGIC)
        bad(path, "it starts with ARROW1 but has no footer");
      const footerLength = new DataView(tail.buffer, tail.byteOffset).getInt32(0, true);
      end = st.size - 10 - footerLength;
      if (footerLength <= 0 || end < 8) bad(path, `its footer length ${footerLength} does not fit the file`);
      // Writers may leave the schema message out of the file format: the footer has it.
      const footerBytes = readAt(fd, end, footerLength);
      verifyFooter(path, end, footerBytes);
      try {
        const footer = arrowFileLib().Footer.decode(footerBytes);
        layout.schema = footer.schema;
        footerBlocks = { batches: [...footer.recordBatches()], dictionaries: [...footer.dictionaryBatches()] };
      } catch (e) {
        bad(path, `the footer does not decode (${(e as Error).message})`);
      }
    }
    let pos = isFile ? 8 : 0;
    while (pos + 4 <= end) {
      const head = readAt(fd, pos, 8);
      const dv = new DataView(head.buffer, head.byteOffset, head.length);
      let len = dv.getInt32(0, true),
        skip = 4;
      if (len === -1) {
        if (head.length < 8) bad(path, `a message at byte ${pos} is cut short`);
        len = dv.getInt32(4, true);
        skip = 8;
      }
      if (len === 0) {
        // The end of the stream, which nothing but padding may follow (a damaged length
        // can land on zeros in the middle of the data).
        if (end - (pos + skip) > 8)
          bad(path, `it says its data ends at byte ${pos}, but ${end - pos - skip} more bytes follow`);
        break;
      }
      // Writers pad each message's metadata to 8 bytes: another length is damage.
      if (len < 0 || len % 8 !== 0 || pos + skip + len > end)
        bad(path, `the message at byte ${pos} has an impossible length ${len}`);
      const meta = readAt(fd, pos + skip, len);
      verifyMessage(path, pos, meta);
      let msg: Message;
      try {
        msg = arrowLib().Message.decode(meta);
      } catch (e) {
        bad(path, `the message at byte ${pos} does not decode (${(e as Error).message})`);
      }
      const size = skip + len + Number(msg.bodyLength);
      if (pos + size > end) bad(path, `the message at byte ${pos} runs past the end of the data`);
      const range: ByteRange = [pos, size];
      metaLengths.set(pos, skip + len);
      const bodyLength = Number(msg.bodyLength);
      try {
        // Headers decode lazily: a damaged one throws here.
        if (msg.isSchema()) {
          if (layout.schema) streamSchema = msg.header();
          else layout.schema = msg.header();
        } else if (msg.isDictionaryBatch()) {
          const dict = msg.header();
          if (dict.isDelta && !dictionaryIds.has(dict.id))
            bad(path, `the dictionary batch at byte ${pos} extends a dictionary that none before it defines`);
          dictionaryIds.add(dict.id);
          checkBatch(path, pos, bodyLength, dict.data, 1);
          layout.dictionaries.push(range);
          if (dict.isDelta) inEffect.get(Number(dict.id))?.push(range);
          else inEffect.set(Number(dict.id), [range]);
        } else if (msg.isRecordBatch()) {
          checkBatch(path, pos, bodyLength, msg.header(), layout.schema?.fields.length ?? -1);
          layout.batches.push(range);
          layout.batchDictionaries.push([...inEffect.values()].flat());
        } else if (
          msg.headerType === arrowLib().MessageHeader.Tensor ||
          msg.headerType === arrowLib().MessageHeader.SparseTensor
        )
          bad(path, `the message at byte ${pos} is a tensor, not a table`);
        else bad(path, `the message at byte ${pos} has an unknown type ${msg.headerType}`);
      } catch (e) {
        if (e instanceof BasinError) throw e;
        bad(path, `the message at byte ${pos} does not decode (${(e as Error).message})`);
      }
      pos += size;
    }
    if (!layout.schema) bad(path, "it has no schema message");
    const names = layout.schema.fields.map((f) => f.name);
    if (names.some((n) => typeof n !== "string")) bad(path, "a column has no name");
    const twice = names.find((n, i) => names.indexOf(n) !== i);
    if (twice !== undefined) bad(path, `it has two columns named "${twice}"`);
    if (streamSchema && !sameSchema(streamSchema, layout.schema))
      bad(path, "the schema in its footer differs from the one at its start");
    if (footerBlocks) {
      const { batches, dictionaries } = footerBlocks;
      if (batches.length !== layout.batches.length)
        bad(path, `its footer lists ${batches.length} record batches but ${layout.batches.length} were found`);
      const differs = (blocks: FileBlock[], ranges: ByteRange[]) =>
        blocks.findIndex(
          (b, i) =>
            b.offset !== ranges[i]?.[0] ||
            b.metaDataLength !== metaLengths.get(b.offset) ||
            b.metaDataLength + b.bodyLength !== ranges[i][1],
        );
      const batch = differs(batches, layout.batches);
      if (batch >= 0) bad(path, `its footer places record batch ${batch + 1} elsewhere than where it is`);
      if (dictionaries.length !== layout.dictionaries.length || differs(dictionaries, layout.dictionaries) >= 0)
        bad(path, "its footer places the dictionary batches elsewhere than where they are");
    }
    const out = layout as ArrowLayout;
    if (cache.size >= 256) cache.delete(cache.keys().next().value as string);
    cache.set(key, out);
    return out;
  } finally {
    closeSync(fd);
  }
}

/** The Basin schema of an Arrow IPC file, or BASIN_IO naming the first unreadable column. */
export function arrowFileSchema(path: string, loc?: string): Field[] {
  return arrowLayout(path).schema.fields.map((f) => {
    const t = dtypeOfArrow(f.type);
    if (typeof t === "object")
      throw new BasinError(
        "BASIN_IO",
        `${path}: column "${f.name}" has Arrow type ${t.unsupported}, which Basin cannot read; write the file without it or convert it to a number, string, bool, date or timestamp column`,
        loc,
      );
    return { name: f.name, type: t };
  });
}

/** The schema as an IPC stream message (continuation marker, length, padded flatbuffer). */
function schemaMessage(schema: ArrowSchema): Uint8Array {
  const { Message } = arrowLib();
  const meta = Message.encode(Message.from(schema));
  const padded = (meta.length + 7) & ~7;
  const out = new Uint8Array(8 + padded);
  const dv = new DataView(out.buffer);
  dv.setInt32(0, -1, true);
  dv.setInt32(4, padded, true);
  out.set(meta, 8);
  return out;
}

/**
 * Decodes the messages at `ranges` (dictionaries, then record batches) into one
 * table with `columns`.
 *
 * @example
 * scanArrow("t.arrow", [...layout.dictionaries, layout.batches[2]], [{ name: "a", type: "int64" }])
 */
export function scanArrow(path: string, ranges: ByteRange[], columns: Field[]): Handle {
  const layout = arrowLayout(path);
  // Only messages this process's walk verified are decoded: a file changed since the
  // plan was made has other messages at other places.
  const known = new Set([...layout.dictionaries, ...layout.batches].map((r) => r.join()));
  if (ranges.some((r) => !known.has(r.join()))) bad(path, "it changed since the pipeline was planned");
  const head = schemaMessage(layout.schema);
  const total = head.length + ranges.reduce((n, r) => n + r[1], 0);
  const bytes = new Uint8Array(total + 8);
  bytes.set(head);
  const fd = openSync(path, "r");
  try {
    let at = head.length;
    for (const [pos, len] of ranges) {
      const chunk = readAt(fd, pos, len);
      if (chunk.length < len) bad(path, `it is shorter than when the pipeline was planned`);
      bytes.set(chunk, at);
      at += len;
    }
  } finally {
    closeSync(fd);
  }
  new DataView(bytes.buffer).setInt32(total, -1, true); // end-of-stream marker
  let table;
  try {
    table = arrowLib().tableFromIPC(bytes);
  } catch (e) {
    bad(path, `a record batch does not decode (${(e as Error).message})`);
  }
  try {
    return tablesToHandle(
      table.batches.map((b) => batchToJs(b, columns)),
      columns,
    );
  } catch (e) {
    throw BasinError.inFile(e, path);
  }
}
