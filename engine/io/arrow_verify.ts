// A flatbuffers verifier for the Arrow IPC metadata Basin reads (Message, Schema, Field,
// RecordBatch, DictionaryBatch, Footer and what they hold), run before apache-arrow
// decodes a flatbuffer. The flatbuffers library trusts every offset and length it reads:
// a damaged one makes it read outside the table (another field's bytes, or past the
// buffer as zeros) and hand back a wrong answer, or build millions of objects. Here every
// table, vtable, vector, string and union is checked to lie inside the buffer, aligned,
// with known union types and enum values, strings in valid UTF-8, as the flatbuffers
// C++ verifier and Arrow C++ check them.
import { BasinError } from "../common/errors.js";

/**
 * The BASIN_IO error for a damaged or foreign Arrow IPC file.
 *
 * @example
 * notArrow("t.arrow", "it has no schema message"); // throws
 */
export function notArrow(path: string, what: string): never {
  throw new BasinError(
    "BASIN_IO",
    `${path} is not a readable Arrow IPC file: ${what}; check that it is an Arrow IPC file or stream and was written completely`,
  );
}

/** Nesting deeper than Arrow C++ accepts is damage (or a hostile file). */
const MAX_DEPTH = 128;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** One flatbuffer being verified: bounds, alignment and a budget of tables. */
class Buf {
  readonly dv: DataView;
  private tables = 0;
  constructor(
    readonly bytes: Uint8Array,
    /** Where the buffer starts in the file (errors name file offsets). */
    readonly base: number,
    readonly fail: (what: string) => never,
  ) {
    this.dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** `n` bytes at `pos` lie inside the buffer, `pos` a multiple of `align`. */
  check(pos: number, n: number, align: number, what: string): void {
    if (!(pos >= 0 && n >= 0 && pos + n <= this.bytes.length))
      this.fail(
        `${what} at byte ${this.base + pos} runs past the end of its metadata (byte ${this.base + this.bytes.length})`,
      );
    if (pos % align !== 0) this.fail(`${what} at byte ${this.base + pos} is not aligned to ${align} bytes`);
  }

  /** The position an offset at `pos` points to (forward, inside the buffer). */
  follow(pos: number, what: string): number {
    this.check(pos, 4, 4, `the offset of ${what}`);
    const o = this.dv.getUint32(pos, true);
    if (o === 0 || o >= 2 ** 31 || pos + o >= this.bytes.length)
      this.fail(`the offset of ${what} at byte ${this.base + pos} points outside its metadata`);
    return pos + o;
  }

  /** The table at `pos` with its vtable checked. */
  table(pos: number, what: string, depth: number): Table {
    if (depth > MAX_DEPTH) this.fail(`${what} is nested more than ${MAX_DEPTH} deep`);
    // A budget proportional to the buffer, as Arrow C++ sets it: shared subtables cannot
    // make the walk explode.
    if (++this.tables > 8 * this.bytes.length + 64) this.fail(`it holds more tables than its size allows`);
    this.check(pos, 4, 4, what);
    const vt = pos - this.dv.getInt32(pos, true);
    this.check(vt, 4, 2, `the vtable of ${what}`);
    const vsize = this.dv.getUint16(vt, true),
      tsize = this.dv.getUint16(vt + 2, true);
    // flatbuffers' JS reader takes both as signed 16-bit numbers.
    if (vsize < 4 || vsize % 2 !== 0 || vsize >= 0x8000)
      this.fail(`the vtable of ${what} at byte ${this.base + vt} claims an impossible size ${vsize}`);
    this.check(vt, vsize, 2, `the vtable of ${what}`);
    if (tsize < 4 || tsize >= 0x8000)
      this.fail(`${what} at byte ${this.base + pos} claims an impossible size ${tsize}`);
    this.check(pos, tsize, 4, what);
    return new Table(this, pos, vt, vsize, tsize, what, depth);
  }

  /** A vector's start (past its length) and length, its elements inside the buffer. */
  vector(pos: number, elemSize: number, align: number, what: string): [number, number] {
    const v = this.follow(pos, what);
    this.check(v, 4, 4, what);
    const n = this.dv.getUint32(v, true);
    if (n * elemSize > this.bytes.length - v - 4)
      this.fail(
        `${what} at byte ${this.base + v} claims ${n} entries of ${elemSize} bytes, past the end of its metadata (byte ${this.base + this.bytes.length})`,
      );
    if (n > 0) this.check(v + 4, n * elemSize, align, what);
    return [v + 4, n];
  }

  /** A string: inside the buffer, NUL-terminated, valid UTF-8. */
  string(pos: number, what: string): string {
    const [start, n] = this.vector(pos, 1, 1, what);
    this.check(start + n, 1, 1, `the end of ${what}`);
    if (this.bytes[start + n] !== 0) this.fail(`${what} at byte ${this.base + start} is not terminated`);
    try {
      return utf8.decode(this.bytes.subarray(start, start + n));
    } catch {
      this.fail(`${what} at byte ${this.base + start} is not valid UTF-8`);
    }
  }
}

type Members = Record<number, [string, ((t: Table) => void) | null]>;

/** A table whose vtable was checked: its fields by index (0 = the first in the schema). */
class Table {
  constructor(
    private readonly buf: Buf,
    readonly pos: number,
    private readonly vt: number,
    private readonly vsize: number,
    private readonly tsize: number,
    readonly what: string,
    readonly depth: number,
  ) {}

  fail(what: string): never {
    return this.buf.fail(what);
  }

  /** Where field `i` is (0 when absent), `size` bytes inside the table, aligned. */
  private at(i: number, size: number, name: string): number {
    const slot = 4 + 2 * i;
    if (slot + 2 > this.vsize) return 0;
    const off = this.buf.dv.getUint16(this.vt + slot, true);
    if (off === 0) return 0;
    if (off < 4 || off + size > this.tsize)
      this.buf.fail(`the field ${name} of ${this.what} at byte ${this.buf.base + this.pos} lies outside the table`);
    if ((this.pos + off) % size !== 0)
      this.buf.fail(`the field ${name} of ${this.what} at byte ${this.buf.base + this.pos + off} is not aligned`);
    return this.pos + off;
  }

  /** An integer field (`size` bytes, signed), or `dflt` when absent. */
  int(i: number, size: 1 | 2 | 4 | 8, name: string, dflt = 0): number {
    const p = this.at(i, size, name);
    if (!p) return dflt;
    const dv = this.buf.dv;
    return size === 1
      ? dv.getInt8(p)
      : size === 2
        ? dv.getInt16(p, true)
        : size === 4
          ? dv.getInt32(p, true)
          : Number(dv.getBigInt64(p, true));
  }

  /** An unsigned byte (a union's type). */
  ubyte(i: number, name: string): number {
    const p = this.at(i, 1, name);
    return p ? this.buf.bytes[p] : 0;
  }

  /** An enum field whose value must be one of `0..max`. */
  enumOf(i: number, size: 1 | 2, name: string, max: number): number {
    const v = this.int(i, size, name);
    if (!(v >= 0 && v <= max)) this.buf.fail(`${this.what}'s ${name} ${v} is not a known value`);
    return v;
  }

  bool(i: number, name: string): void {
    const p = this.at(i, 1, name);
    if (p && this.buf.bytes[p] > 1) this.buf.fail(`${this.what}'s ${name} is ${this.buf.bytes[p]}, not a boolean`);
  }

  /** The subtable at field `i`, or undefined when absent. */
  table(i: number, name: string): Table | undefined {
    const p = this.at(i, 4, name);
    const what = `${this.what}'s ${name}`;
    return p ? this.buf.table(this.buf.follow(p, what), what, this.depth + 1) : undefined;
  }

  string(i: number, name: string): string | undefined {
    const p = this.at(i, 4, name);
    return p ? this.buf.string(p, `${this.what}'s ${name}`) : undefined;
  }

  /** A vector of scalars or structs: [start, length] ([0, 0] when absent). */
  vector(i: number, elemSize: number, align: number, name: string): [number, number] {
    const p = this.at(i, 4, name);
    return p ? this.buf.vector(p, elemSize, align, `${this.what}'s ${name}`) : [0, 0];
  }

  /** Each table of a vector of tables. */
  tables(i: number, name: string, each: (t: Table, k: number) => void): void {
    const [start, n] = this.vector(i, 4, 4, name);
    for (let k = 0; k < n; k++) {
      const what = `${this.what}'s ${name}[${k}]`;
      each(this.buf.table(this.buf.follow(start + 4 * k, what), what, this.depth + 1), k);
    }
  }

  /**
   * A union: its type (field i) one of `members` (by value: the table's name and its
   * verifier, null for one the caller rejects), its table (field i + 1) verified.
   */
  union(i: number, name: string, members: Members, whatOf: (member: string) => string): number {
    const type = this.ubyte(i, `${name}_type`);
    const p = this.at(i + 1, 4, name);
    if (type === 0 || !p) this.buf.fail(`${this.what} has no ${name}`);
    const member = members[type];
    if (member === undefined) this.buf.fail(`${this.what}'s ${name} is of an unknown kind ${type}`);
    const [memberName, verify] = member;
    if (verify) {
      const what = whatOf(memberName);
      verify(this.buf.table(this.buf.follow(p, what), what, this.depth + 1));
    }
    return type;
  }
}

// The tables of Schema.fbs, Message.fbs and File.fbs, their fields in schema order.

const keyValues = (t: Table, i: number) =>
  t.tables(i, "custom_metadata", (kv) => {
    kv.string(0, "key");
    kv.string(1, "value");
  });

const intType = (t: Table) => {
  const width = t.int(0, 4, "bitWidth");
  if (![8, 16, 32, 64].includes(width)) t.fail(`${t.what}'s bitWidth ${width} is not 8, 16, 32 or 64`);
  t.bool(1, "is_signed");
};

const empty = () => {};
const unit = (max: number) => (t: Table) => void t.enumOf(0, 2, "unit", max);
/** Type (Schema.fbs), by union value: the tables of the types a Field may have. */
const TYPES: Members = {
  1: ["Null", empty],
  2: ["Int", intType],
  3: ["FloatingPoint", (t) => void t.enumOf(0, 2, "precision", 2)],
  4: ["Binary", empty],
  5: ["Utf8", empty],
  6: ["Bool", empty],
  7: [
    "Decimal",
    (t) => {
      t.int(0, 4, "precision");
      t.int(1, 4, "scale");
      t.int(2, 4, "bitWidth");
    },
  ],
  8: ["Date", unit(1)],
  9: [
    "Time",
    (t) => {
      t.enumOf(0, 2, "unit", 3);
      t.int(1, 4, "bitWidth");
    },
  ],
  10: [
    "Timestamp",
    (t) => {
      t.enumOf(0, 2, "unit", 3);
      t.string(1, "timezone");
    },
  ],
  11: ["Interval", unit(2)],
  12: ["List", empty],
  13: ["Struct_", empty],
  14: [
    "Union",
    (t) => {
      t.enumOf(0, 2, "mode", 1);
      t.vector(1, 4, 4, "typeIds");
    },
  ],
  15: ["FixedSizeBinary", (t) => void t.int(0, 4, "byteWidth")],
  16: ["FixedSizeList", (t) => void t.int(0, 4, "listSize")],
  17: ["Map", (t) => t.bool(0, "keysSorted")],
  18: ["Duration", unit(3)],
  19: ["LargeBinary", empty],
  20: ["LargeUtf8", empty],
  21: ["LargeList", empty],
  22: ["RunEndEncoded", empty],
  23: ["BinaryView", empty],
  24: ["Utf8View", empty],
  25: ["ListView", empty],
  26: ["LargeListView", empty],
};

/** Nested types by union value: how many children each must have (apache-arrow reads them unchecked). */
const CHILDREN: Record<number, number> = { 12: 1, 16: 1, 17: 1, 21: 1, 22: 2, 25: 1, 26: 1 };

/** A field and its children; returns its type (union value) and how many children it has. */
function field(t: Table): [number, number] {
  t.string(0, "name");
  t.bool(1, "nullable");
  const type = t.union(2, "type", TYPES, (type) => `${t.what}'s ${type} type`);
  const dict = t.table(4, "dictionary");
  if (dict) {
    dict.int(0, 8, "id");
    const index = dict.table(1, "indexType");
    if (index) intType(index);
    dict.bool(2, "isOrdered");
    dict.enumOf(3, 2, "dictionaryKind", 0);
  }
  const kids: [number, number][] = [];
  t.tables(5, "children", (c) => kids.push(field(c)));
  const want = CHILDREN[type];
  if (want !== undefined && kids.length !== want)
    t.fail(`${t.what} is a ${TYPES[type][0]} with ${kids.length} children, not ${want}`);
  // A map's one child is its entries: a struct of the key and the value.
  if (type === 17 && !(kids[0][0] === 13 && kids[0][1] === 2))
    t.fail(`${t.what} is a Map whose entries are not a struct of a key and a value`);
  keyValues(t, 6);
  return [type, kids.length];
}

function schema(t: Table): void {
  if (t.enumOf(0, 2, "endianness", 1) === 1)
    t.fail("it is big-endian, which Basin cannot read; write it little-endian (the default)");
  t.tables(1, "fields", field);
  keyValues(t, 2);
  t.vector(3, 8, 8, "features");
}

/** FieldNode and Buffer are two longs each. */
const STRUCT16 = 16;

function recordBatch(t: Table): void {
  if (t.int(0, 8, "length") < 0) t.fail(`${t.what} claims a negative number of rows`);
  t.vector(1, STRUCT16, 8, "nodes");
  t.vector(2, STRUCT16, 8, "buffers");
  const compression = t.table(3, "compression");
  if (compression) {
    compression.enumOf(0, 1, "codec", 1);
    compression.enumOf(1, 1, "method", 0);
  }
  t.vector(4, 8, 8, "variadicBufferCounts");
}

const MESSAGE_HEADERS: Members = {
  1: ["Schema", schema],
  2: [
    "DictionaryBatch",
    (t) => {
      t.int(0, 8, "id");
      const data = t.table(1, "data");
      if (!data) return t.fail("a dictionary batch has no data");
      recordBatch(data);
      t.bool(2, "isDelta");
    },
  ],
  3: ["RecordBatch", recordBatch],
  // Tensors are well-formed messages Basin does not read: the caller says so.
  4: ["Tensor", null],
  5: ["SparseTensor", null],
};

/** The flatbuffer's root table. */
function root(bytes: Uint8Array, base: number, name: string, fail: (what: string) => never): Table {
  const buf = new Buf(bytes, base, fail);
  return buf.table(buf.follow(0, name), name, 0);
}

/**
 * Checks a message's metadata flatbuffer (the bytes after its length, `at` bytes into
 * `path`) before apache-arrow decodes it; BASIN_IO naming the file and the damage.
 *
 * @example
 * verifyMessage("t.arrow", 8, metadataBytes);
 * Message.decode(metadataBytes); // reads only inside the buffer
 */
export function verifyMessage(path: string, at: number, bytes: Uint8Array): void {
  const fail = (what: string): never => notArrow(path, `the message at byte ${at}: ${what}`);
  const t = root(bytes, at, "the message", fail);
  t.enumOf(0, 2, "version", 4);
  t.union(1, "header", MESSAGE_HEADERS, (type) => `the ${type}`);
  if (t.int(3, 8, "bodyLength") < 0) fail("its body length is negative");
  keyValues(t, 4);
}

/**
 * Checks the file format's footer flatbuffer (`at` bytes into `path`) before apache-arrow
 * decodes it.
 *
 * @example
 * verifyFooter("t.arrow", end, footerBytes);
 */
export function verifyFooter(path: string, at: number, bytes: Uint8Array): void {
  const fail = (what: string): never => notArrow(path, `its footer: ${what}`);
  const t = root(bytes, at, "the footer", fail);
  t.enumOf(0, 2, "version", 4);
  const s = t.table(1, "schema");
  if (!s) return fail("it has no schema");
  schema(s);
  // Block: offset (long), metaDataLength (int, padded), bodyLength (long).
  t.vector(2, 24, 8, "dictionaries");
  t.vector(3, 24, 8, "recordBatches");
  keyValues(t, 4);
}
