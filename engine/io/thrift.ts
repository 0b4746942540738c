// A generic Thrift compact-protocol codec, enough for Parquet footers. Values keep
// their wire types, so a decoded struct re-encodes byte for byte; the Parquet
// reader edits footers (offsets, kept columns) and writes them back.

/** Compact-protocol type codes. */
export const T = {
  TRUE: 1,
  FALSE: 2,
  I8: 3,
  I16: 4,
  I32: 5,
  I64: 6,
  DOUBLE: 7,
  BINARY: 8,
  LIST: 9,
  SET: 10,
  MAP: 11,
  STRUCT: 12,
} as const;

export type TValue =
  | { type: 1 | 2; v: boolean }
  | { type: 3 | 4 | 5 | 7; v: number }
  | { type: 6; v: bigint }
  | { type: 8; v: Uint8Array }
  | { type: 9 | 10; elem: number; v: TValue[] }
  | { type: 11; key: number; val: number; v: [TValue, TValue][] }
  | { type: 12; v: TStruct };

/** A struct: field id → value. */
export type TStruct = Map<number, TValue>;

/** Thrown for bytes that are not valid compact Thrift. */
export class ThriftError extends Error {}

class Reader {
  pos = 0;
  constructor(private readonly b: Uint8Array) {}

  byte(): number {
    if (this.pos >= this.b.length) throw new ThriftError("unexpected end of metadata");
    return this.b[this.pos++];
  }

  varint(): bigint {
    let out = 0n,
      shift = 0n;
    for (;;) {
      const x = this.byte();
      out |= BigInt(x & 0x7f) << shift;
      if ((x & 0x80) === 0) return out;
      shift += 7n;
      if (shift > 70n) throw new ThriftError("varint too long");
    }
  }

  zigzag(): bigint {
    const u = this.varint();
    return (u >> 1n) ^ -(u & 1n);
  }

  value(type: number, inList: boolean): TValue {
    switch (type) {
      case T.TRUE:
      case T.FALSE:
        // In a struct the type is the value; in a list each bool is a byte.
        if (!inList) return { type, v: type === T.TRUE };
        return this.byte() === T.TRUE ? { type: T.TRUE, v: true } : { type: T.FALSE, v: false };
      case T.I8: {
        const x = this.byte();
        return { type, v: x > 127 ? x - 256 : x };
      }
      case T.I16:
      case T.I32:
        return { type, v: Number(this.zigzag()) };
      case T.I64:
        return { type, v: this.zigzag() };
      case T.DOUBLE: {
        if (this.pos + 8 > this.b.length) throw new ThriftError("unexpected end of metadata");
        const v = new DataView(this.b.buffer, this.b.byteOffset + this.pos, 8).getFloat64(0, true);
        this.pos += 8;
        return { type, v };
      }
      case T.BINARY: {
        const n = Number(this.varint());
        if (n < 0 || this.pos + n > this.b.length) throw new ThriftError("a string runs past the end of the metadata");
        const v = this.b.subarray(this.pos, this.pos + n);
        this.pos += n;
        return { type, v };
      }
      case T.LIST:
      case T.SET: {
        const h = this.byte();
        const n = h >> 4 === 15 ? Number(this.varint()) : h >> 4;
        const elem = h & 0x0f;
        const v: TValue[] = [];
        for (let i = 0; i < n; i++) v.push(this.value(elem, true));
        return { type, elem, v };
      }
      case T.MAP: {
        const n = Number(this.varint());
        const kv = n > 0 ? this.byte() : 0;
        const key = kv >> 4,
          val = kv & 0x0f;
        const v: [TValue, TValue][] = [];
        for (let i = 0; i < n; i++) v.push([this.value(key, true), this.value(val, true)]);
        return { type, key, val, v };
      }
      case T.STRUCT:
        return { type, v: this.struct() };
      default:
        throw new ThriftError(`unknown field type ${type}`);
    }
  }

  struct(): TStruct {
    const s: TStruct = new Map();
    let last = 0;
    for (;;) {
      const h = this.byte();
      if (h === 0) return s;
      const delta = h >> 4;
      const id = delta === 0 ? Number(this.zigzag()) : last + delta;
      s.set(id, this.value(h & 0x0f, false));
      last = id;
    }
  }
}

class Writer {
  private buf = new Uint8Array(1024);
  len = 0;

  bytes(): Uint8Array {
    return this.buf.subarray(0, this.len);
  }

  byte(x: number): void {
    if (this.len === this.buf.length) {
      const next = new Uint8Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.len++] = x & 0xff;
  }

  raw(b: Uint8Array): void {
    for (const x of b) this.byte(x);
  }

  varint(u: bigint): void {
    do {
      const x = Number(u & 0x7fn);
      u >>= 7n;
      this.byte(u === 0n ? x : x | 0x80);
    } while (u !== 0n);
  }

  zigzag(v: bigint): void {
    this.varint(v >= 0n ? v << 1n : (-v << 1n) - 1n);
  }

  value(t: TValue, inList: boolean): void {
    switch (t.type) {
      case T.TRUE:
      case T.FALSE:
        if (inList) this.byte(t.v ? T.TRUE : T.FALSE);
        break;
      case T.I8:
        this.byte(t.v);
        break;
      case T.I16:
      case T.I32:
        this.zigzag(BigInt(t.v));
        break;
      case T.I64:
        this.zigzag(t.v);
        break;
      case T.DOUBLE: {
        const b = new Uint8Array(8);
        new DataView(b.buffer).setFloat64(0, t.v, true);
        this.raw(b);
        break;
      }
      case T.BINARY:
        this.varint(BigInt(t.v.length));
        this.raw(t.v);
        break;
      case T.LIST:
      case T.SET:
        if (t.v.length < 15) this.byte((t.v.length << 4) | t.elem);
        else {
          this.byte(0xf0 | t.elem);
          this.varint(BigInt(t.v.length));
        }
        for (const x of t.v) this.value(x, true);
        break;
      case T.MAP:
        this.varint(BigInt(t.v.length));
        if (t.v.length > 0) this.byte((t.key << 4) | t.val);
        for (const [k, v] of t.v) {
          this.value(k, true);
          this.value(v, true);
        }
        break;
      case T.STRUCT:
        this.struct(t.v);
        break;
    }
  }

  struct(s: TStruct): void {
    let last = 0;
    for (const id of [...s.keys()].sort((a, b) => a - b)) {
      const v = s.get(id) as TValue;
      // A bool in a struct carries its value in the type nibble.
      const type = v.type === T.TRUE || v.type === T.FALSE ? (v.v ? T.TRUE : T.FALSE) : v.type;
      if (id > last && id - last <= 15) this.byte(((id - last) << 4) | type);
      else {
        this.byte(type);
        this.zigzag(BigInt(id));
      }
      this.value(v, false);
      last = id;
    }
    this.byte(0);
  }
}

/**
 * Decodes one struct from compact-protocol bytes.
 *
 * @example
 * const footer = decodeStruct(bytes); footer.get(3) // num_rows
 */
export function decodeStruct(bytes: Uint8Array): TStruct {
  return decodeStructAt(bytes, 0)[0];
}

/**
 * Decodes one struct starting at byte `at`, and where it ends (a page header is
 * followed by its page).
 *
 * @example
 * const [header, end] = decodeStructAt(chunk, 0);
 */
export function decodeStructAt(bytes: Uint8Array, at: number): [TStruct, number] {
  const r = new Reader(bytes);
  r.pos = at;
  const s = r.struct();
  return [s, r.pos];
}

/** Encodes a struct (as decoded, possibly edited) to compact-protocol bytes. */
export function encodeStruct(s: TStruct): Uint8Array {
  const w = new Writer();
  w.struct(s);
  return w.bytes();
}

// Typed access to decoded fields; undefined when absent or of another type.
export function fieldInt(s: TStruct, id: number): number | undefined {
  const v = s.get(id);
  return v && (v.type === T.I8 || v.type === T.I16 || v.type === T.I32)
    ? v.v
    : v?.type === T.I64
      ? Number(v.v)
      : undefined;
}

export function fieldBig(s: TStruct, id: number): bigint | undefined {
  const v = s.get(id);
  return v?.type === T.I64
    ? v.v
    : v && (v.type === T.I8 || v.type === T.I16 || v.type === T.I32)
      ? BigInt(v.v)
      : undefined;
}

export function fieldBytes(s: TStruct, id: number): Uint8Array | undefined {
  const v = s.get(id);
  return v?.type === T.BINARY ? v.v : undefined;
}

export function fieldString(s: TStruct, id: number): string | undefined {
  const b = fieldBytes(s, id);
  return b ? new TextDecoder().decode(b) : undefined;
}

export function fieldBool(s: TStruct, id: number): boolean | undefined {
  const v = s.get(id);
  return v?.type === T.TRUE || v?.type === T.FALSE ? v.v : undefined;
}

export function fieldStruct(s: TStruct, id: number): TStruct | undefined {
  const v = s.get(id);
  return v?.type === T.STRUCT ? v.v : undefined;
}

export function fieldList(s: TStruct, id: number): TValue[] | undefined {
  const v = s.get(id);
  return v?.type === T.LIST || v?.type === T.SET ? v.v : undefined;
}

/** The structs of a list field ([] when absent). */
export function fieldStructs(s: TStruct, id: number): TStruct[] {
  return (fieldList(s, id) ?? []).flatMap((x) => (x.type === T.STRUCT ? [x.v] : []));
}
