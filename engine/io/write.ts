// Writes a result to one CSV, Parquet or Arrow IPC file, chunk by chunk in order,
// into a temporary file in the same folder that is renamed over the real name only
// once complete: a failure never leaves half a file behind.
import { randomBytes } from "node:crypto";
import {
  accessSync,
  closeSync,
  existsSync,
  constants,
  createWriteStream,
  linkSync,
  lstatSync,
  openSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  unlink,
  unlinkSync,
  writeSync,
  type Stats,
  type WriteStream,
} from "node:fs";
import { once } from "node:events";
import { basename, dirname, extname, join, resolve } from "node:path";
import type { RecordBatch as WasmBatch } from "parquet-wasm";
import { csvField } from "../common/csv_field.js";
import { removeOrphans } from "../memory/orphans.js";
import { BasinError, type SourceLocation } from "../common/errors.js";
import type { Field } from "../common/types.js";
import { pinResident } from "../memory/resident.js";
import { native, type Handle, type JsStrings, type JsTable } from "../native/addon.js";
import { arrowTypeOf, jsToBatch } from "./arrow_convert.js";
import { arrowFileLib, arrowLib, parquetLib } from "./arrow_lib.js";
import { emptyTable } from "./tables.js";
import type { Step } from "../graph/tasks.js";
import { PARQUET_CODECS, parquetProps } from "./write_part.js";
import { mergeParquetFooters } from "./parquet_merge.js";
import { dateText, timestampParts } from "../common/civil_text.js";

export type OutputFormat = "csv" | "parquet" | "arrow";

export interface WriteParquetOptions {
  /** Default "snappy". */
  compression?: "snappy" | "zstd" | "uncompressed";
  /** Rows per row group (default 1,048,576, as in arrow-rs). */
  rowGroupSize?: number;
}

/** What a writer did. */
export interface WriteSummary {
  path: string;
  rows: number;
  bytes: number;
  /** A folder output's part files (absent for one file). */
  files?: number;
}

/** A result to write: its schema and its rows in chunks, in order. */
export interface ChunkSource {
  schema: Field[];
  rows: number;
  chunks(): AsyncIterable<JsTable>;
}

const EXTENSIONS: Record<string, OutputFormat> = {
  ".csv": "csv",
  ".parquet": "parquet",
  ".pq": "parquet",
  ".arrow": "arrow",
  ".feather": "arrow",
  ".ipc": "arrow",
};

/**
 * The output format a file name asks for, or a clear error naming the supported ones.
 *
 * @example
 * outputFormat("out/result.parquet") // "parquet"
 */
export function outputFormat(path: string, loc?: SourceLocation): OutputFormat {
  const f = EXTENSIONS[extname(path).toLowerCase()];
  if (!f)
    throw new BasinError(
      "BASIN_PLAN",
      `cannot write "${path}": use a .csv, .parquet or .arrow (Arrow IPC) file name`,
      loc,
    );
  return f;
}

/**
 * The format of a folder output's part files: its name's extension ("out.csv/"), else Parquet.
 *
 * @example
 * folderFormat("out/") // "parquet"
 */
export function folderFormat(path: string): OutputFormat {
  return EXTENSIONS[extname(path.replace(/[/\\]+$/, "")).toLowerCase()] ?? "parquet";
}

/**
 * What is at `path`, or undefined when nothing is (or a part of the path is a file,
 * so nothing can be).
 *
 * @example
 * pathStat("out.csv")?.isDirectory() // false
 */
export function pathStat(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/** What a path that is neither a file nor a folder is, for errors. */
function specialKind(st: Stats): string {
  if (st.isFIFO()) return "a named pipe (FIFO)";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "a device";
  if (st.isSocket()) return "a socket";
  return "not a regular file";
}

/**
 * Fails early (before any work) when `path` cannot be written: a missing or read-only
 * folder, a folder in the way (unless `folder`: a folder output may replace one), or
 * a pipe, device or socket (the write goes to a temp file renamed over the path, which
 * would replace it).
 */
export function checkWritable(path: string, loc?: SourceLocation, folder = false): void {
  const dir = dirname(resolve(path));
  const st = pathStat(dir);
  if (!st || !st.isDirectory())
    throw new BasinError(
      "BASIN_IO",
      st
        ? `cannot write ${path}: ${dirname(path)} is a file, not a folder; name a path inside a folder`
        : `cannot write ${path}: the folder ${dirname(path)} does not exist; create it first`,
      loc,
    );
  try {
    accessSync(dir, constants.W_OK);
  } catch {
    throw new BasinError(
      "BASIN_IO",
      `cannot write ${path}: the folder ${dirname(path)} is not writable; pick another place`,
      loc,
    );
  }
  const at = pathStat(path);
  if (!folder && at?.isDirectory())
    throw new BasinError("BASIN_IO", `cannot write ${path}: it is a folder; name a file inside it`, loc);
  if (at && !at.isDirectory() && !at.isFile())
    throw new BasinError(
      "BASIN_IO",
      `cannot write ${path}: it is ${specialKind(at)}, which the write would replace (Basin writes a temp file and renames it into place); name ${folder ? "a folder" : "a regular file"}`,
      loc,
    );
}

/**
 * Rows of a table in the store, or of a result's partitions in order, copied to JS
 * `rowsPerChunk` at a time (the store keeps them; a spilled part is read back only
 * when its turn comes). `onPart` hears when each part has been read, for progress.
 */
export function storeChunks(
  h: Handle | Handle[],
  rowsPerChunk = 1 << 16,
  onPart?: (done: number, total: number) => void,
): ChunkSource {
  const parts = Array.isArray(h) ? h : [h];
  const info = native().tableInfo(parts[0]);
  const rows = parts.map((p) => native().tableRows(p));
  const total = rows.reduce((a, b) => a + b, 0);
  return {
    schema: info.names.map((name, i) => ({ name, type: info.types[i] })),
    rows: total,
    async *chunks() {
      // An empty result still yields one (empty) chunk, for the schema.
      if (total === 0) yield native().tableToJs(parts[0]);
      for (let i = 0; i < parts.length; i++) {
        if (rows[i] === 0) {
          onPart?.(i + 1, parts.length);
          continue;
        }
        // The part stays in memory (read back off the JS thread) while its chunks are copied.
        const addon = native();
        const unpin = await pinResident(parts[i]);
        try {
          for (let at = 0; at < rows[i]; at += rowsPerChunk) {
            const part = addon.slice(parts[i], at, Math.min(rowsPerChunk, rows[i] - at));
            try {
              yield addon.tableToJs(part);
            } finally {
              addon.release(part);
            }
          }
        } finally {
          unpin();
        }
        onPart?.(i + 1, parts.length);
      }
    },
  };
}

/** A table already in JS memory as one chunk. */
export function jsChunks(t: JsTable): ChunkSource {
  const schema = t.names.map((name, i) => ({ name, type: t.columns[i].type }));
  return {
    schema,
    rows: t.rows,
    async *chunks() {
      yield t;
    },
  };
}

// ---- CSV ----

function timestampText(us: bigint): string {
  const { date, time, micros } = timestampParts(us);
  return micros === 0 ? `${date} ${time}` : `${date} ${time}.${String(micros).padStart(6, "0")}`;
}

/** One chunk as CSV lines (RFC 4180 quoting; null is an empty field, the empty string is ""). */
export function csvLines(t: JsTable): string {
  const utf8 = new TextDecoder();
  const cells = t.columns.map((c): ((i: number) => string) => {
    const v = c.values;
    switch (c.type) {
      case "int64":
        return (i) => String((v as BigInt64Array)[i]);
      case "float64":
        return (i) => String((v as Float64Array)[i]);
      case "bool":
        return (i) => ((v as Uint8Array)[i] ? "true" : "false");
      case "date":
        return (i) => dateText((v as Int32Array)[i]);
      case "timestamp":
        return (i) => timestampText((v as BigInt64Array)[i]);
      case "string": {
        const s = v as JsStrings;
        return (i) => {
          const text = utf8.decode(s.chars.subarray(s.offsets[i], s.offsets[i + 1]));
          return text === "" ? '""' : csvField(text);
        };
      }
    }
  });
  let out = "";
  for (let r = 0; r < t.rows; r++) {
    let line = "";
    for (let c = 0; c < cells.length; c++) {
      const valid = t.columns[c].validity;
      if (c > 0) line += ",";
      if (!valid || valid[r]) line += cells[c](r);
    }
    out += line + "\n";
  }
  return out;
}

async function put(ws: WriteStream, data: string | Uint8Array): Promise<void> {
  // once() rejects on "error" too, and removes both listeners when either fires (an
  // extra once(ws, "error") per wait piled up listeners: MaxListenersExceededWarning).
  if (!ws.write(data)) await once(ws, "drain");
}

async function writeCsv(src: ChunkSource, ws: WriteStream): Promise<void> {
  await put(ws, src.schema.map((f) => csvField(f.name)).join(",") + "\n");
  for await (const chunk of src.chunks()) await put(ws, csvLines(chunk));
}

// ---- Arrow IPC ----

async function writeArrow(src: ChunkSource, ws: WriteStream): Promise<void> {
  const writer = new (arrowLib().RecordBatchFileWriter)();
  writer.pipe(ws);
  let wrote = false;
  for await (const chunk of src.chunks()) {
    if (chunk.rows === 0 && wrote) continue;
    writer.write(jsToBatch(chunk));
    wrote = true;
    await new Promise((r) => setImmediate(r)); // let the bytes flow out before the next chunk
  }
  if (!wrote) writer.write(jsToBatch(emptyTable(src.schema)));
  writer.finish();
}

// ---- Parquet ----

/** Checks writer options, naming the bad one. */
export function checkParquetOptions(o: WriteParquetOptions, loc?: SourceLocation): void {
  if (o.compression !== undefined && !(o.compression in PARQUET_CODECS))
    throw new BasinError(
      "BASIN_PLAN",
      `compression must be one of ${Object.keys(PARQUET_CODECS).join(", ")}, got ${JSON.stringify(o.compression)}`,
      loc,
    );
  if (o.rowGroupSize !== undefined && (!Number.isInteger(o.rowGroupSize) || o.rowGroupSize < 1))
    throw new BasinError("BASIN_PLAN", `rowGroupSize must be a positive integer, got ${o.rowGroupSize}`, loc);
}

async function writeParquetFile(src: ChunkSource, ws: WriteStream, o: WriteParquetOptions): Promise<void> {
  const props = parquetProps(o);
  // Chunks go to the wasm writer one at a time as it pulls them.
  const it = src.chunks()[Symbol.asyncIterator]();
  let wrote = false;
  // The wasm writer reports a failed source as "Dyn casting error", or not at all: keep the cause.
  let cause: unknown;
  const batches = new ReadableStream<WasmBatch>({
    async pull(controller) {
      let next: IteratorResult<JsTable>;
      try {
        next = await it.next();
      } catch (e) {
        cause = e;
        throw e;
      }
      if (next.done && wrote) return controller.close();
      const js = next.done ? emptyTable(src.schema) : next.value;
      wrote = true;
      const { tableToIPC, Table: ArrowTable } = arrowLib();
      const table = parquetLib().Table.fromIPCStream(tableToIPC(new ArrowTable([jsToBatch(js)]), "stream"));
      for (const b of table.recordBatches()) controller.enqueue(b);
      if (next.done) controller.close();
    },
  });
  try {
    const out = await parquetLib().transformParquetStream(batches, props);
    for await (const bytes of out as unknown as AsyncIterable<Uint8Array>) await put(ws, bytes);
  } catch (e) {
    throw cause ?? e;
  }
  // A source that failed after some batches may end the wasm stream without an error:
  // the file would hold only the rows before the failure.
  if (cause) throw cause;
}

/** What is at `path` itself (a link, not what it leads to), or undefined where nothing can be (a part of it is a file: checkWritable says so). */
function pathLstat(path: string): Stats | undefined {
  try {
    return lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** The file or folder a symbolic link leads to (through every link on the way), or `path` itself. */
export function linkTarget(path: string): string {
  for (let hops = 0; hops < 40; hops++) {
    const st = pathLstat(path);
    if (!st?.isSymbolicLink()) return path;
    path = resolve(dirname(path), readlinkSync(path));
  }
  throw new BasinError("BASIN_IO", `cannot write ${path}: its links go round in a circle`);
}

/** `src`, stopping with BASIN_CANCELLED at the next chunk once `signal` aborts. */
function cancellable(src: ChunkSource, signal: AbortSignal): ChunkSource {
  return {
    ...src,
    async *chunks() {
      for await (const chunk of src.chunks()) {
        if (signal.aborted)
          throw new BasinError("BASIN_CANCELLED", `the write was cancelled (${String(signal.reason)})`);
        yield chunk;
      }
    },
  };
}

/**
 * A hidden, unpredictable name beside `path` for the temp file a write renames over it.
 * Open it with O_EXCL ("wx"): a file or link planted there then fails the write
 * instead of being followed.
 *
 * @example
 * writeFileSync(tempBeside("a.ts", "basin-save"), text, { flag: "wx" });
 */
export function tempBeside(path: string, tag: string): string {
  return join(dirname(path), `.${basename(path)}.${tag}-${process.pid}-${randomBytes(9).toString("base64url")}`);
}

/** Links to replaced files whose removal is under way: removed at once if the process exits first. */
const removing = new Set<string>();

function removePending(): void {
  for (const p of removing) rmSync(p, { force: true });
}

/**
 * Removes the link to a replaced file off the JS thread: freeing a large file's blocks
 * and pages took 0.1–1 s per GB there (more while its pages were being written back).
 */
function removeLater(old: string): void {
  if (removing.size === 0) process.once("exit", removePending);
  removing.add(old);
  unlink(old, () => {
    removing.delete(old);
    if (removing.size === 0) process.off("exit", removePending);
  });
}

/**
 * A hard link beside the file at `path` (its name), so that renaming a new file over
 * `path` does not free the old one's data there and then; undefined when there is no
 * file or the file system has no hard links (the rename then frees it, as it would).
 */
function linkAside(path: string): string | undefined {
  if (!statSync(path, { throwIfNoEntry: false })?.isFile()) return undefined;
  const old = tempBeside(path, "old");
  try {
    linkSync(path, old);
    return old;
  } catch {
    return undefined;
  }
}

/**
 * Writes a file at `path` through a temporary file beside it: `fill` writes the temp
 * file (named, not yet created); the temp file is then renamed over `path`, or removed
 * when `fill` fails, so `path` holds the old file or the whole new one. A link at
 * `path` keeps pointing at the file it names. Resolves to the file's size.
 *
 * @example
 * await writeThroughTemp("out.csv", loc, async (tmp) => { writeFileSync(tmp, text, { flag: "wx" }); return text.length; });
 */
export async function writeThroughTemp(
  path: string,
  loc: SourceLocation | undefined,
  fill: (tmp: string) => Promise<unknown>,
): Promise<number> {
  // Onto a link: the file it points to is replaced, and the link stays.
  path = linkTarget(path);
  checkWritable(path, loc);
  // A write that was killed (SIGKILL) left its temp file, or a link to the file it
  // replaced: the next write removes them.
  removeOrphans(dirname(path), `.${basename(path)}.partial-`);
  removeOrphans(dirname(path), `.${basename(path)}.old-`);
  const tmp = tempBeside(path, "partial");
  const existed = existsSync(path);
  let old: string | undefined;
  try {
    await fill(tmp);
    // What is on disk: a sink's own count includes what joining its parts dropped
    // (each CSV part's header, each Parquet part's magic, each Arrow part's schema).
    const bytes = statSync(tmp).size;
    old = linkAside(path);
    renameSync(tmp, path);
    if (old) removeLater(old);
    return bytes;
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      // never created
    }
    if (old) rmSync(old, { force: true });
    // A run cancelled while it wrote (Ctrl+C) says what became of the file.
    if (
      e instanceof BasinError &&
      e.code === "BASIN_CANCELLED" &&
      !/; (the old file is kept|nothing was written)$/.test(e.detail)
    )
      throw new BasinError(
        e.code,
        `${e.detail}; ${existed ? "the old file is kept" : "nothing was written"}`,
        e.location ?? loc,
      );
    if (e instanceof BasinError) throw e;
    throw new BasinError("BASIN_IO", `cannot write ${path}: ${(e as Error).message ?? String(e)}`, loc);
  }
}

/**
 * Writes a CSV file whose rows are formatted off the JS thread: the header goes first,
 * then `run` runs the writer step it is given for every part of the result (on a
 * cluster's workers, each part as soon as it is made; see engine/graph/write_tasks.ts)
 * and resolves with the rows written. The parts land in the file in part order
 * (native/src/io/csv_write.h PartSink), through a temp file renamed at the end.
 *
 * @example
 * await writeCsvParts(schema, "out.csv", loc, (step) => runTheSteps(step));
 */
export function writeCsvParts(
  schema: Field[],
  path: string,
  loc: SourceLocation | undefined,
  run: (step: (part: number) => Step) => Promise<number>,
): Promise<WriteSummary> {
  const header = Buffer.from(schema.map((f) => csvField(f.name)).join(",") + "\n");
  return writeSinkFile(path, loc, header, (sink, part) => ({ kind: "writeCsvPart", sink, part }), undefined, run);
}

/**
 * Writes a Parquet file whose row groups are encoded off the JS thread, a part per
 * write step as in {@link writeCsvParts}; the parts' footers are merged into the file's
 * (engine/io/parquet_merge.ts).
 *
 * @example
 * await writeParquetParts("out.parquet", {}, loc, (step) => runTheSteps(step));
 */
export function writeParquetParts(
  path: string,
  options: WriteParquetOptions,
  loc: SourceLocation | undefined,
  run: (step: (part: number) => Step) => Promise<number>,
): Promise<WriteSummary> {
  const parquet = { compression: options.compression, rowGroupSize: options.rowGroupSize };
  return writeSinkFile(
    path,
    loc,
    PARQUET_MAGIC,
    (sink, part) => ({ kind: "writeParquetPart", sink, part, parquet }),
    (sink) => {
      const footer = mergeParquetFooters(native().sinkTrailers(sink));
      const tail = Buffer.alloc(footer.length + 8);
      tail.set(footer, 0);
      tail.writeUInt32LE(footer.length, footer.length);
      tail.set(PARQUET_MAGIC, footer.length + 4);
      return tail;
    },
    run,
  );
}

const PARQUET_MAGIC = Buffer.from("PAR1");

/**
 * Writes an Arrow IPC file whose record batches are encoded off the JS thread, a part
 * per write step as in {@link writeCsvParts} (native/src/io/arrow_write.h); the schema
 * message goes first and the footer lists every batch where it landed.
 *
 * @example
 * await writeArrowParts(schema, "out.arrow", loc, (step) => runTheSteps(step));
 */
export function writeArrowParts(
  schema: Field[],
  path: string,
  loc: SourceLocation | undefined,
  run: (step: (part: number) => Step) => Promise<number>,
): Promise<WriteSummary> {
  const { Schema: ArrowSchema, Field: ArrowField, tableToIPC, Table: ArrowTable, MetadataVersion } = arrowLib();
  const { FileBlock, Footer } = arrowFileLib();
  const arrowSchema = new ArrowSchema(schema.map((f) => new ArrowField(f.name, arrowTypeOf(f.type), true)));
  const stream = tableToIPC(new ArrowTable(arrowSchema), "stream");
  // The stream's first message is the schema (continuation, size, metadata; no body).
  const schemaEnd = 8 + new DataView(stream.buffer, stream.byteOffset, stream.byteLength).getInt32(4, true);
  const head = Buffer.concat([ARROW_MAGIC, stream.subarray(0, schemaEnd)]);
  return writeSinkFile(
    path,
    loc,
    head,
    (sink, part) => ({ kind: "writeArrowPart", sink, part }),
    (sink) => {
      const blocks = native()
        .sinkTrailers(sink)
        .flatMap((t) => {
          const dv = new DataView(t.trailer.buffer, t.trailer.byteOffset, t.trailer.byteLength);
          return Array.from({ length: t.trailer.byteLength / 24 }, (_, b) => {
            const at = 24 * b;
            const offset = t.start + Number(dv.getBigInt64(at, true));
            return new FileBlock(Number(dv.getBigInt64(at + 8, true)), dv.getBigInt64(at + 16, true), offset);
          });
        });
      const footer = Footer.encode(new Footer(arrowSchema, MetadataVersion.V5, blocks, []));
      const tail = Buffer.alloc(8 + footer.length + 4 + 6);
      tail.writeInt32LE(-1, 0); // end of stream: continuation, then size 0
      tail.set(footer, 8);
      tail.writeInt32LE(footer.length, 8 + footer.length);
      tail.write("ARROW1", 12 + footer.length, "latin1");
      return tail;
    },
    run,
  );
}

/** "ARROW1" padded to 8 bytes: an Arrow IPC file's start. */
const ARROW_MAGIC = Buffer.from("ARROW1\0\0", "latin1");

/**
 * A file made of `head`, the parts the workers' write steps put into an ordered sink,
 * and `tail(sink)` once they are all written; through a temp file renamed at the end.
 */
async function writeSinkFile(
  path: string,
  loc: SourceLocation | undefined,
  head: Uint8Array,
  step: (sink: number, part: number) => Step,
  tail: ((sink: number) => Uint8Array) | undefined,
  run: (step: (part: number) => Step) => Promise<number>,
): Promise<WriteSummary> {
  let rows = 0;
  const bytes = await writeThroughTemp(path, loc, async (tmp) => {
    const addon = native();
    const fd = openSync(tmp, "wx");
    let sink: number;
    try {
      writeSync(fd, head);
      sink = addon.sinkOpen(fd, head.length); // the sink owns fd from here on
    } catch (e) {
      closeFd(fd);
      throw e;
    }
    // A write that failed in a worker fails its task, and so the run: name the file.
    const failed = () => {
      const why = addon.sinkStatus(sink).error?.replace(/^cannot write the file: /, "");
      return why === undefined ? undefined : new BasinError("BASIN_IO", `cannot write ${path}: ${why}`, loc);
    };
    try {
      rows = await run((part) => step(sink, part));
      if (tail) addon.sinkAppend(sink, addon.sinkStatus(sink).parts, tail(sink));
      const e = failed();
      if (e) throw e;
      return head.length + addon.sinkStatus(sink).bytes;
    } catch (e) {
      throw failed() ?? e;
    } finally {
      addon.sinkClose(sink);
    }
  });
  return { path, rows, bytes };
}

function closeFd(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
}

/**
 * Writes `src` to `path` in `format`, through a temporary file in the same folder.
 *
 * @example
 * await writeFile(storeChunks(handle), "out.parquet", "parquet", { compression: "zstd" })
 */
export async function writeFile(
  src: ChunkSource,
  path: string,
  format: OutputFormat,
  options: WriteParquetOptions = {},
  loc?: SourceLocation,
  signal?: AbortSignal,
): Promise<WriteSummary> {
  if (signal) src = cancellable(src, signal);
  const bytes = await writeThroughTemp(path, loc, async (tmp) => {
    const ws = createWriteStream(tmp, { flags: "wx" });
    const failed = once(ws, "error").then(([e]) => Promise.reject(e as Error));
    failed.catch(() => undefined);
    try {
      const write =
        format === "csv"
          ? writeCsv(src, ws)
          : format === "arrow"
            ? writeArrow(src, ws)
            : writeParquetFile(src, ws, options);
      await Promise.race([write, failed]);
      if (format !== "arrow") ws.end(); // the Arrow writer ends the stream it pipes into
      await Promise.race([once(ws, "finish"), failed]);
      return ws.bytesWritten;
    } catch (e) {
      // The stream opens its file asynchronously: wait until it is closed, so the file is
      // there to remove (removing it before the open completes left an empty temp file).
      ws.destroy();
      if (!ws.closed) await once(ws, "close").catch(() => undefined);
      throw e;
    }
  });
  return { path, rows: src.rows, bytes };
}
