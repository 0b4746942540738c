// Arrow IPC files (file and stream formats) without reading them whole: the
// message headers are walked to find the schema, dictionary and record batch
// messages, and a worker reads only the bytes of the batches it decodes.
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { Message, MessageHeader, tableFromIPC, type Schema as ArrowSchema } from "apache-arrow";
import { BasinError } from "../common/errors.js";
import type { Field } from "../common/types.js";
import type { Handle } from "../native/addon.js";
import { batchToJs, dtypeOfArrow } from "./arrow_convert.js";
import { tablesToHandle } from "./tables.js";

export type ByteRange = [number, number];

export interface ArrowLayout {
  schema: ArrowSchema;
  schemaRange: ByteRange;
  dictionaries: ByteRange[];
  batches: ByteRange[];
}

const FILE_MAGIC = "ARROW1";
const cache = new Map<string, ArrowLayout>();

function bad(path: string, what: string): never {
  throw new BasinError("BASIN_IO", `${path} is not a readable Arrow IPC file: ${what}; check that it is an Arrow IPC file or stream and was written completely`);
}

function readAt(fd: number, pos: number, length: number): Uint8Array {
  const b = new Uint8Array(length);
  let got = 0;
  while (got < length) {
    const n = readSync(fd, b, got, length - got, pos + got);
    if (n === 0) break;
    got += n;
  }
  return b.subarray(0, got);
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
    // The file format is a stream between the magic and a footer.
    let end = st.size;
    if (isFile) {
      const tail = readAt(fd, st.size - 10, 10);
      if (st.size < 18 || new TextDecoder().decode(tail.subarray(4)) !== FILE_MAGIC) bad(path, "it starts with ARROW1 but has no footer");
      end = st.size - 10 - new DataView(tail.buffer, tail.byteOffset).getInt32(0, true);
    }
    let pos = isFile ? 8 : 0;
    const layout: Partial<ArrowLayout> & { dictionaries: ByteRange[]; batches: ByteRange[] } = { dictionaries: [], batches: [] };
    while (pos + 4 <= end) {
      const head = readAt(fd, pos, 8);
      const dv = new DataView(head.buffer, head.byteOffset, head.length);
      let len = dv.getInt32(0, true), skip = 4;
      if (len === -1) {
        if (head.length < 8) bad(path, `a message at byte ${pos} is cut short`);
        len = dv.getInt32(4, true);
        skip = 8;
      }
      if (len === 0) break; // end of stream
      if (len < 0 || pos + skip + len > end) bad(path, `the message at byte ${pos} has an impossible length ${len}`);
      let msg: Message;
      try {
        msg = Message.decode(readAt(fd, pos + skip, len));
      } catch (e) {
        bad(path, `the message at byte ${pos} does not decode (${(e as Error).message})`);
      }
      const size = skip + len + Number(msg.bodyLength);
      if (pos + size > end) bad(path, `the message at byte ${pos} runs past the end of the data`);
      const range: ByteRange = [pos, size];
      if (msg.isSchema()) {
        if (layout.schema) bad(path, "it has two schemas");
        layout.schema = msg.header();
        layout.schemaRange = range;
      } else if (msg.isDictionaryBatch()) layout.dictionaries.push(range);
      else if (msg.isRecordBatch()) layout.batches.push(range);
      else if (msg.headerType !== MessageHeader.NONE) bad(path, `message type ${msg.headerType} (tensors) is not a table`);
      pos += size;
    }
    if (!layout.schema || !layout.schemaRange) bad(path, "it has no schema message");
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
      throw new BasinError("BASIN_IO", `${path}: column "${f.name}" has Arrow type ${t.unsupported}, which Basin cannot read; write the file without it or convert it to a number, string, bool, date or timestamp column`, loc);
    return { name: f.name, type: t };
  });
}

/**
 * Decodes the messages at `ranges` (schema, dictionaries, then record batches) into
 * one table with `columns`.
 *
 * @example
 * scanArrow("t.arrow", [layout.schemaRange, layout.batches[2]], [{ name: "a", type: "int64" }])
 */
export function scanArrow(path: string, ranges: ByteRange[], columns: Field[]): Handle {
  const total = ranges.reduce((n, r) => n + r[1], 0);
  const bytes = new Uint8Array(total + 8);
  const fd = openSync(path, "r");
  try {
    let at = 0;
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
    table = tableFromIPC(bytes);
  } catch (e) {
    bad(path, `a record batch does not decode (${(e as Error).message})`);
  }
  try {
    return tablesToHandle(table.batches.map((b) => batchToJs(b, columns)), columns);
  } catch (e) {
    throw e instanceof BasinError ? new BasinError(e.code, `${path}: ${e.detail}`) : e;
  }
}
