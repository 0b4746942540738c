// One Parquet file from many one-row-group files written apart (by workers, in
// order): their row groups are copied one after another and a footer listing them all
// is written at the end, with each column chunk's offsets moved to where its bytes
// now lie. Page indexes are left out (their entries hold absolute offsets).
import { closeSync, openSync, renameSync, writeSync } from "node:fs";
import {
  decodeStruct,
  encodeStruct,
  fieldBig,
  fieldStruct,
  fieldStructs,
  T,
  type TStruct,
} from "../../../engine/io/thrift.js";

const MAGIC = new TextEncoder().encode("PAR1");

/** Writes `path` (through `path.partial`, renamed when finished) from one-row-group Parquet files. */
export class ParquetStitcher {
  private readonly fd: number;
  private pos = 0;
  private rows = 0n;
  private first: TStruct | null = null;
  private readonly groups: TStruct[] = [];

  constructor(private readonly path: string) {
    this.fd = openSync(`${path}.partial`, "w");
    this.write(MAGIC);
  }

  private write(b: Uint8Array): void {
    let done = 0;
    while (done < b.length) done += writeSync(this.fd, b, done, b.length - done);
    this.pos += b.length;
  }

  /** Appends every row group of a whole Parquet file. */
  append(file: Uint8Array): void {
    const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
    const footerLen = view.getInt32(file.length - 8, true);
    const footerAt = file.length - 8 - footerLen;
    // A copy: decoded strings are views of their bytes, and would keep the whole chunk alive.
    const meta = decodeStruct(file.slice(footerAt, file.length - 8));
    if (!this.first) this.first = meta;
    // The row groups' bytes end where the page indexes (or the footer) begin.
    let dataEnd = footerAt;
    const groups = fieldStructs(meta, 4);
    for (const g of groups)
      for (const cc of fieldStructs(g, 1))
        for (const id of [4, 6]) {
          const at = fieldBig(cc, id);
          if (at !== undefined && at > 0n) dataEnd = Math.min(dataEnd, Number(at));
        }
    const delta = BigInt(this.pos - MAGIC.length);
    const shift = (s: TStruct, id: number) => {
      const v = fieldBig(s, id);
      if (v !== undefined && v > 0n) s.set(id, { type: T.I64, v: v + delta });
    };
    for (const g of groups) {
      shift(g, 5);
      for (const cc of fieldStructs(g, 1)) {
        for (const id of [4, 5, 6, 7]) cc.delete(id);
        shift(cc, 2);
        const md = fieldStruct(cc, 3);
        if (md) for (const id of [9, 10, 11]) shift(md, id);
      }
      g.set(7, { type: T.I16, v: this.groups.length });
      this.groups.push(g);
      this.rows += fieldBig(g, 3) ?? 0n;
    }
    this.write(file.subarray(MAGIC.length, dataEnd));
  }

  /** Writes the footer and puts the file in place. */
  finish(): { rows: number; bytes: number } {
    if (!this.first) throw new Error(`${this.path}: no row groups to write`);
    const meta: TStruct = new Map(this.first);
    meta.set(3, { type: T.I64, v: this.rows });
    meta.set(4, { type: T.LIST, elem: T.STRUCT, v: this.groups.map((g) => ({ type: T.STRUCT, v: g })) });
    const footer = encodeStruct(meta);
    const len = new Uint8Array(4);
    new DataView(len.buffer).setInt32(0, footer.length, true);
    this.write(footer);
    this.write(len);
    this.write(MAGIC);
    closeSync(this.fd);
    renameSync(`${this.path}.partial`, this.path);
    return { rows: Number(this.rows), bytes: this.pos };
  }
}
