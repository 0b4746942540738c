// The store's disk tier: tables spill to (compressed) Arrow IPC files in this process's folder,
// come back unchanged on access (keeping their file, so a second eviction writes
// nothing), and their files go when they are released.
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tableFromIPC } from "apache-arrow";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { native, type JsTable } from "../../engine/native/addon.js";
import { applyMemory, resolveMemory } from "../../engine/memory/limits.js";

const base = mkdtempSync(join(tmpdir(), "basin-spill-test-"));
const dir = () => native().memoryStats().directory;

function sample(n: number): JsTable {
  const names = ["i", "f", "s", "b", "d"];
  return {
    rows: n,
    names,
    columns: [
      {
        type: "int64",
        values: BigInt64Array.from({ length: n }, (_, i) => BigInt(i * 7 - 3)),
        validity: Uint8Array.from({ length: n }, (_, i) => (i % 5 === 0 ? 0 : 1)),
      },
      { type: "float64", values: Float64Array.from({ length: n }, (_, i) => i / 3), validity: null },
      { type: "string", values: Array.from({ length: n }, (_, i) => (i % 4 === 0 ? null : `é${i}✓`)), validity: null },
      { type: "bool", values: Uint8Array.from({ length: n }, (_, i) => i % 2), validity: null },
      { type: "date", values: Int32Array.from({ length: n }, (_, i) => i - 100), validity: null },
    ],
  };
}

/** A table's names, types, row count and column bytes, hex-encoded (cheap to compare at 140 000 rows). */
function bytesOf(t: JsTable): unknown {
  const hex = (v: ArrayBufferView | null) =>
    v ? Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("hex") : null;
  return {
    rows: t.rows,
    names: t.names,
    columns: t.columns.map((c) => {
      const v = c.values;
      const values = Array.isArray(v) ? v : "offsets" in v ? [hex(v.offsets), hex(v.chars)] : hex(v);
      return { type: c.type, values, validity: hex(c.validity) };
    }),
  };
}

/** Spills `a` and `b`, cuts a's file short and changes bytes in b's body: reading them back fails naming the file. */
function expectUnreadable(a: number, b: number, compression: string): void {
  native().memorySpill(1e12);
  const [fa, fb] = [a, b].map((h) => join(dir(), `t${h}.arrow`));
  truncateSync(fa, statSync(fa).size - 100);
  const bytes = readFileSync(fb);
  for (let i = 4000; i < 12_000; i += 7) bytes[i] ^= 0x5a; // somewhere in the body
  writeFileSync(fb, bytes);
  for (const [h, file] of [
    [a, fa],
    [b, fb],
  ] as const) {
    let err: unknown;
    try {
      native().tableToJs(h);
    } catch (e) {
      err = e;
    }
    // Uncompressed, a changed body reads back (with wrong values): only the frames' checksums notice.
    if (compression === "none" && h === b) continue;
    expect(err, `${compression}: ${file}`).toMatchObject({
      code: "BASIN_SPILL",
      message: expect.stringContaining(file),
    });
  }
}

beforeAll(() => applyMemory(resolveMemory({ memoryLimit: "1TB", localDirectory: base })));
afterAll(() => {
  applyMemory(resolveMemory());
  rmSync(base, { recursive: true, force: true });
});

describe("store disk tier", () => {
  it("spills least recently used tables to files, reads them back unchanged, removes the files on release", () => {
    const a = native().tableFromJs(sample(1000));
    const b = native().tableFromJs(sample(0));
    const c = native().tableFromJs(sample(3));
    const before = native().memoryStats();
    const expected = [a, b, c].map((h) => native().tableToJs(h));
    native().tableInfo(c); // c is the most recent: it stays
    native().memorySpill(native().storeStats().bytes - 1);
    expect([native().isSpilled(a), native().isSpilled(b)]).toEqual([true, true]);
    const s = native().memoryStats();
    expect(s.spilledCount).toBeGreaterThan(before.spilledCount);
    expect(s.diskTables).toBeGreaterThanOrEqual(2);
    expect(readdirSync(dir()).length).toBe(s.diskTables);
    // back on access, equal to what went out
    expect([a, b, c].map((h) => native().tableToJs(h))).toEqual(expected);
    expect(native().isSpilled(a)).toBe(false);
    expect(native().memoryStats().unspilledCount).toBeGreaterThan(before.unspilledCount);
    native().memorySpill(1e12);
    expect(readdirSync(dir()).length).toBe(3);
    for (const h of [a, b, c]) native().release(h);
    expect(readdirSync(dir())).toEqual([]);
    expect(native().memoryStats()).toMatchObject({ diskBytes: 0, diskTables: 0 });
  });

  it("keeps a table's file after reading it back, so evicting it again writes nothing", () => {
    const a = native().tableFromJs(sample(5000));
    const expected = native().tableToJs(a);
    native().memorySpill(1e12);
    const first = native().memoryStats();
    expect(native().isSpilled(a)).toBe(true);
    expect(native().tableToJs(a)).toEqual(expected); // read back: the file stays
    expect(native().isSpilled(a)).toBe(false);
    expect(readdirSync(dir()).length).toBe(1);
    native().memorySpill(1e12);
    const second = native().memoryStats();
    expect(native().isSpilled(a)).toBe(true);
    expect(second.writtenBytes).toBe(first.writtenBytes);
    expect(second.reusedCount).toBe(first.reusedCount + 1);
    expect(second.spilledCount).toBe(first.spilledCount + 1);
    expect(native().tableToJs(a)).toEqual(expected);
    native().release(a);
    expect(readdirSync(dir())).toEqual([]);
    expect(native().memoryStats()).toMatchObject({ diskBytes: 0, diskTables: 0 });
  });

  it("counts the disk by its files' own (compressed) sizes, which a spill limit bounds", () => {
    applyMemory(resolveMemory({ memoryLimit: "1TB", localDirectory: base, spillCompression: "lz4" }));
    const tables = [sample(50_000), sample(50_000)].map((t) => native().tableFromJs(t));
    try {
      const inMemory = native().storeStats().bytes;
      native().memorySpill(1e12);
      const files = readdirSync(dir()).reduce((n, f) => n + statSync(join(dir(), f)).size, 0);
      const stats = native().memoryStats();
      expect(stats.diskTables).toBe(2);
      expect(stats.diskBytes, "the files' sizes").toBe(files);
      expect(files, "lz4 files are smaller than the tables").toBeLessThan(inMemory);
    } finally {
      for (const h of tables) native().release(h);
    }
    expect(native().memoryStats().diskBytes).toBe(0);
  });

  it("removes the files kept by tables in memory before failing for lack of disk (spillLimit)", () => {
    const [a, b] = [native().tableFromJs(sample(5000)), native().tableFromJs(sample(5000))];
    const tableBytes = native().storeStats().bytes / 2;
    // Uncompressed: a file about as large as its table, so the disk holds one of them, not two.
    applyMemory(
      resolveMemory({
        memoryLimit: "1TB",
        localDirectory: base,
        spillLimit: Math.floor(tableBytes * 1.5),
        spillCompression: "none",
      }),
    );
    try {
      native().pin(b);
      native().memorySpill(1e12); // a goes to disk
      native().unpin(b);
      native().tableToJs(a); // a comes back, keeping its file: the disk has no room for b now
      native().pin(a);
      native().memorySpill(1e12);
      native().unpin(a);
      expect([native().isSpilled(a), native().isSpilled(b)]).toEqual([false, true]);
      expect(readdirSync(dir())).toEqual([`t${b}.arrow`]);
    } finally {
      for (const h of [a, b]) native().release(h);
      applyMemory(resolveMemory({ memoryLimit: "1TB", localDirectory: base }));
    }
  });

  it.each(["lz4", "zstd", "none"] as const)(
    "round-trips nulls, strings, empty and all-null tables (buffers over one 1 MiB chunk) through %s spill files",
    (compression) => {
      applyMemory(resolveMemory({ memoryLimit: "1TB", localDirectory: base, spillCompression: compression }));
      try {
        expect(native().memoryStats().compression).toBe(compression);
        const allNull: JsTable = {
          rows: 3,
          names: ["s", "i"],
          columns: [
            { type: "string", values: [null, null, null], validity: null },
            { type: "int64", values: new BigInt64Array(3), validity: new Uint8Array(3) },
          ],
        };
        const tables = [sample(140_000), sample(0), sample(1), allNull].map((t) => native().tableFromJs(t));
        const expected = tables.map((h) => native().tableToJs(h));
        native().memorySpill(1e12);
        expect(tables.every((h) => native().isSpilled(h))).toBe(true);
        tables.forEach((h, i) => expect(bytesOf(native().tableToJs(h)), `table ${i}`).toEqual(bytesOf(expected[i])));
        for (const h of tables) native().release(h);
      } finally {
        applyMemory(resolveMemory({ memoryLimit: "1TB", localDirectory: base }));
      }
    },
  );

  it("writes compressible tables in fewer bytes with lz4 and zstd than uncompressed", () => {
    const written: Record<string, number> = {};
    for (const compression of ["none", "lz4", "zstd"] as const) {
      applyMemory(resolveMemory({ memoryLimit: "1TB", localDirectory: base, spillCompression: compression }));
      const h = native().tableFromJs(sample(200_000));
      const before = native().memoryStats().writtenBytes;
      native().memorySpill(1e12);
      written[compression] = native().memoryStats().writtenBytes - before;
      native().release(h);
    }
    applyMemory(resolveMemory({ memoryLimit: "1TB", localDirectory: base }));
    expect(written.lz4).toBeLessThan(written.none / 2);
    expect(written.zstd).toBeLessThan(written.lz4);
  });

  it("writes Arrow IPC files: apache-arrow reads an uncompressed spill file's columns, types, nulls and values", () => {
    applyMemory(resolveMemory({ memoryLimit: "1TB", localDirectory: base, spillCompression: "none" }));
    try {
      const h = native().tableFromJs(sample(9));
      native().memorySpill(1e12);
      const files = readdirSync(dir());
      expect(files.length).toBe(1);
      const t = tableFromIPC(readFileSync(join(dir(), files[0])));
      expect(t.schema.fields.map((f) => `${f.name}:${f.type}`)).toEqual([
        "i:Int64",
        "f:Float64",
        "s:LargeUtf8",
        "b:Bool",
        "d:Date32<DAY>",
      ]);
      const js = sample(9);
      expect(Array.from({ length: 9 }, (_, k) => t.getChild("i")!.get(k))).toEqual(
        Array.from({ length: 9 }, (_, k) => (k % 5 === 0 ? null : BigInt(k * 7 - 3))),
      );
      expect(Array.from({ length: 9 }, (_, k) => t.getChild("s")!.get(k))).toEqual(js.columns[2].values);
      expect(Array.from({ length: 9 }, (_, k) => t.getChild("b")!.get(k))).toEqual(
        Array.from({ length: 9 }, (_, k) => k % 2 === 1),
      );
      expect(Array.from({ length: 9 }, (_, k) => t.getChild("f")!.get(k))).toEqual(
        Array.from(js.columns[1].values as Float64Array),
      );
      native().release(h);
    } finally {
      applyMemory(resolveMemory({ memoryLimit: "1TB", localDirectory: base }));
    }
  });

  it.each(["lz4", "zstd", "none"] as const)(
    "fails with BASIN_SPILL naming the file when a %s spill file was cut short or changed",
    (compression) => {
      applyMemory(resolveMemory({ memoryLimit: "1TB", localDirectory: base, spillCompression: compression }));
      try {
        const [a, b] = [native().tableFromJs(sample(20_000)), native().tableFromJs(sample(20_000))];
        try {
          expectUnreadable(a, b, compression);
        } finally {
          for (const h of [a, b]) native().release(h);
        }
      } finally {
        applyMemory(resolveMemory({ memoryLimit: "1TB", localDirectory: base }));
      }
    },
  );

  it("refuses an unknown spill compression, naming the choices", () => {
    expect(() => resolveMemory({ spillCompression: "gzip" as "lz4" })).toThrow(
      /spillCompression must be one of "lz4", "zstd", "none", got "gzip"/,
    );
  });

  it("reads a spilled table back off the JS thread (readBack), and rejects an unknown handle with BASIN_HANDLE", async () => {
    const a = native().tableFromJs(sample(1000));
    const expected = native().tableToJs(a);
    native().memorySpill(1e12);
    expect(native().isSpilled(a)).toBe(true);
    const before = native().memoryStats().unspilledCount;
    await native().readBack(a);
    expect(native().isSpilled(a)).toBe(false);
    expect(native().memoryStats().unspilledCount).toBe(before + 1);
    expect(native().tableToJs(a)).toEqual(expected);
    native().release(a);
    await expect(native().readBack(a)).rejects.toMatchObject({ code: "BASIN_HANDLE" });
  });

  it("never spills a pinned table", () => {
    const a = native().tableFromJs(sample(100));
    native().pin(a);
    native().memorySpill(1e12);
    expect(native().isSpilled(a)).toBe(false);
    native().unpin(a);
    native().memorySpill(1e12);
    expect(native().isSpilled(a)).toBe(true);
    native().release(a);
    expect(() => native().pin(a)).toThrow(expect.objectContaining({ code: "BASIN_HANDLE" }));
  });

  it("puts its files in a folder named with the pid, under the local directory", () => {
    expect(dir().startsWith(base)).toBe(true);
    expect(dir()).toMatch(new RegExp(`basin-spill-${process.pid}-`));
    expect(existsSync(dir())).toBe(true);
  });
});
