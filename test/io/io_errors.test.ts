// Bad files and bad output paths: each a BasinError with the right code, naming the
// file (and line, column or key where there is one), what to do, and the line of
// this file that made the call; no partial output is ever left behind.
import { execFileSync } from "node:child_process";
import { gzipSync } from "node:zlib";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BasinError,
  closeDefaultCluster,
  col,
  fromColumns,
  readArrow,
  readCsv,
  readJson,
  readParquet,
  type ReadCsvOptions,
} from "../../engine/api/index.js";
import { native } from "../../engine/native/addon.js";
import { makeTempDir, removeDir } from "../helpers/cli.js";
import { Duck } from "../helpers/oracle.js";
import { thrown, rejected } from "../helpers/errors.js";

const THIS_FILE = fileURLToPath(import.meta.url);
const HERE = relative(process.cwd(), THIS_FILE);
let dir: string;

beforeAll(async () => {
  dir = makeTempDir();
  const duck = await Duck.open();
  await duck.run(
    `COPY (SELECT [i, i] AS pair, {'a': i, 'b': 'x'} AS rec, i::BIGINT AS id, (i / 7)::DECIMAL(12, 2) AS price, 'n' || i AS name FROM range(100) t(i)) TO '${dir}/odd.parquet' (FORMAT parquet)`,
  );
  await duck.run(
    `COPY (SELECT i::BIGINT AS id, 'x' || i AS s FROM range(5000) t(i)) TO '${dir}/good.parquet' (FORMAT parquet)`,
  );
  await duck.run(
    `COPY (SELECT (i % 3)::BIGINT * 1000 AS v FROM range(1000) t(i)) TO '${dir}/dict.parquet' (FORMAT parquet, COMPRESSION uncompressed)`,
  );
  duck.close();
});

afterAll(async () => {
  await closeDefaultCluster();
  removeDir(dir);
  expect(native().storeStats()).toMatchObject({ handles: 0, buffers: 0 });
});

/** The error's location is a line of this file. */
function expectHere(e: BasinError): void {
  expect(e.location ?? "").toMatch(new RegExp(`^${HERE.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}:\\d+:\\d+$`));
}

describe("readParquet", () => {
  it("a file that is not Parquet: BASIN_IO naming the file and what is wrong", () => {
    const path = join(dir, "notes.parquet");
    writeFileSync(path, "this is not a parquet file, just text\n");
    const e = thrown(() => readParquet(path));
    expect(e.code).toBe("BASIN_IO");
    expect(e.detail).toContain(path);
    expect(e.detail).toMatch(/not a readable Parquet file: it does not start and end with "PAR1"/);
    expectHere(e);
  });

  it("a truncated Parquet file and a damaged footer: BASIN_IO naming the file", () => {
    const good = readFileSync(join(dir, "good.parquet"));
    const cut = join(dir, "cut.parquet");
    writeFileSync(cut, good.subarray(0, good.length - 100));
    expect(thrown(() => readParquet(cut)).detail).toContain(cut);
    const damaged = join(dir, "damaged.parquet");
    const bytes = Buffer.from(good);
    const len = bytes.readUInt32LE(bytes.length - 8);
    bytes.fill(0xff, bytes.length - 8 - len, bytes.length - 8); // the footer, garbled
    writeFileSync(damaged, bytes);
    const e = thrown(() => readParquet(damaged));
    expect(e.code).toBe("BASIN_IO");
    expect(e.detail).toContain(damaged);
  });

  it("a footer field of the wrong Thrift type (DuckDB skips it, the Rust reader takes it): BASIN_IO naming it", () => {
    const bytes = Buffer.from(readFileSync(join(dir, "good.parquet")));
    const footer = bytes.length - 8 - bytes.readUInt32LE(bytes.length - 8);
    expect(bytes[footer]).toBe(0x15); // field 1 (version), an i32
    bytes[footer] = 0x16; // an i64: fuzz seed 35 read a damaged page DuckDB never reached
    const path = join(dir, "wire-type.parquet");
    writeFileSync(path, bytes);
    const e = thrown(() => readParquet(path), "BASIN_IO");
    expect(e.detail).toContain(`${path} is not a readable Parquet file: the footer's version is i64, not i32`);
  });

  it("corrupt column data: the run fails with BASIN_IO naming the file and row groups", async () => {
    const good = readFileSync(join(dir, "good.parquet"));
    const path = join(dir, "bad-pages.parquet");
    const bytes = Buffer.from(good);
    bytes.fill(0x55, 4, 400); // the first column chunk's pages
    writeFileSync(path, bytes);
    const e = await rejected(readParquet(path).compute());
    expect(e.code).toBe("BASIN_IO");
    expect(e.detail).toContain(path);
    expect(e.detail).toMatch(/column "\w+", row group 0: /);
    expectHere(e);
  });

  it("a dictionary index past its dictionary: BASIN_IO naming the file, column and row group", async () => {
    // Three int64 entries 0, 1000, 2000, then the data page: its bit-packed indices (bit
    // width 2) overwritten with ones, so indices of 3 appear.
    const bytes = readFileSync(join(dir, "dict.parquet"));
    const entries = Buffer.alloc(24);
    [0n, 1000n, 2000n].forEach((v, i) => entries.writeBigInt64LE(v, 8 * i));
    const width = bytes.indexOf(Buffer.from([0x02]), bytes.indexOf(entries) + 34);
    bytes.fill(0xff, width + 3, width + 40);
    const path = join(dir, "dict-bad.parquet");
    writeFileSync(path, bytes);
    const e = await rejected(readParquet(path).compute());
    expect(e.code).toBe("BASIN_IO");
    expect(e.detail).toContain(path);
    expect(e.detail).toContain('column "v", row group 0: a data page\'s dictionary index reaches past the 3 entries');
    expectHere(e);
  });

  it("an unsupported type names the file and column and how to leave it out; columns: [...] does", async () => {
    const path = join(dir, "odd.parquet");
    const e = thrown(() => readParquet(path));
    expect(e.code).toBe("BASIN_IO");
    expect(e.detail).toContain(path);
    expect(e.detail).toContain('column "pair" has Parquet type nested');
    expect(e.detail).toContain("columns: [...]");
    expectHere(e);
    expect(thrown(() => readParquet(path, { columns: ["id", "price"] })).detail).toContain(
      'column "price" has Parquet type decimal',
    );
    // Flat columns after nested ones (which span several column chunks) read right.
    const t = await readParquet(path, { columns: ["name", "id"] })
      .filter(col("id").lt(3))
      .compute();
    expect(t.toRows()).toEqual([
      { name: "n0", id: 0 },
      { name: "n1", id: 1 },
      { name: "n2", id: 2 },
    ]);
    expect(thrown(() => readParquet(path, { columns: ["nope"] })).detail).toContain(
      "the columns are: pair, rec, id, price, name",
    );
  });

  it("a column asked for twice: BASIN_PLAN naming it (its output could not be read back)", () => {
    const e = thrown(() => readParquet(join(dir, "good.parquet"), { columns: ["id", "s", "id"] }));
    expect(e.code).toBe("BASIN_PLAN");
    expect(e.detail).toContain('readParquet() columns names "id" twice');
    expectHere(e);
  });

  it("a missing file or a glob with no match: BASIN_IO like readCsv", () => {
    const e = thrown(() => readParquet(join(dir, "missing.parquet")));
    expect(e.code).toBe("BASIN_IO");
    expect(e.detail).toContain("missing.parquet: no such file");
    expectHere(e);
    expect(thrown(() => readParquet(join(dir, "nothing-*.parquet"))).detail).toContain("no file matches");
  });
});

describe("readCsv", () => {
  it("options of the wrong kind: BASIN_PLAN naming the option and what it takes, never BASIN_INTERNAL", () => {
    const path = join(dir, "small.csv");
    writeFileSync(path, "a,b\n1,x\n");
    const bad: [unknown, string][] = [
      [{ nullValues: [1] }, "nullValues must be a text or a list of texts"],
      [{ nullValues: 5 }, "nullValues must be a text or a list of texts"],
      [{ delimiter: '"' }, "delimiter must be one ASCII character other than a double quote or a line break"],
      [{ delimiter: "\n" }, "delimiter must be one ASCII character"],
      [{ delimiter: "é" }, "delimiter must be one ASCII character"],
      [{ delimiter: ";;" }, "delimiter must be one ASCII character"],
      [{ sampleBytes: "x" }, "sampleBytes must be a positive whole number of bytes"],
      [{ sampleBytes: -1 }, "sampleBytes must be a positive whole number of bytes"],
      [{ sampleBytes: 1.5 }, "sampleBytes must be a positive whole number of bytes"],
      [{ header: "yes" }, "header must be true or false"],
      [{ dtypes: ["a"] }, "dtypes must map column names to types"],
    ];
    for (const [options, message] of bad) {
      const e = thrown(() => readCsv(path, options as ReadCsvOptions));
      expect(e.code, JSON.stringify(options)).toBe("BASIN_PLAN");
      expect(e.detail).toContain(message);
      expectHere(e);
    }
  });

  it("one null text and one date column may be given without a list", async () => {
    const path = join(dir, "na.csv");
    writeFileSync(path, "a,d\n1,2024-01-02 03:04:05\nNA,NA\n");
    const t = await readCsv(path, { nullValues: "NA", parseDates: "d" }).compute();
    expect(t.schema).toEqual([
      { name: "a", type: "int64" },
      { name: "d", type: "timestamp" },
    ]);
    expect(t.column("a")).toEqual([1, null]);
    expect(t.column("d")).toEqual([new Date(Date.UTC(2024, 0, 2, 3, 4, 5)), null]);
  });

  it("a compressed file: BASIN_IO naming it, its compression and how to decompress it, for CSV and NDJSON", () => {
    const gz = join(dir, "data.csv.gz");
    writeFileSync(gz, gzipSync("a,b\n1,2\n"));
    let e = thrown(() => readCsv(gz));
    expect(e.code).toBe("BASIN_IO");
    expect(e.detail).toContain(
      `${gz} is gzip-compressed; readCsv() reads uncompressed text: decompress it first (gunzip -k ${gz})`,
    );
    expectHere(e);
    const zst = join(dir, "data.ndjson.zst");
    writeFileSync(zst, Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0]));
    e = thrown(() => readJson(zst));
    expect(e.detail).toContain(`${zst} is zstd-compressed; readJson()`);
  });

  it("a Parquet, Arrow or .npy file given to a text reader: BASIN_IO naming the reader to use, not a UTF-8 error", async () => {
    const pq = join(dir, "data.parquet");
    await fromColumns({ a: [1, 2] }).writeParquet(pq);
    const arrow = join(dir, "data.arrow");
    await fromColumns({ a: [1, 2] }).writeArrow(arrow);
    const npy = join(dir, "data.npy");
    writeFileSync(npy, Buffer.concat([Buffer.from([0x93]), Buffer.from("NUMPY\x01\x00")]));
    for (const [file, what, reader] of [
      [pq, "a Parquet file", "readParquet"],
      [arrow, "an Arrow IPC file", "readArrow"],
      [npy, "a NumPy .npy file", "readNpy"],
    ]) {
      const e = thrown(() => readCsv(file));
      expect(e.code).toBe("BASIN_IO");
      expect(e.detail).toBe(`${file} is ${what}, not text; read it with ${reader}()`);
      expectHere(e);
      expect(thrown(() => readJson(file)).detail).toContain(`read it with ${reader}()`);
    }
  });

  it("an empty file among others: BASIN_PARSE saying it is empty; a folder with a trailing slash suggests one glob", () => {
    const folder = join(dir, "mixed-empty");
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, "a.csv"), "a,b\n1,2\n");
    writeFileSync(join(folder, "b.csv"), "");
    const e = thrown(() => readCsv(`${folder}/*.csv`));
    expect(e.detail).toContain(`${join(folder, "b.csv")} is empty (no header) but ${join(folder, "a.csv")} has a, b`);
    expect(thrown(() => readCsv(`${folder}/`)).detail).toContain(`e.g. "${folder}/*.csv"`);
  });
});

describe("readJson", () => {
  it("a bad line: BASIN_PARSE naming the file and line number, even deep in a later partition", async () => {
    const path = join(dir, "bad.ndjson");
    const lines = Array.from({ length: 500 }, (_, i) => JSON.stringify({ id: i, name: `n${i}` }));
    lines[436] = '{"id": 436, "name": "oops"'; // line 437
    writeFileSync(path, lines.join("\n") + "\n");
    const e = await rejected(readJson(path, { blocksize: 1024, sampleRows: 100 }).compute());
    expect(e.code).toBe("BASIN_PARSE");
    expect(e.detail).toContain(`${path}:437: not valid JSON`);
    expectHere(e);
    // Inside the sample it is found while planning.
    expect(thrown(() => readJson(path)).detail).toContain(`${path}:437: not valid JSON`);
  });

  it("a value of another type: BASIN_PARSE naming the file, line and key", async () => {
    const path = join(dir, "types.ndjson");
    writeFileSync(path, '{"id": 1, "v": 2}\n{"id": 2, "v": 3}\n{"id": 3, "v": "three"}\n');
    const e = await rejected(readJson(path, { sampleRows: 2 }).compute());
    expect(e.detail).toContain(`${path}:3: key "v" is "three", not int64`);
    // Within the sample, mixed types are caught while planning.
    expect(thrown(() => readJson(path)).detail).toMatch(/key "v" holds integers \(line 1\) and strings \(line 3\)/);
  });

  it("a nested object: BASIN_PARSE naming file, line and key; dtypes string keeps its JSON text", async () => {
    const path = join(dir, "nested.ndjson");
    writeFileSync(path, '{"id": 1, "tags": null}\n{"id": 2, "tags": {"a": [1, 2]}}\n');
    const e = thrown(() => readJson(path));
    expect(e.code).toBe("BASIN_PARSE");
    expect(e.detail).toContain(`${path}:2: key "tags" holds a nested object or array`);
    expectHere(e);
    const t = await readJson(path, { dtypes: { tags: "string" } }).compute();
    expect(t.column("tags")).toEqual([null, '{"a":[1,2]}']);
  });
});

describe("readArrow", () => {
  it("a file that is not Arrow IPC: BASIN_IO naming the file", () => {
    const path = join(dir, "fake.arrow");
    writeFileSync(path, "ARROW1 but then nothing useful");
    const e = thrown(() => readArrow(path));
    expect(e.code).toBe("BASIN_IO");
    expect(e.detail).toContain(`${path} is not a readable Arrow IPC file`);
    expectHere(e);
  });
});

describe("writers", () => {
  const frame = () => fromColumns({ id: [1, 2, 3], s: ["a", null, "東京"] });

  it("an output folder that does not exist: BASIN_IO before anything runs, and no file", async () => {
    const path = join(dir, "no-such-folder", "out.parquet");
    const e = await rejected(frame().writeParquet(path));
    expect(e.code).toBe("BASIN_IO");
    expect(e.detail).toContain(path);
    expect(e.detail).toContain("does not exist; create it first");
    expectHere(e);
  });

  it("an output folder holding other files than parts: BASIN_IO naming the file, before anything runs, folder untouched", async () => {
    const path = join(dir, "a-folder");
    mkdirSync(path, { recursive: true });
    writeFileSync(join(path, "notes.txt"), "mine");
    const e = await rejected(frame().writeCsv(path));
    expect(e.code).toBe("BASIN_IO");
    expect(e.detail).toContain(`cannot write the folder ${path}: it holds notes.txt`);
    expectHere(e);
    expect(readdirSync(path)).toEqual(["notes.txt"]);
    expect(readdirSync(dir).filter((n) => n.startsWith(".a-folder"))).toEqual([]);
  });

  it("a failure while running leaves no file and no temporary file", async () => {
    const before = readdirSync(dir).sort();
    const path = join(dir, "never.arrow");
    const e = await rejected(readJson(join(dir, "bad.ndjson"), { blocksize: 1024, sampleRows: 100 }).writeArrow(path));
    expect(e.code).toBe("BASIN_PARSE");
    expect(readdirSync(dir).sort()).toEqual(before);
  });

  it("a folder output whose name is a file: BASIN_IO naming it, the file untouched", async () => {
    const path = join(dir, "plain.csv");
    writeFileSync(path, "mine\n");
    const e = await rejected(frame().writeCsv(`${path}/`));
    expect(e.code).toBe("BASIN_IO");
    expect(e.detail).toContain(`${path} is a file; name a folder`);
    expect(readFileSync(path, "utf8")).toBe("mine\n");
  });

  it("an output path under a file: BASIN_IO saying the file is not a folder, for files and folders of parts", async () => {
    const file = join(dir, "under.csv");
    writeFileSync(file, "mine\n");
    for (const path of [join(file, "x.csv"), join(file, "parts/")]) {
      const e = await rejected(frame().writeCsv(path));
      expect(e.code).toBe("BASIN_IO");
      expect(e.detail).toContain(`${file} is a file, not a folder`);
      expectHere(e);
    }
    expect(readFileSync(file, "utf8")).toBe("mine\n");
  });

  it("an output path that is a named pipe: BASIN_IO before anything runs, the pipe left a pipe", async () => {
    const fifo = join(dir, "pipe.csv");
    execFileSync("mkfifo", [fifo]);
    const e = await rejected(frame().writeCsv(fifo));
    expect(e.code).toBe("BASIN_IO");
    expect(e.detail).toContain(`cannot write ${fifo}: it is a named pipe (FIFO)`);
    expectHere(e);
    expect(statSync(fifo).isFIFO()).toBe(true);
  });

  it("two writes to one folder at once: both finish, and the folder holds one of them whole", async () => {
    const path = join(dir, "both/");
    const a = fromColumns({ v: Array.from({ length: 3000 }, (_, i) => i) }, { partitions: 3 });
    const b = fromColumns({ v: Array.from({ length: 200 }, (_, i) => -i) }, { partitions: 5 });
    await Promise.all([a.writeCsv(path), b.writeCsv(path), a.writeCsv(path)]);
    const parts = readdirSync(path).sort();
    const values = parts.flatMap((f) =>
      readFileSync(join(path, f), "utf8")
        .split("\n")
        .slice(1)
        .filter((l) => l !== "")
        .map(Number),
    );
    const wrote = (n: number, sign: number) => Array.from({ length: n }, (_, i) => sign * i + 0);
    expect(parts.length === 3 ? values : values.map((v) => v + 0)).toEqual(
      parts.length === 3 ? wrote(3000, 1) : wrote(200, -1),
    );
    expect(readdirSync(dir).filter((n) => n.startsWith(".both"))).toEqual([]);
  });

  it("bad writer options: BASIN_PLAN naming the option", async () => {
    const bad = { compression: "lz77" } as unknown as { compression: "zstd" };
    expect((await rejected(frame().writeParquet(join(dir, "x.parquet"), bad))).detail).toContain(
      "compression must be one of snappy, zstd, uncompressed",
    );
    expect((await rejected(frame().writeParquet(join(dir, "x.parquet"), { rowGroupSize: 0 }))).detail).toContain(
      "rowGroupSize must be a positive integer",
    );
  });
});
