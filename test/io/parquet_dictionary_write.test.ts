// The native Parquet writer's dictionary encoding (native/src/io/parquet_write.cc):
// columns whose values repeat are written as a PLAIN dictionary page and RLE_DICTIONARY
// data pages, a nearly unique column falls back to PLAIN for its chunk, and the file
// reads back the same in DuckDB, Basin's native reader and parquet-wasm (the fallback
// reader) — nulls, unicode, -0 and NaN, dates, µs timestamps, over partitions that are
// empty or hold one row.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { tableFromIPC } from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { col, fromColumns, readParquet } from "../../engine/api/index.js";
import { parquetLib } from "../../engine/io/arrow_lib.js";
import { makeTempDir, removeDir } from "../helpers/cli.js";
import { twoClusters } from "../helpers/clusters.js";
import { arrowRows } from "../helpers/arrow_rows.js";
import { Duck, expectSameRows, tableRows } from "../helpers/oracle.js";

const ROWS = 8000;
// i unique; s few strings (unicode, empty, nulls); u nearly unique strings; k few ints;
// f few doubles with -0, NaN and infinities; d few dates; ts few µs timestamps; b bools.
// r runs of 9 equal values broken by nulls (RLE runs between bit-packed groups).
const COLS = "i, s, u, k, f, d, ts, b, r";
let dir: string;
let duck: Duck;
const clusters = twoClusters();

beforeAll(async () => {
  dir = makeTempDir("basin-pqdict-");
  duck = await Duck.open();
  await duck.run(`CREATE TABLE e AS SELECT
      i::BIGINT AS i,
      CASE i % 7 WHEN 0 THEN NULL WHEN 1 THEN '' WHEN 2 THEN '東京 ☃ ünï' WHEN 3 THEN 'say "hi", ok'
        ELSE 'k' || (i % 40) END AS s,
      CASE WHEN i % 50 = 0 THEN NULL ELSE md5(i::VARCHAR) || '☃' END AS u,
      CASE WHEN i % 11 = 0 THEN NULL ELSE (i % 13 - 6)::BIGINT * 1000000000000 END AS k,
      CASE i % 6 WHEN 0 THEN -0.0 WHEN 1 THEN 'NaN'::DOUBLE WHEN 2 THEN 'Infinity'::DOUBLE WHEN 3 THEN NULL
        ELSE (i % 5) / 3.0 END AS f,
      CASE WHEN i % 9 = 0 THEN NULL ELSE DATE '1969-12-25' + (i % 17)::INTEGER END AS d,
      CASE WHEN i % 8 = 0 THEN NULL ELSE TIMESTAMP '1969-12-31 23:59:59' + to_microseconds(i % 23 * 1000003) END AS ts,
      CASE WHEN i % 19 = 0 THEN NULL ELSE i % 3 = 0 END AS b,
      CASE WHEN i % 97 = 0 OR i % 23 = 5 THEN NULL ELSE (i // 9 % 4)::BIGINT END AS r
    FROM range(${ROWS}) t(i)`);
  await duck.run(`COPY (SELECT * FROM e ORDER BY i) TO '${dir}/e.parquet' (FORMAT parquet, ROW_GROUP_SIZE 500)`);
});

afterAll(() => {
  duck.close();
  removeDir(dir);
});

// 16 partitions of 500 rows; the filter leaves 5 whole, then one-row and empty ones.
const KEEP = "i < 2500 OR i % 1000 = 0";
const frame = () =>
  readParquet(`${dir}/e.parquet`, { blocksize: 1 }).filter(col("i").lt(2500).or(col("i").mod(1000).eq(0)));
const us = COLS.replace("ts", "epoch_us(ts)");

describe("writeParquet: dictionary encoding", () => {
  it.each(["snappy", "uncompressed"] as const)(
    "%s: repeating columns as dictionary pages, a nearly unique one PLAIN; DuckDB, Basin and parquet-wasm read back every row",
    async (compression) => {
      const path = join(dir, `dict-${compression}.parquet`);
      const s = await frame().writeParquet(path, { cluster: clusters.four, compression, rowGroupSize: 1000 });
      const want = await duck.rows(`SELECT ${us} FROM e WHERE ${KEEP} ORDER BY i`);
      expect(s.rows).toBe(want.length);

      // Per column, the encodings of its chunks: dictionary where values repeat (a
      // chunk of a row or two gains nothing from a dictionary: PLAIN).
      const enc = await duck.rows(
        `SELECT path_in_schema, list(DISTINCT encodings ORDER BY encodings) FROM parquet_metadata('${path}') WHERE row_group_num_rows > 10 GROUP BY 1 ORDER BY 1`,
      );
      const byColumn = Object.fromEntries(enc.map((r) => [r[0], (r[1] as string[]).join(" | ")]));
      expect(byColumn).toEqual({
        b: "PLAIN, RLE",
        d: "PLAIN, RLE, RLE_DICTIONARY",
        f: "PLAIN, RLE, RLE_DICTIONARY",
        i: "PLAIN, RLE",
        k: "PLAIN, RLE, RLE_DICTIONARY",
        r: "PLAIN, RLE, RLE_DICTIONARY",
        s: "PLAIN, RLE, RLE_DICTIONARY",
        ts: "PLAIN, RLE, RLE_DICTIONARY",
        u: "PLAIN, RLE",
      });

      // DuckDB.
      expectSameRows(await duck.rows(`SELECT ${us} FROM read_parquet('${path}')`), want, "duckdb", true);
      const signed = `SELECT count(*) FILTER (WHERE signbit(f) AND f = 0), count(*) FILTER (WHERE isnan(f))`;
      expect(await duck.rows(`${signed} FROM read_parquet('${path}')`)).toEqual(
        await duck.rows(`${signed} FROM e WHERE ${KEEP}`),
      );
      // Min/max statistics of the integer columns still come from the values.
      expect(
        await duck.rows(
          `SELECT min(stats_min_value::BIGINT), max(stats_max_value::BIGINT) FROM parquet_metadata('${path}') WHERE path_in_schema = 'k'`,
        ),
      ).toEqual(await duck.rows(`SELECT min(k), max(k) FROM e WHERE ${KEEP}`));

      // Basin's native reader: the same rows as it reads from DuckDB's file.
      const back = await readParquet(path).compute({ cluster: clusters.one });
      const source = await frame().compute({ cluster: clusters.one });
      expectSameRows(tableRows(back), tableRows(source), "basin", true);
      expect(back.column("f").filter((x) => Object.is(x, -0)).length).toBe(
        source.column("f").filter((x) => Object.is(x, -0)).length,
      );

      // parquet-wasm, read through apache-arrow.
      const t = tableFromIPC(parquetLib().readParquet(readFileSync(path)).intoIPCStream());
      expectSameRows(arrowRows(t, COLS.split(", ")), want, "parquet-wasm", true);
    },
  );

  it("index runs of every length from 1 to 20, at index widths of 1, 2, 8 and 14 bits, read back by DuckDB and Basin", async () => {
    let seed = 11;
    const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const columns: Record<string, (number | null)[]> = {};
    for (const distinct of [2, 3, 200, 100_000]) {
      const v: (number | null)[] = [];
      while (v.length < 150_000) {
        const x = rnd(7) === 0 ? null : rnd(distinct);
        for (let k = 1 + rnd(20); k > 0; k--) v.push(x);
      }
      columns[`c${distinct}`] = v.slice(0, 150_000);
    }
    const path = join(dir, "runs.parquet");
    await fromColumns(columns).writeParquet(path, { rowGroupSize: 150_000 });
    const names = Object.keys(columns);
    const want = columns[names[0]].map((_, r) => names.map((n) => columns[n][r]));
    expectSameRows(await duck.rows(`SELECT ${names.join(", ")} FROM read_parquet('${path}')`), want, "duckdb", true);
    expectSameRows(tableRows(await readParquet(path).compute()), want, "basin", true);
    expect((await duck.rows(`SELECT DISTINCT encodings FROM parquet_metadata('${path}')`)).map((r) => r[0])).toEqual([
      "PLAIN, RLE, RLE_DICTIONARY",
    ]);
  });

  it("a dictionary past 8 MiB falls back to PLAIN although its values repeat; DuckDB reads the rows back", async () => {
    // 450,000 distinct 16-byte strings, each twice in a row: at every check the dictionary
    // is half the PLAIN bytes, until it passes 8 MiB.
    const n = 450_000;
    const s = Array.from({ length: 2 * n }, (_, i) => `key-${String(i >> 1).padStart(12, "0")}`);
    const path = join(dir, "big-dictionary.parquet");
    await fromColumns({ s, k: s.map((_, i) => i % 3) }).writeParquet(path, { rowGroupSize: 2 * n });
    expect(
      await duck.rows(`SELECT path_in_schema, encodings FROM parquet_metadata('${path}') ORDER BY path_in_schema`),
    ).toEqual([
      ["k", "PLAIN, RLE, RLE_DICTIONARY"],
      ["s", "PLAIN, RLE"],
    ]);
    expect(await duck.rows(`SELECT count(*), count(DISTINCT s), min(s), max(s) FROM read_parquet('${path}')`)).toEqual([
      [BigInt(2 * n), BigInt(n), s[0], s[2 * n - 1]],
    ]);
  });

  it("an empty result and a one-row result write readable files", async () => {
    for (const [name, keep] of [
      ["none", col("i").lt(0)],
      ["one", col("i").eq(4321)],
    ] as const) {
      const path = join(dir, `${name}.parquet`);
      await readParquet(`${dir}/e.parquet`, { blocksize: 1 }).filter(keep).writeParquet(path);
      expectSameRows(
        await duck.rows(`SELECT ${us} FROM read_parquet('${path}')`),
        await duck.rows(`SELECT ${us} FROM e WHERE ${name === "none" ? "false" : "i = 4321"}`),
        name,
        true,
      );
      expect((await readParquet(path).compute()).numRows).toBe(name === "none" ? 0 : 1);
    }
  });
});
