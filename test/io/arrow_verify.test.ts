// The Arrow IPC metadata verifier (engine/io/arrow_verify.ts): damaged flatbuffers in a
// message or footer are BASIN_IO naming the file, the message and what is wrong, where
// apache-arrow alone read them silently (another column's bytes, a renamed column);
// files from another flatbuffers writer (Polars) pass it.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tableFromArrays, tableToIPC } from "apache-arrow";
import pl from "nodejs-polars";
import { afterAll, describe, expect, it } from "vitest";
import { closeDefaultCluster, readArrow } from "../../engine/api/index.js";
import { arrowLayout } from "../../engine/io/arrow_ipc.js";
import { thrown } from "../helpers/errors.js";

const dir = mkdtempSync(join(tmpdir(), "basin-arrow-verify-"));
afterAll(async () => {
  await closeDefaultCluster();
  rmSync(dir, { recursive: true, force: true });
});

const table = tableFromArrays({ i: Float64Array.from([1, 2, 3]), s: ["Zürich", null, "東京"] });

/** A tiny flatbuffer reader over a file, to find what to damage. */
function reader(bytes: Uint8Array) {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const deref = (at: number) => at + dv.getUint32(at, true);
  const vtable = (t: number) => t - dv.getInt32(t, true);
  /** Where field `i` of the table at `t` is (0 when absent). */
  const field = (t: number, i: number) => {
    const vt = vtable(t);
    const off = 4 + 2 * i < dv.getUint16(vt, true) ? dv.getUint16(vt + 4 + 2 * i, true) : 0;
    return off ? t + off : 0;
  };
  /** The metadata start of each message of a stream (continuation marker, length). */
  const messages = (from: number) => {
    const out: number[] = [];
    for (let pos = from; dv.getInt32(pos + 4, true) > 0;) {
      const meta = pos + 8;
      out.push(meta);
      const body = field(deref(meta), 3);
      pos = meta + dv.getInt32(pos + 4, true) + (body ? Number(dv.getBigInt64(body, true)) : 0);
    }
    return out;
  };
  return { dv, deref, vtable, field, messages };
}

/** Writes `bytes` damaged by `damage` and returns the BASIN_IO error readArrow gives. */
function damaged(name: string, bytes: Uint8Array, damage: (r: ReturnType<typeof reader>, b: Uint8Array) => void) {
  const copy = Uint8Array.from(bytes);
  damage(reader(copy), copy);
  const path = join(dir, name);
  writeFileSync(path, copy);
  const e = thrown(() => readArrow(path), "BASIN_IO");
  expect(e.detail).toContain(`${path} is not a readable Arrow IPC file`);
  return e.detail;
}

describe("damaged Arrow IPC metadata", () => {
  const stream = tableToIPC(table, "stream");
  const file = tableToIPC(table, "file");

  it("a record batch whose nodes vector claims more entries than its metadata holds (fuzz seed 8, case 226)", () => {
    const msg = damaged("nodes.arrows", stream, (r) => {
      // The messages: the schema, the dictionary of "s", the record batch.
      const batch = r.deref(r.field(r.deref(r.messages(0)[2]), 2));
      r.dv.setUint32(r.deref(r.field(batch, 1)), 102, true);
    });
    expect(msg).toMatch(/the message at byte \d+: the RecordBatch's nodes at byte \d+ claims 102 entries of 16 bytes/);
  });

  it("a column name that is not UTF-8", () => {
    const msg = damaged("name.arrows", stream, (r, b) => {
      const schema = r.deref(r.field(r.deref(r.messages(0)[0]), 2));
      const first = r.deref(r.deref(r.field(schema, 1)) + 4);
      b[r.deref(r.field(first, 0)) + 4] = 0xff;
    });
    expect(msg).toMatch(/the Schema's fields\[0\]'s name at byte \d+ is not valid UTF-8/);
  });

  it("a column of an unknown type", () => {
    const msg = damaged("type.arrows", stream, (r, b) => {
      const schema = r.deref(r.field(r.deref(r.messages(0)[0]), 2));
      const second = r.deref(r.deref(r.field(schema, 1)) + 8);
      b[r.field(second, 2)] = 99;
    });
    expect(msg).toContain("the Schema's fields[1]'s type is of an unknown kind 99");
  });

  it("a column whose type became a list without its child (fuzz seed 25, case 1248)", () => {
    const msg = damaged("list.arrows", stream, (r, b) => {
      const schema = r.deref(r.field(r.deref(r.messages(0)[0]), 2));
      const second = r.deref(r.deref(r.field(schema, 1)) + 8);
      b[r.field(second, 2)] = 21; // LargeList
    });
    expect(msg).toContain("the Schema's fields[1] is a LargeList with 0 children, not 1");
  });

  it("a message whose vtable lies outside its metadata", () => {
    const msg = damaged("vtable.arrows", stream, (r) => {
      const root = r.deref(r.messages(0)[1]);
      r.dv.setInt32(root, -4096, true);
    });
    expect(msg).toMatch(/the vtable of the message at byte \d+ runs past the end of its metadata/);
  });

  it("a footer that places a record batch elsewhere than it is (fuzz seed 29, case 1406: Polars read garbage)", () => {
    const msg = damaged("block.arrow", file, (r, b) => {
      const footer = r.deref(b.length - 10 - r.dv.getInt32(b.length - 10, true));
      // Block: offset (8 bytes), metaDataLength (4), padding, bodyLength (8).
      r.dv.setInt32(r.deref(r.field(footer, 3)) + 4 + 8, 255, true);
    });
    expect(msg).toContain("its footer places record batch 1 elsewhere than where it is");
  });

  it("a footer whose schema offset points outside it", () => {
    const msg = damaged("footer.arrow", file, (r, b) => {
      const footer = b.length - 10 - r.dv.getInt32(b.length - 10, true);
      r.dv.setUint32(r.field(r.deref(footer), 1), 1 << 20, true);
    });
    expect(msg).toMatch(/its footer: the offset of the footer's schema at byte \d+ points outside its metadata/);
  });
});

describe("Arrow IPC files from another writer", () => {
  const df = pl.DataFrame({
    a: pl.Series("a", [1, 2, null], pl.Int8),
    b: pl.Series("b", [1, 2, 3], pl.UInt16),
    c: pl.Series("c", [1.5, null, 3], pl.Float32),
    e: pl.Series("e", [true, false, null], pl.Bool),
    f: pl.Series("f", [new Date(0), new Date(86400000), null], pl.Date),
    g: pl.Series("g", [new Date(0), new Date(1000), null], pl.Datetime("ms")),
    h: pl.Series("h", ["u", "v", "u"], pl.Categorical),
    i: pl.Series("i", [[1, 2], [3], []]),
    j: pl.Series("j", [1n, 2n, 3n], pl.Int64),
  });

  it("Polars' file and stream formats pass the verifier, every type in them", () => {
    for (const [name, bytes] of [
      ["polars.arrow", df.writeIPC()],
      ["polars.arrows", df.writeIPCStream()],
    ] as const) {
      const path = join(dir, name);
      writeFileSync(path, bytes);
      expect(arrowLayout(path).schema.fields.map((f) => f.name)).toEqual(["a", "b", "c", "e", "f", "g", "h", "i", "j"]);
    }
  });

  it("compressed record batches are BASIN_IO saying to write the file uncompressed", () => {
    const path = join(dir, "lz4.arrow");
    writeFileSync(path, df.select("a", "j").writeIPC({ compression: "lz4" }));
    const e = thrown(() => readArrow(path), "BASIN_IO");
    expect(e.detail).toMatch(/is compressed \(LZ4\), which Basin does not read yet; write the file uncompressed/);
  });
});
