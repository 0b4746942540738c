// Writers run by the workers (engine/run/write_frame.ts): CSV formatted natively a
// partition per task into one file in partition order, folder outputs with a part file
// per partition, progress and cancellation, read back by DuckDB (and apache-arrow)
// against the rows DuckDB made: nulls, unicode, quotes and line breaks, dates, µs
// timestamps, -0, NaN and infinities.
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tableFromIPC } from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { col, fromColumns, readParquet } from "../../engine/api/index.js";
import { makeTempDir, removeDir } from "../helpers/cli.js";
import { twoClusters } from "../helpers/clusters.js";
import { rejected } from "../helpers/errors.js";
import { arrowRows } from "../helpers/arrow_rows.js";
import { Duck, expectSameRows } from "../helpers/oracle.js";

const ROWS = 6000;
const COLS = "i, f, s, d, ts, b";
const TYPES = "{'i': 'BIGINT', 'f': 'DOUBLE', 's': 'VARCHAR', 'd': 'DATE', 'ts': 'TIMESTAMP', 'b': 'BOOLEAN'}";
let dir: string;
let duck: Duck;
const clusters = twoClusters();

beforeAll(async () => {
  dir = makeTempDir("basin-writers-");
  duck = await Duck.open();
  // Every awkward value, many times over, in 12 row groups (several partitions when read with blocksize 1).
  await duck.run(`CREATE TABLE e AS SELECT
      i::BIGINT AS i,
      CASE i % 11 WHEN 0 THEN -0.0 WHEN 1 THEN 'NaN'::DOUBLE WHEN 2 THEN 'Infinity'::DOUBLE WHEN 3 THEN '-Infinity'::DOUBLE
        WHEN 4 THEN 1e21 WHEN 5 THEN 5e-324 WHEN 6 THEN NULL WHEN 7 THEN 1.5e-7 ELSE i / 7.0 - 300 END AS f,
      CASE i % 9 WHEN 0 THEN '' WHEN 1 THEN NULL WHEN 2 THEN 'say "hi", ok' WHEN 3 THEN 'two' || chr(10) || 'lines'
        WHEN 4 THEN 'cr' || chr(13) || chr(10) || 'lf' WHEN 5 THEN '東京 ☃ ünï' WHEN 6 THEN ' padded ' ELSE 'k' || i END AS s,
      CASE WHEN i % 13 = 0 THEN NULL ELSE DATE '1969-12-31' + (i * 37 % 40000 - 20000)::INTEGER END AS d,
      CASE WHEN i % 17 = 0 THEN NULL ELSE TIMESTAMP '1970-01-01' + to_microseconds(i * 1000003 - 3000000000) END AS ts,
      CASE WHEN i % 19 = 0 THEN NULL ELSE i % 2 = 0 END AS b
    FROM range(${ROWS}) t(i)`);
  await duck.run(`COPY (SELECT * FROM e ORDER BY i) TO '${dir}/e.parquet' (FORMAT parquet, ROW_GROUP_SIZE 500)`);
});

afterAll(() => {
  duck.close();
  removeDir(dir);
});

const frame = () => readParquet(`${dir}/e.parquet`, { blocksize: 1 });
const expected = () => duck.rows(`SELECT ${COLS} FROM e ORDER BY i`);
const readCsvBack = (glob: string) =>
  duck.rows(
    `SELECT ${COLS} FROM read_csv('${glob}', header=true, quote='"', escape='"', allow_quoted_nulls=false, columns=${TYPES})`,
  );
const noTemp = (folder: string) => expect(readdirSync(folder).filter((n) => n.includes(".partial-"))).toEqual([]);

describe("writeCsv by the workers", () => {
  it("DuckDB reads back every row in order, over several partitions on 4 workers: nulls, quotes, line breaks, unicode, -0, NaN, infinities, dates, µs timestamps", async () => {
    const path = join(dir, "all.csv");
    const summary = await frame().writeCsv(path, { cluster: clusters.four });
    expect(summary).toMatchObject({ path, rows: ROWS, bytes: statSync(path).size });
    expect(readFileSync(path, "utf8").split("\n")[0]).toBe(COLS.replaceAll(" ", ""));
    expectSameRows(await readCsvBack(path), await expected(), "csv", true);
    // Empty strings stay "" and nulls stay empty fields.
    expect(
      await duck.rows(
        `SELECT count(*) FROM read_csv('${path}', header=true, allow_quoted_nulls=false, columns=${TYPES}) WHERE s = ''`,
      ),
    ).toEqual(await duck.rows(`SELECT count(*) FROM e WHERE s = ''`));
    noTemp(dir);
  });

  it("a sorted result keeps its order across partitions written by different workers", async () => {
    const path = join(dir, "sorted.csv");
    await frame()
      .sort(["f", "i"], { descending: [true, false] })
      .select("i")
      .writeCsv(path, { cluster: clusters.four });
    const back = readFileSync(path, "utf8").trim().split("\n").slice(1).map(Number);
    const want = (await duck.rows(`SELECT i FROM e ORDER BY f DESC NULLS LAST, i`)).map((r) => Number(r[0]));
    expect(back).toEqual(want);
  });

  it("reports a write task per partition as progress, then replaces the old file", async () => {
    const path = join(dir, "progress.csv");
    writeFileSync(path, "old\n");
    const seen: { done: number; total: number }[] = [];
    await frame().writeCsv(path, {
      cluster: clusters.four,
      onProgress: (e) => (e.group === "write" ? seen.push({ done: e.done, total: e.total }) : undefined),
    });
    const parts = (await frame().writeCsv(join(dir, "parts/"), { cluster: clusters.four })).files;
    expect(parts).toBeGreaterThan(1);
    expect(seen.at(-1)).toEqual({ done: parts, total: parts });
    expect(readFileSync(path, "utf8").startsWith("i,f,s")).toBe(true);
  });

  it("cancelled while writing: BASIN_CANCELLED, the old file kept and no temp file", async () => {
    const path = join(dir, "cancelled.csv");
    writeFileSync(path, "old\n");
    const ac = new AbortController();
    const e = await rejected(
      frame().writeCsv(path, {
        cluster: clusters.one,
        signal: ac.signal,
        onProgress: (p) => (p.group === "write" ? ac.abort("enough") : undefined),
      }),
    );
    expect(e.code).toBe("BASIN_CANCELLED");
    await clusters.one.idle();
    expect(readFileSync(path, "utf8")).toBe("old\n");
    noTemp(dir);
  });
});

describe("writeParquet by the workers (native encoder, footers merged)", () => {
  it.each(["snappy", "uncompressed", "zstd"] as const)(
    "one %s file with row groups from every partition: DuckDB and Basin read back every row in order, -0 and NaN kept",
    async (compression) => {
      const path = join(dir, `all-${compression}.parquet`);
      const s = await frame().writeParquet(path, { cluster: clusters.four, compression, rowGroupSize: 700 });
      expect(s).toMatchObject({ path, rows: ROWS, bytes: statSync(path).size });
      const back = await duck.rows(`SELECT ${COLS} FROM read_parquet('${path}')`);
      expectSameRows(back, await expected(), `parquet ${compression}`, true);
      expect(await duck.rows(`SELECT count(*) FROM read_parquet('${path}') WHERE signbit(f) AND f = 0`)).toEqual(
        await duck.rows(`SELECT count(*) FROM e WHERE signbit(f) AND f = 0`),
      );
      // Row groups of at most 700 rows from each of the parts, codec as asked, types as the Arrow writer wrote them.
      const meta = await duck.rows(
        `SELECT max(row_group_num_rows), count(DISTINCT row_group_id), any_value(compression) FROM parquet_metadata('${path}')`,
      );
      expect(Number(meta[0][0])).toBeLessThanOrEqual(700);
      expect(Number(meta[0][1])).toBeGreaterThanOrEqual(Math.ceil(ROWS / 700));
      expect(String(meta[0][2]).toLowerCase()).toBe(compression);
      expect(
        await duck.rows(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('${path}'))`),
      ).toEqual([
        ["i", "BIGINT"],
        ["f", "DOUBLE"],
        ["s", "VARCHAR"],
        ["d", "DATE"],
        ["ts", "TIMESTAMP"],
        ["b", "BOOLEAN"],
      ]);
      const again = await readParquet(path).compute({ cluster: clusters.four });
      expect(again.numRows).toBe(ROWS);
      expect(again.column("s").filter((v) => v === null).length).toBe(
        Number((await duck.rows(`SELECT count(*) FROM e WHERE s IS NULL`))[0][0]),
      );
      noTemp(dir);
    },
  );

  it("snappy pages over many 64 KiB blocks, long repeats and incompressible text, read back by DuckDB", async () => {
    const path = join(dir, "snappy.parquet");
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const s = Array.from({ length: 30_000 }, (_, i) =>
      i % 3 === 0
        ? "abc".repeat(1 + (i % 200)) // long runs: copies longer than 64 bytes
        : i % 3 === 1
          ? Array.from({ length: 20 + (i % 50) }, () => String.fromCharCode(33 + Math.floor(rnd() * 90))).join("")
          : `row ${i} ${"x".repeat(i % 7)}`,
    );
    await fromColumns({ i: s.map((_, i) => i), s }).writeParquet(path, { rowGroupSize: 20_000 });
    const back = (await duck.rows(`SELECT s FROM read_parquet('${path}')`)).map((r) => r[0]);
    expect(back).toEqual(s);
  });

  it("row-group statistics let a filter skip row groups (min/max of the integer columns)", async () => {
    const path = join(dir, "stats.parquet");
    await frame().sort("i").writeParquet(path, { cluster: clusters.four, rowGroupSize: 500 });
    const stats = await duck.rows(
      `SELECT stats_min_value, stats_max_value, stats_null_count FROM parquet_metadata('${path}') WHERE path_in_schema = 'i' ORDER BY row_group_id`,
    );
    expect(stats.length).toBeGreaterThanOrEqual(ROWS / 500);
    // Sorted, contiguous ids: each row group's min is the previous one's max + 1.
    const ranges = stats.map((r) => [Number(r[0]), Number(r[1]), Number(r[2])]);
    expect(ranges[0][0]).toBe(0);
    expect(ranges.at(-1)![1]).toBe(ROWS - 1);
    for (let g = 1; g < ranges.length; g++) expect(ranges[g][0], `row group ${g}`).toBe(ranges[g - 1][1] + 1);
    for (const r of ranges) expect(r[2]).toBe(0);
    const few = await readParquet(path, { blocksize: 1 }).filter(col("i").lt(10)).compute({ cluster: clusters.one });
    expect(few.numRows).toBe(10);
    // Basin's reader pruned by those statistics: a task for the one row group that can match, not one per group.
    expect(few.info.tasks).toBeLessThan(ranges.length / 2);
  });
});

describe("writeArrow (one file, streamed from the store)", () => {
  it("one Arrow IPC file that apache-arrow reads back, in order: nulls, unicode, -0, NaN, infinities, dates, µs timestamps", async () => {
    const path = join(dir, "all.arrow");
    const s = await frame().writeArrow(path, { cluster: clusters.four });
    expect(s).toMatchObject({ path, rows: ROWS, bytes: statSync(path).size });
    const t = tableFromIPC(readFileSync(path));
    const rows = arrowRows(t, COLS.split(", "));
    const want = await duck.rows(`SELECT i, f, s, d, epoch_us(ts), b FROM e ORDER BY i`);
    expectSameRows(rows, want, "arrow", true);
    const f = t.getChild("f")!.toArray() as Float64Array;
    expect(f.filter((x, i) => x === 0 && Object.is(x, -0) && t.getChild("f")!.isValid(i)).length).toBe(
      Number((await duck.rows(`SELECT count(*) FROM e WHERE signbit(f) AND f = 0`))[0][0]),
    );
    expect(t.getChild("s")!.nullCount).toBe(Number((await duck.rows(`SELECT count(*) FROM e WHERE s IS NULL`))[0][0]));
    noTemp(dir);
  });

  it("an empty result writes a file with the schema that apache-arrow reads", async () => {
    const path = join(dir, "empty.arrow");
    await frame().filter(col("i").lt(0)).select("i", "s").writeArrow(path, { cluster: clusters.four });
    const t = tableFromIPC(readFileSync(path));
    expect(t.numRows).toBe(0);
    expect(t.schema.fields.map((f) => f.name)).toEqual(["i", "s"]);
  });
});

describe("folder outputs", () => {
  it("writeCsv('out/') writes a part file per partition that DuckDB reads back in order", async () => {
    const out = join(dir, "csvparts/");
    const s = await frame().writeCsv(out, { cluster: clusters.four });
    expect(s.rows).toBe(ROWS);
    expect(s.files).toBeGreaterThan(1);
    const names = readdirSync(out).sort();
    expect(names).toEqual(Array.from({ length: s.files! }, (_, i) => `part-${String(i).padStart(5, "0")}.csv`));
    expectSameRows(await readCsvBack(`${out}*.csv`), await expected(), "csv parts", true);
    noTemp(dir);
  });

  it("writeParquet to an existing folder of parts replaces them all (fewer parts: none left over), keeping -0 and NaN", async () => {
    const out = join(dir, "pq");
    mkdirSync(out);
    for (let i = 0; i < 20; i++) writeFileSync(join(out, `part-${String(i).padStart(5, "0")}.parquet`), "stale");
    const s = await frame().writeParquet(out, { cluster: clusters.four, compression: "zstd" });
    expect(s.rows).toBe(ROWS);
    expect(s.files).toBeLessThan(20);
    expect(readdirSync(out)).toHaveLength(s.files!);
    const back = await duck.rows(`SELECT ${COLS} FROM read_parquet('${out}/*.parquet') ORDER BY i`);
    expectSameRows(back, await expected(), "parquet parts", true);
    expect(await duck.rows(`SELECT count(*) FROM read_parquet('${out}/*.parquet') WHERE signbit(f) AND f = 0`)).toEqual(
      await duck.rows(`SELECT count(*) FROM e WHERE signbit(f) AND f = 0`),
    );
    expect(readdirSync(dir).filter((n) => n.startsWith(".pq."))).toEqual([]);
  });

  it("writeArrow('out/') writes a part file per partition (empty and one-row ones too) that apache-arrow reads back as the single file's rows and schema", async () => {
    // e.parquet's row groups of 2048 rows are the partitions: the first left empty, the second with
    // 952 rows, the last with one.
    const some = () =>
      frame().filter(col("i").mod(4096).ge(2048).and(col("i").mod(4096).lt(3000)).or(col("i").eq(5000)));
    const out = join(dir, "arrowparts/");
    const s = await some().writeArrow(out, { cluster: clusters.four });
    const single = join(dir, "arrowsingle.arrow");
    await some().writeArrow(single, { cluster: clusters.four });
    const names = readdirSync(out).sort();
    expect(names.length).toBe(s.files);
    const one = tableFromIPC(readFileSync(single));
    const parts = names.map((n) => tableFromIPC(readFileSync(join(out, n))));
    expect(parts.some((p) => p.numRows === 0) && parts.some((p) => p.numRows === 1)).toBe(true);
    const fields = (t: typeof one) => t.schema.fields.map((f) => `${f.name}: ${String(f.type)} ${f.nullable}`);
    for (const p of parts) expect(fields(p)).toEqual(fields(one));
    // Every value the same, -0 and NaN included (toEqual tells -0 from 0).
    const cols = COLS.split(", ");
    expect(parts.flatMap((p) => arrowRows(p, cols))).toEqual(arrowRows(one, cols));
    expect(parts.reduce((n, p) => n + p.getChild("s")!.nullCount, 0)).toBe(one.getChild("s")!.nullCount);
    expectSameRows(
      arrowRows(one, cols),
      await duck.rows(
        `SELECT i, f, s, d, epoch_us(ts), b FROM e WHERE i % 4096 BETWEEN 2048 AND 2999 OR i = 5000 ORDER BY i`,
      ),
      "arrow parts",
      true,
    );
    noTemp(dir);
  });

  it("an empty result still writes a part with the header", async () => {
    const out = join(dir, "emptyparts/");
    const s = await frame().filter(col("i").lt(0)).select("i", "s").writeCsv(out);
    expect(s.rows).toBe(0);
    const names = readdirSync(out);
    expect(names.length).toBeGreaterThan(0);
    for (const n of names) expect(readFileSync(join(out, n), "utf8")).toBe("i,s\n");
  });
});
