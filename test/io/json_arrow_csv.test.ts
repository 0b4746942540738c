// NDJSON and Arrow IPC reading, CSV and Arrow writing, against DuckDB and
// apache-arrow: the same rows (nulls, unicode, dates, timestamps) with 1 and 4
// workers, many partitions, empty results.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Dictionary,
  Int32,
  RecordBatchFileWriter,
  RecordBatchStreamWriter,
  Table as ArrowTableOf,
  tableFromArrays,
  tableFromIPC,
  tableToIPC,
  Utf8,
  vectorFromArray,
  type Table as ArrowTable,
} from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { col, count, readArrow, readCsv, readJson, readParquet, type DataFrame } from "../../engine/api/index.js";
import { makeTrips, TRIPS_SQL_COLUMNS, writeTripsCsv } from "../helpers/data.js";
import { Duck, expectSameRows } from "../helpers/oracle.js";
import { expectOnBoth, twoClusters } from "../helpers/clusters.js";
import { rejected } from "../helpers/errors.js";

const ROWS = 4000;
const COLS = "rid, k, city, v, f, flag, day, ts";
// read_json_auto leaves "YYYY-MM-DD HH:MM:SS" strings as VARCHAR.
const JSON_COLS = "rid, k, city, v, f, flag, day::DATE, ts::TIMESTAMP";
let out: string;
let duck: Duck;
const clusters = twoClusters();

beforeAll(async () => {
  const csv = writeTripsCsv(makeTrips(ROWS, 5), 1);
  out = mkdtempSync(join(tmpdir(), "basin-io-"));
  duck = await Duck.open();
  await duck.run(
    `CREATE TABLE t AS SELECT *, day::TIMESTAMP + to_microseconds(rid * 1000003) AS ts FROM read_csv('${csv}/*.csv', header=true, columns=${TRIPS_SQL_COLUMNS})`,
  );
  await duck.run(`COPY (SELECT * FROM t ORDER BY rid) TO '${out}/t.ndjson' (FORMAT json)`);
  await duck.run(`COPY (SELECT * FROM t ORDER BY rid) TO '${out}/t.parquet' (FORMAT parquet)`);
});

afterAll(() => duck.close());

/** Same rows as DuckDB with 1 and 4 workers, and the same result on both. */
async function expectDuck(frame: DataFrame, sql: string, label: string, ordered = false): Promise<void> {
  await expectOnBoth(clusters, frame, await duck.rows(sql), label, { ordered });
}

describe("readJson (newline-delimited)", () => {
  it("infers types from a sample; ISO dates and timestamps are parsed only when asked", () => {
    expect(readJson(`${out}/t.ndjson`).schema.map((f) => f.type)).toEqual([
      "int64",
      "int64",
      "string",
      "int64",
      "float64",
      "bool",
      "string",
      "string",
    ]);
    expect(readJson(`${out}/t.ndjson`, { parseDates: ["day", "ts"] }).schema.map((f) => f.type)).toEqual([
      "int64",
      "int64",
      "string",
      "int64",
      "float64",
      "bool",
      "date",
      "timestamp",
    ]);
  });

  it("reads what DuckDB's read_json_auto reads, split on newlines into many partitions", async () => {
    const df = readJson(`${out}/t.ndjson`, { parseDates: ["day", "ts"], blocksize: 8192 });
    const t = await df.compute({ cluster: clusters.four });
    expect(t.info.tasks).toBeGreaterThan(20);
    await expectDuck(df, `SELECT ${JSON_COLS} FROM read_json_auto('${out}/t.ndjson')`, "ndjson", true);
    await expectDuck(
      df.filter(col("flag")).groupBy("city").agg(col("f").mean().alias("m"), count().alias("n")),
      `SELECT city, avg(f), count(*) FROM read_json_auto('${out}/t.ndjson') WHERE flag GROUP BY city`,
      "ndjson groupBy",
    );
  });

  it("reads keys missing from some lines as null, blank lines skipped, and a glob of files", async () => {
    writeFileSync(
      join(out, "a-1.ndjson"),
      '{"id": 1, "name": "東京", "x": 1.5}\n\n{"id": 2}\r\n{"id": 3, "name": null, "x": 2}\n',
    );
    writeFileSync(join(out, "a-2.ndjson"), '{"id": 4, "name": "🙂", "x": -1}');
    const df = readJson(`${out}/a-*.ndjson`);
    expect(df.schema).toEqual([
      { name: "id", type: "int64" },
      { name: "name", type: "string" },
      { name: "x", type: "float64" },
    ]);
    await expectDuck(df, `SELECT id, name, x FROM read_json_auto('${out}/a-*.ndjson')`, "ragged keys");
  });

  it("reads a key dtypes names though the sample lacks it (it comes later, or in another file); parseDates of no file's key says how to read it", async () => {
    const lines = Array.from({ length: 30 }, (_, i) => JSON.stringify(i === 25 ? { id: i, late: "x" } : { id: i }));
    writeFileSync(join(out, "late-1.ndjson"), `${lines.join("\n")}\n`);
    writeFileSync(join(out, "late-2.ndjson"), "");
    const glob = `${out}/late-*.ndjson`;
    const df = readJson(glob, { sampleRows: 10, dtypes: { late: "string" } });
    expect(df.schema).toEqual([
      { name: "id", type: "int64" },
      { name: "late", type: "string" },
    ]);
    await expectDuck(df, `SELECT id, late FROM read_json_auto('${glob}')`, "late key");
    expect(readJson(glob, { sampleRows: 10 }).schema.map((f) => f.name)).toEqual(["id"]);
    expect(() => readJson(glob, { sampleRows: 10, parseDates: ["late"] })).toThrow(
      /parseDates names key "late", which no file has in its first 10 lines .*raise sampleRows/,
    );
  });

  it("reads integers beyond 2^53 exactly, as DuckDB does; one int64 cannot hold is BASIN_PARSE at its line", async () => {
    // JSON.parse rounds 9007199254740993 to ...992, and 456E72 wrapped to 0 in int64.
    const exact = ["9007199254740993", "-9223372036854775808", "1.2e18", "12345678901234567", "9223372036854775807"];
    const path = join(out, "big.ndjson");
    writeFileSync(path, exact.map((v, k) => `{"s": "a,\\"}${k}", "i": ${v}}`).join("\n") + "\n");
    await expectDuck(
      readJson(path, { dtypes: { i: "int64" } }).select("i"),
      `SELECT i FROM read_json('${path}', format = 'newline_delimited', columns = {'s': 'VARCHAR', 'i': 'BIGINT'})`,
      "big integers",
    );
    // Read as strings, numbers and nested values keep their text (DuckDB's VARCHAR).
    writeFileSync(path, exact.map((v) => `{"i": ${v}, "o": {"x": [1, ${v}]}}`).join("\n") + "\n");
    const strings = await readJson(path, { dtypes: { i: "string", o: "string" } }).compute();
    expect(strings.column("i")).toEqual(exact);
    expect(strings.column("o")).toEqual(exact.map((v) => `{"x":[1,${v}]}`));
    // DuckDB writes numbers again (1.2e18 as 1.2e+18): compared on the integers' digits.
    await expectDuck(
      readJson(path, { dtypes: { i: "string", o: "string" } })
        .select("i")
        .filter(col("i").str.contains("e", { literal: true }).not()),
      `SELECT i FROM read_json('${path}', format = 'newline_delimited', columns = {'i': 'VARCHAR', 'o': 'VARCHAR'}) WHERE i NOT LIKE '%e%'`,
      "big integers as strings",
    );
    for (const v of ["456E72", "9223372036854775808", "1.5"]) {
      writeFileSync(path, `{"i": 1}\n{"i": ${v}}\n`);
      const e = await rejected(readJson(path, { dtypes: { i: "int64" } }).compute(), "BASIN_PARSE");
      expect(e.message).toContain(`${path}:2: key "i" is ${v}`);
    }
  });
});

describe("Arrow IPC", () => {
  // One table sliced into batches: a shared schema, and batches that start at an offset.
  function arrowFrom(rows: unknown[][]): ArrowTable {
    return tableFromArrays({
      rid: BigInt64Array.from(rows.map((r) => BigInt(r[0] as number))),
      city: rows.map((r) => r[1] as string | null),
      f: rows.map((r) => r[2] as number | null),
    });
  }

  it("readArrow reads the file and stream formats with one partition per record batch", async () => {
    const rows = await duck.rows("SELECT rid, city, f FROM t ORDER BY rid");
    const whole = arrowFrom(rows);
    const batches = [0, 1, 1000, 2500, ROWS].flatMap((lo, i, a) =>
      i + 1 < a.length ? whole.slice(lo, a[i + 1]).batches : [],
    );
    const files = {
      "file.arrow": RecordBatchFileWriter.writeAll(batches).toUint8Array(true),
      "stream.arrows": RecordBatchStreamWriter.writeAll(batches).toUint8Array(true),
    };
    for (const [name, bytes] of Object.entries(files)) {
      writeFileSync(join(out, name), bytes);
      const df = readArrow(join(out, name));
      expect(df.schema).toEqual([
        { name: "rid", type: "int64" },
        { name: "city", type: "string" },
        { name: "f", type: "float64" },
      ]);
      const t = await df.compute({ cluster: clusters.four });
      expect(t.info.tasks).toBe(5); // 4 batches + concat
      await expectDuck(df, "SELECT rid, city, f FROM t ORDER BY rid", name, true);
      await expectDuck(df.filter(col("f").lt(0)).select("city"), "SELECT city FROM t WHERE f < 0", `${name} filtered`);
    }
  });

  it("readArrow reads each record batch of a stream with the dictionary in effect at it, as apache-arrow does", async () => {
    // The second batch's dictionary replaces the first's (a stream may do that).
    const dict = (values: (string | null)[]) =>
      new ArrowTableOf({ s: vectorFromArray(values, new Dictionary(new Utf8(), new Int32())) });
    const stream = dict(["a", "b"]).concat(dict(["c", "d", "a"]), dict(["e", null, "b", "b"]));
    const path = join(out, "replaced.arrows");
    writeFileSync(path, tableToIPC(stream, "stream"));
    const expected = tableFromIPC(readFileSync(path)).getChild("s")!.toArray() as (string | null)[];
    expect(expected).toEqual(["a", "b", "c", "d", "a", "e", null, "b", "b"]);
    const t = await readArrow(path).compute({ cluster: clusters.four });
    expect(t.column("s")).toEqual(expected);
  });

  it("writeArrow writes what apache-arrow reads back, nulls as nulls, and readArrow reads it again", async () => {
    const path = join(out, "out.arrow");
    const df = readParquet(`${out}/t.parquet`);
    const summary = await df.writeArrow(path, { cluster: clusters.four });
    expect(summary.rows).toBe(ROWS);
    const table = tableFromIPC(readFileSync(path));
    expect(table.numRows).toBe(ROWS);
    const expected = await duck.rows(`SELECT ${COLS} FROM t ORDER BY rid`);
    const names = COLS.split(", ");
    const arrowRows = Array.from({ length: table.numRows }, (_, i) =>
      names.map((n) => {
        const v = table.getChild(n)!.get(i) as unknown;
        if (n === "day" && typeof v === "number") return new Date(v);
        if (n === "ts" && typeof v === "bigint") return new Date(Number(v / 1000n));
        if (n === "ts" && typeof v === "number") return new Date(Math.floor(v));
        return v;
      }),
    );
    expectSameRows(arrowRows, expected, "apache-arrow reads Basin's file", true);
    expect(table.getChild("city")!.nullCount).toBe(expected.filter((r) => r[2] === null).length);
    await expectDuck(readArrow(path), `SELECT ${COLS} FROM t ORDER BY rid`, "Basin reads Basin's Arrow", true);
  });
});

describe("writeCsv", () => {
  it("writes a CSV that DuckDB reads back to the same rows: unicode, quotes, line breaks, µs timestamps, empty vs null strings", async () => {
    const path = join(out, "out.csv");
    const summary = await readParquet(`${out}/t.parquet`, { blocksize: 1 }).writeCsv(path, { cluster: clusters.four });
    expect(summary).toMatchObject({ path, rows: ROWS });
    expect(readFileSync(path, "utf8").split("\n")[0]).toBe(COLS.replaceAll(" ", ""));
    const back = await duck.rows(
      `SELECT ${COLS} FROM read_csv('${path}', header=true, quote='"', escape='"', columns={'rid': 'BIGINT', 'k': 'BIGINT', 'city': 'VARCHAR', 'v': 'BIGINT', 'f': 'DOUBLE', 'flag': 'BOOLEAN', 'day': 'DATE', 'ts': 'TIMESTAMP'})`,
    );
    expectSameRows(back, await duck.rows(`SELECT ${COLS} FROM t`), "csv");
    const us = await duck.rows(
      `SELECT epoch_us(ts) FROM read_csv('${path}', header=true, columns={'rid': 'BIGINT', 'k': 'BIGINT', 'city': 'VARCHAR', 'v': 'BIGINT', 'f': 'DOUBLE', 'flag': 'BOOLEAN', 'day': 'DATE', 'ts': 'TIMESTAMP'}) ORDER BY rid`,
    );
    expect(us).toEqual(await duck.rows("SELECT epoch_us(ts) FROM t ORDER BY rid"));
  });

  it("an empty result writes just the header", async () => {
    const path = join(out, "empty.csv");
    const s = await readParquet(`${out}/t.parquet`).filter(col("rid").lt(0)).select("rid", "city").writeCsv(path);
    expect(s.rows).toBe(0);
    expect(readFileSync(path, "utf8")).toBe("rid,city\n");
  });

  it("a folder of CSV parts whose first part is only a header reads back with the rows' types", async () => {
    const parts = join(out, "parts.csv");
    mkdirSync(parts);
    writeFileSync(join(parts, "part-00000.csv"), "rid,f,day,note\n");
    writeFileSync(join(parts, "part-00001.csv"), "rid,f,day,note\n1,2.5,,\n2,,2024-01-02,\n");
    writeFileSync(join(parts, "part-00002.csv"), "rid,f,day,note\n3,1e3,2024-01-03,x\n");
    const t = await readCsv(`${parts}/*.csv`, { parseDates: ["day"] }).compute();
    expect(t.schema.map((f) => f.type)).toEqual(["int64", "float64", "date", "string"]);
    expect(t.toRows().map((r) => r.f)).toEqual([2.5, null, 1000]);
  });
});
