// Arrow IPC files (file and stream formats) without reading them whole: the
// message headers are walked to find the schema, dictionary and record batch
// messages, and a worker reads only the bytes of the batches it decodes.
import { closeSync, openSync, statSync } from "node:fs";
import { Message, MessageHeader, tableFromIPC, type Schema as ArrowSchema } from "apache-arrow";
import { Footer } from "apache-arrow/ipc/metadata/file";
import { BasinError } from "../common/errors.js";
import type { Field } from "../common/types.js";
import type { Handle } from "../native/addon.js";
import { batchToJs, dtypeOfArrow } from "./arrow_convert.js";
import { tablesToHandle } from "./tables.js";
import { readAt } from "./read_at.js";

export type ByteRange = [number, number];

export interface ArrowLayout {
  schema: ArrowSchema;
  dictionaries: ByteRange[];
  batches: ByteRange[];
}

const FILE_MAGIC = "ARROW1";
const cache = new Map<string, ArrowLayout>();

function bad(path: string, what: string): never {
  throw new BasinError(
    "BASIN_IO",
    `${path} is not a readable Arrow IPC file: ${what}; check that it is an Arrow IPC file or stream and was written completely`,
  );
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
    const layout: Partial<ArrowLayout> & { dictionaries: ByteRange[]; batches: ByteRange[] } = {
      dictionaries: [],
      batches: [],
    };
    if (isFile) {
      const tail = readAt(fd, st.size - 10, 10);
      if (st.size < 18 || new TextDecoder().decode(tail.subarray(4)) !== FILE_MAGIC)
        bad(path, "it starts with ARROW1 but has no footer");
      const footerLength = new DataView(tail.buffer, tail.byteOffset).getInt32(0, true);
      end = st.size - 10 - footerLength;
      if (footerLength <= 0 || end < 8) bad(path, `its footer length ${footerLength} does not fit the file`);
      // Writers may leave the schema message out of the file format: the footer has it.
      try {
        layout.schema = Footer.decode(readAt(fd, end, footerLength)).schema;
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
      if (msg.isSchema()) layout.schema ??= msg.header();
      else if (msg.isDictionaryBatch()) layout.dictionaries.push(range);
      else if (msg.isRecordBatch()) layout.batches.push(range);
      else if (msg.headerType !== MessageHeader.NONE)
        bad(path, `message type ${msg.headerType} (tensors) is not a table`);
      pos += size;
    }
    if (!layout.schema) bad(path, "it has no schema message");
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
  const head = schemaMessage(arrowLayout(path).schema);
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
    table = tableFromIPC(bytes);
  } catch (e) {
    bad(path, `a record batch does not decode (${(e as Error).message})`);
  }
  try {
    return tablesToHandle(
      table.batches.map((b) => batchToJs(b, columns)),
      columns,
    );
  } catch (e) {
    throw e instanceof BasinError ? new BasinError(e.code, `${path}: ${e.detail}`) : e;
  }
}
