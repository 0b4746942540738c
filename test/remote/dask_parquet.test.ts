// The Dask bridge's own Parquet reader (resources/dask_bridge/basin_parquet.py, numpy
// only: Debian's Dask has no pyarrow) against Basin's readParquet on the local engine:
// files DuckDB writes (every codec, pages v1 and v2, dictionary and plain strings,
// INT32/INT64/FLOAT/DOUBLE/BOOLEAN, small and unsigned integers, dates, timestamps in
// ms/µs/ns with and without a zone) and files Basin writes (Snappy, ZSTD, none; nulls,
// unicode, empty and one-row files) read identically on a real Dask cluster, with the
// same partitions; damaged files are a BASIN_IO error naming the file.
import {
  closeSync,
  copyFileSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tableFromArrays, tableToIPC } from "apache-arrow";
import {
  Compression,
  Encoding,
  Table as WasmTable,
  WriterPropertiesBuilder,
  WriterVersion,
  writeParquet,
} from "parquet-wasm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BasinError } from "../../engine/common/errors.js";
import { col, fromColumns, readArrow, readJson, readParquet, type DataFrame } from "../../engine/api/index.js";
import { readParquetFooter } from "../../engine/io/parquet_footer.js";
import { Duck, tableRows } from "../helpers/oracle.js";
import { daskFixture } from "./dask_procs.js";

const fx = daskFixture(2);
const ROWS = 5000;
let dir: string;
let duck: Duck;

// Every type Basin reads, nulls in each, NaN and infinities, unicode and empty strings,
// dates and timestamps before 1970 (nanoseconds, with sub-microsecond parts, round
// towards minus infinity).
const TABLE_SQL = `
CREATE TABLE t AS SELECT
  i::BIGINT AS id,
  CASE WHEN i % 7 = 0 THEN NULL ELSE (i * 37 % 1000 - 500)::INTEGER END AS i32,
  CASE WHEN i % 11 = 0 THEN NULL ELSE (i::BIGINT - 2500) * 3037000493 END AS i64,
  (i % 200 - 100)::SMALLINT AS i16,
  (i % 100 - 50)::TINYINT AS i8,
  (i % 250)::UTINYINT AS u8,
  (i::BIGINT * 2654435761 % 4294967296)::UINTEGER AS u32,
  CASE WHEN i % 5 = 0 THEN NULL WHEN i % 97 = 0 THEN 'NaN'::DOUBLE WHEN i % 89 = 0 THEN '-inf'::DOUBLE ELSE i / 7.0 - 300 END AS f64,
  CASE WHEN i % 9 = 0 THEN NULL ELSE (i / 3.0)::REAL END AS f32,
  CASE WHEN i % 13 = 0 THEN NULL ELSE ['α', 'βeta', '', '日本語', 'plain', 'Zürich 🚲'][i % 6 + 1] END AS s_dict,
  CASE WHEN i % 17 = 0 THEN NULL ELSE md5(i::VARCHAR) || '–ü' || repeat('x', i % 40) END AS s_plain,
  CASE WHEN i % 3 = 0 THEN NULL ELSE i % 2 = 0 END AS b,
  CASE WHEN i % 19 = 0 THEN NULL ELSE DATE '1960-01-01' + (i * 7)::INTEGER END AS d,
  CASE WHEN i % 23 = 0 THEN NULL ELSE TIMESTAMP '1969-12-31 23:00:00' + to_microseconds(i::BIGINT * 1000003) END AS ts_us,
  (TIMESTAMP '1969-12-31 23:00:00' + to_microseconds(i::BIGINT * 1000003))::TIMESTAMP_MS AS ts_ms,
  CASE WHEN i % 29 = 0 THEN NULL ELSE make_timestamp_ns((i::BIGINT - 2500) * 1000000007 + i % 1000 - 500) END AS ts_ns,
  (TIMESTAMP '2024-03-01 12:00:00' + to_microseconds(i::BIGINT * 999))::TIMESTAMPTZ AS ts_tz
FROM range(${ROWS}) r(i)`;

/**
 * Both engines' answers: the Dask run equals the local one in rows, order and types.
 * Timestamps are compared in microseconds too (a result's Dates hold milliseconds).
 */
async function expectSameOnDask(frame: DataFrame, label: string): Promise<void> {
  const micros = frame.schema.filter((f) => f.type === "timestamp");
  const df =
    micros.length > 0
      ? frame.withColumns(Object.fromEntries(micros.map((f) => [`${f.name}_us`, col(f.name).cast("int64")])))
      : frame;
  const local = await df.compute({ cluster: fx.local });
  const dask = await df.compute({ cluster: fx.dask });
  expect(dask.schema, `${label}: schema`).toEqual(local.schema);
  expect(dask.numRows, `${label}: rows`).toBe(local.numRows);
  expect(tableRows(dask), label).toEqual(tableRows(local));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "basin-dask-parquet-"));
  duck = await Duck.open();
  await duck.run(TABLE_SQL);
}, 60_000);

afterAll(() => {
  duck?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("Parquet written by DuckDB, read on Dask", () => {
  const variants = [
    { name: "uncompressed, pages v1", opts: "COMPRESSION uncompressed" },
    { name: "Snappy, pages v1", opts: "COMPRESSION snappy" },
    { name: "GZIP, pages v1", opts: "COMPRESSION gzip" },
    { name: "ZSTD, pages v1", opts: "COMPRESSION zstd" },
    {
      name: "Snappy, pages v2 (DELTA and BYTE_STREAM_SPLIT encodings)",
      opts: "COMPRESSION snappy, PARQUET_VERSION v2",
    },
    { name: "ZSTD, pages v2", opts: "COMPRESSION zstd, PARQUET_VERSION v2" },
    { name: "uncompressed, pages v2", opts: "COMPRESSION uncompressed, PARQUET_VERSION v2" },
  ];
  for (const [i, v] of variants.entries())
    it(`reads every type identically: ${v.name}`, async () => {
      const file = join(dir, `duck-${i}.parquet`);
      // Basin's local reader rejects DuckDB's v2 DELTA pages of UINTEGER (33-bit deltas): compared with DuckDB below.
      const columns = v.opts.includes("v2") ? "* EXCLUDE (u32)" : "*";
      await duck.run(
        `COPY (SELECT ${columns} FROM t ORDER BY id) TO '${file}' (FORMAT parquet, ROW_GROUP_SIZE 2048, ${v.opts})`,
      );
      const df = readParquet(file, { blocksize: 1 });
      expect(new Set(df.schema.map((f) => f.type))).toEqual(
        new Set(["int64", "float64", "string", "bool", "date", "timestamp"]),
      );
      await expectSameOnDask(df, v.name);
    });

  it("reads DuckDB's v2 DELTA pages of unsigned 32-bit integers (33-bit deltas) as DuckDB does", async () => {
    const file = join(dir, "duck-u32.parquet");
    await duck.run(`COPY (SELECT id, u32 FROM t ORDER BY id) TO '${file}' (FORMAT parquet, PARQUET_VERSION v2)`);
    const t = await readParquet(file).compute({ cluster: fx.dask });
    expect(t.schema).toEqual([
      { name: "id", type: "int64" },
      { name: "u32", type: "int64" },
    ]);
    const expected = await duck.rows(`SELECT id, u32::BIGINT FROM '${file}' ORDER BY id`);
    expect(tableRows(t).map((r) => r.map(Number))).toEqual(expected.map((r) => r.map(Number)));
    expect(Math.max(...expected.map((r) => Number(r[1])))).toBeGreaterThan(2 ** 31);
  });

  it("keeps the local cluster's partitions: one per row group at a small blocksize, merged at the default", async () => {
    const file = join(dir, "duck-groups.parquet");
    await duck.run(`COPY (SELECT id, s_dict FROM t ORDER BY id) TO '${file}' (FORMAT parquet, ROW_GROUP_SIZE 1000)`);
    const groups = readParquetFooter(file).rowGroups.length;
    expect(groups).toBeGreaterThan(2);
    // head() takes rows in partition order; tail-heavy partitions would change which rows come first.
    await expectSameOnDask(readParquet(file, { blocksize: 1 }).head(1500), "head over row groups");
    await expectSameOnDask(readParquet(file), "one merged partition");
  });

  it("reads only the columns and row groups the pipeline uses, and filters with the scan's predicate", async () => {
    const file = join(dir, "duck-pruned.parquet");
    await duck.run(`COPY (SELECT * FROM t ORDER BY id) TO '${file}' (FORMAT parquet, ROW_GROUP_SIZE 1000)`);
    const df = readParquet(file, { blocksize: 1 })
      .filter(col("id").ge(3100).and(col("s_dict").ne("plain")))
      .select("id", "s_dict", "ts_ns");
    const plan = df.explain();
    expect(plan).toMatch(/row groups/i);
    await expectSameOnDask(df, "pruned and projected");
    const rows = tableRows(await df.compute({ cluster: fx.dask }));
    expect(rows.length).toBeGreaterThan(1000);
    expect(rows.every((r) => Number(r[0]) >= 3100 && r[1] !== "plain")).toBe(true);
  });
});

describe("joins of multi-partition Parquet scans on Dask", () => {
  // TPC-H Q2's shape at SF 1 (a join of a 1- and a 2-partition scan, then joined with a
  // 1-partition semi join) once broke Dask's graph culling (KeyError (1,)).
  it("chains broadcast, semi, anti, left, right and outer joins as the local engine does", async () => {
    const a = join(dir, "join-a.parquet");
    const b = join(dir, "join-b.parquet");
    const c = join(dir, "join-c.parquet");
    await duck.run(`COPY (SELECT id AS k, i32, s_dict FROM t WHERE id < 600) TO '${a}' (FORMAT parquet)`);
    await duck.run(
      `COPY (SELECT id % 900 AS bk, id AS b_id, f64, s_plain FROM t ORDER BY id) TO '${b}' (FORMAT parquet, ROW_GROUP_SIZE 1024)`,
    );
    await duck.run(`COPY (SELECT id AS ck, i8 FROM t WHERE id % 3 = 0 AND id < 2000) TO '${c}' (FORMAT parquet)`);
    const A = () => readParquet(a, { blocksize: 1 });
    const B = () => readParquet(b, { blocksize: 1 });
    const C = () => readParquet(c, { blocksize: 1 });
    expect(readParquetFooter(b).rowGroups.length).toBeGreaterThan(2);
    const ab = A().join(B(), { leftOn: "k", rightOn: "bk" });
    const semi = C().join(A(), { leftOn: "ck", rightOn: "k", how: "semi" });
    const chained = ab
      .join(semi, { leftOn: "k", rightOn: "ck" })
      .join(C(), { leftOn: "b_id", rightOn: "ck", how: "anti" })
      .sort(["b_id"]);
    await expectSameOnDask(chained, "inner, semi, anti chain");
    for (const how of ["left", "right", "outer"] as const)
      await expectSameOnDask(
        B()
          .join(C(), { leftOn: "b_id", rightOn: "ck", how })
          .join(A(), { leftOn: "bk", rightOn: "k", how: "left" })
          .sort(["b_id", "ck"]),
        `${how} join`,
      );
  });
});

describe("Parquet written by Basin, read on Dask", () => {
  const day = (d: string | null) => (d === null ? null : new Date(`${d}T00:00:00Z`));
  const frame = (n: number) =>
    fromColumns(
      {
        id: Array.from({ length: n }, (_, i) => i),
        v: Array.from({ length: n }, (_, i) => (i % 4 === 0 ? null : i * 1e12 - 7)),
        f: Array.from({ length: n }, (_, i) => (i % 5 === 0 ? null : i % 7 === 0 ? NaN : i / 3)),
        s: Array.from({ length: n }, (_, i) => (i % 6 === 0 ? null : ["ä", "", "日本語", "plain", "x"][i % 5] + i)),
        b: Array.from({ length: n }, (_, i) => (i % 3 === 0 ? null : i % 2 === 0)),
        d: Array.from({ length: n }, (_, i) => day(i % 8 === 0 ? null : i % 2 ? "1901-03-04" : "2031-12-31")),
        ts: Array.from({ length: n }, (_, i) =>
          i % 9 === 0 ? null : new Date(Date.UTC(1950 + (i % 90), i % 12, 1, 3, 4, 5, i % 1000)),
        ),
      },
      { partitions: Math.min(3, Math.max(1, n)), types: { id: "int64", v: "int64", f: "float64", d: "date" } },
    );

  for (const compression of ["snappy", "zstd", "uncompressed"] as const)
    it(`reads nulls, unicode, dates and timestamps identically: ${compression}`, async () => {
      const file = join(dir, `basin-${compression}.parquet`);
      await frame(3000).writeParquet(file, { compression, rowGroupSize: 700, cluster: fx.local });
      await expectSameOnDask(readParquet(file, { blocksize: 1 }), compression);
    });

  it("reads an empty file and a one-row file", async () => {
    const empty = join(dir, "basin-empty.parquet");
    const one = join(dir, "basin-one.parquet");
    await frame(10).filter(col("id").lt(0)).writeParquet(empty, { cluster: fx.local });
    await frame(1).writeParquet(one, { cluster: fx.local });
    await expectSameOnDask(readParquet(empty), "empty");
    await expectSameOnDask(readParquet(one), "one row");
    expect((await readParquet(empty).compute({ cluster: fx.dask })).numRows).toBe(0);
  });
});

describe("Parquet written by arrow-rs (parquet-wasm), read on Dask", () => {
  // Encodings DuckDB does not write: DELTA_BYTE_ARRAY strings (shared prefixes), and the
  // others chosen per column, without dictionaries, in v1 and v2 pages.
  const n = 3000;
  const arrays = {
    id: BigInt64Array.from({ length: n }, (_, i) => BigInt(i * 1_000_003 - 1_500_000_000)),
    i32: Int32Array.from({ length: n }, (_, i) => ((i * 7919) % 65536) - 32768),
    f: Float64Array.from({ length: n }, (_, i) => (i % 11 === 0 ? NaN : i / 7 - 200)),
    s: Array.from({ length: n }, (_, i) => (i % 13 === 0 ? null : `prefix/${Math.floor(i / 10)}/名前-${i % 10}`)),
  };
  const variants = [
    { name: "v2 pages, ZSTD", version: WriterVersion.V2, codec: Compression.ZSTD },
    { name: "v1 pages, Snappy", version: WriterVersion.V1, codec: Compression.SNAPPY },
  ];
  for (const v of variants)
    it(`reads DELTA_BYTE_ARRAY, DELTA_BINARY_PACKED and BYTE_STREAM_SPLIT columns identically: ${v.name}`, async () => {
      const file = join(dir, `arrow-rs-${v.version}-${v.codec}.parquet`);
      const props = new WriterPropertiesBuilder()
        .setWriterVersion(v.version)
        .setCompression(v.codec)
        .setDictionaryEnabled(false)
        .setMaxRowGroupSize(1000)
        .setColumnEncoding("id", Encoding.DELTA_BINARY_PACKED)
        .setColumnEncoding("i32", Encoding.DELTA_BINARY_PACKED)
        .setColumnEncoding("f", Encoding.BYTE_STREAM_SPLIT)
        .setColumnEncoding("s", Encoding.DELTA_BYTE_ARRAY)
        .build();
      writeFileSync(file, writeParquet(WasmTable.fromIPCStream(tableToIPC(tableFromArrays(arrays), "stream")), props));
      const encodings = await duck.rows(
        `SELECT DISTINCT path_in_schema, encodings FROM parquet_metadata('${file}') ORDER BY 1`,
      );
      expect(encodings.map((r) => `${String(r[0])}: ${String(r[1])}`).join("; ")).toMatch(
        /f: .*BYTE_STREAM_SPLIT.*i32: .*DELTA_BINARY_PACKED.*id: .*DELTA_BINARY_PACKED.*s: .*DELTA_BYTE_ARRAY/,
      );
      await expectSameOnDask(readParquet(file, { blocksize: 1 }), v.name);
    });
});

describe("damaged Parquet on Dask", () => {
  /** A valid Snappy file of `t`, its path and its footer (planned before it is damaged). */
  async function victim(
    name: string,
  ): Promise<{ file: string; df: DataFrame; chunk: { start: number; length: number } }> {
    const file = join(dir, name);
    await duck.run(`COPY (SELECT id, s_plain, f64 FROM t) TO '${file}' (FORMAT parquet, COMPRESSION snappy)`);
    const df = readParquet(file);
    return { file, df, chunk: readParquetFooter(file).rowGroups[0].chunks[1] };
  }

  async function expectIoError(df: DataFrame, file: string): Promise<void> {
    const err = await df.compute({ cluster: fx.dask }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(BasinError);
    const e = err as BasinError;
    expect(e.code, e.message).toBe("BASIN_IO");
    expect(e.message).toContain(file);
    expect(e.message).not.toMatch(/Traceback|BASIN_INTERNAL/);
  }

  function overwrite(file: string, at: number, bytes: Uint8Array): void {
    const fd = openSync(file, "r+");
    try {
      writeSync(fd, bytes, 0, bytes.length, at);
    } finally {
      closeSync(fd);
    }
  }

  it("dates and timestamps beyond pandas' nanosecond range are a BASIN_IO error naming the file and column", async () => {
    for (const [name, sql] of [
      ["old-date", "SELECT DATE '1500-03-01' AS d"],
      ["far-ts", "SELECT TIMESTAMP '2300-01-01 00:00:00' AS d"],
    ]) {
      const file = join(dir, `${name}.parquet`);
      await duck.run(`COPY (${sql} UNION ALL SELECT NULL) TO '${file}' (FORMAT parquet)`);
      await expectIoError(readParquet(file), file);
      const err = (await readParquet(file)
        .compute({ cluster: fx.dask })
        .catch((e: unknown) => e)) as BasinError;
      expect(err.message).toContain('column "d"');
      expect(err.message).toContain("run this pipeline on the local cluster");
    }
  });

  it("a garbled page header is a BASIN_IO error naming the file", async () => {
    const { file, df, chunk } = await victim("bad-header.parquet");
    overwrite(file, chunk.start, new Uint8Array(16).fill(0xff));
    await expectIoError(df, file);
  });

  it("garbled compressed page data is a BASIN_IO error naming the file", async () => {
    const { file, df, chunk } = await victim("bad-data.parquet");
    const noise = Uint8Array.from({ length: Math.min(400, chunk.length - 80) }, (_, i) => (i * 131 + 7) & 0xff);
    overwrite(file, chunk.start + 60, noise);
    await expectIoError(df, file);
  });

  it("a file cut short after planning is a BASIN_IO error naming the file", async () => {
    const { file, df } = await victim("cut.parquet");
    const bytes = readFileSync(file);
    writeFileSync(file, bytes.subarray(0, Math.floor(bytes.length / 2)));
    await expectIoError(df, file);
  });

  it("a file replaced by another table after planning is a BASIN_IO error naming the file", async () => {
    const { file, df } = await victim("replaced.parquet");
    const other = join(dir, "other.parquet");
    await duck.run(`COPY (SELECT id FROM t) TO '${other}' (FORMAT parquet)`);
    copyFileSync(other, file);
    await expectIoError(df, file);
  });
});

describe("other file formats on Dask", () => {
  it("NDJSON and Arrow IPC scans fail before anything runs, naming the reader and what to do", async () => {
    const json = join(dir, "rows.ndjson");
    const arrow = join(dir, "rows.arrow");
    writeFileSync(json, '{"a": 1, "s": "x"}\n{"a": 2, "s": "y"}\n');
    await fromColumns({ a: [1, 2] }).writeArrow(arrow, { cluster: fx.local });
    for (const [df, reader] of [
      [readJson(json), "readJson"],
      [readArrow(arrow), "readArrow"],
    ] as const) {
      const err = await df.compute({ cluster: fx.dask }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(BasinError);
      const e = err as BasinError;
      expect(e.code).toBe("BASIN_PLAN");
      expect(e.message).toContain(`${reader}() cannot run on a Dask cluster yet`);
      expect(e.message).toContain("convert the file to Parquet");
      expect(e.location).toMatch(/dask_parquet\.test\.ts:\d+/);
    }
  });
});
