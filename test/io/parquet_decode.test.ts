// The native Parquet decoder against DuckDB: files DuckDB writes with every codec it
// offers and both data page versions (dictionary and PLAIN pages, nulls, unicode,
// booleans, 32- and 64-bit and unsigned integers, floats, dates, timestamps in
// milli-, micro- and nanoseconds) read back as DuckDB reads them; gzip pages (which
// the addon leaves to parquet-wasm) read the same.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readParquet } from "../../engine/api/index.js";
import { Duck } from "../helpers/oracle.js";
import { expectOnBoth, twoClusters } from "../helpers/clusters.js";

const out = mkdtempSync(join(tmpdir(), "basin-parquet-decode-"));
let duck: Duck;
const clusters = twoClusters();

// Every type, with nulls in most columns; strings both repetitive (dictionary pages)
// and unique (DuckDB falls back to PLAIN when the dictionary grows too big).
const TABLE = `CREATE TABLE t AS SELECT
  i AS id,
  CASE WHEN i % 7 = 0 THEN NULL ELSE (i * 37 % 1000 - 500)::INTEGER END AS i32,
  CASE WHEN i % 5 = 0 THEN NULL ELSE i * 1000003 - 7 END AS i64,
  (i % 250)::UTINYINT AS u8,
  (4000000000 - i)::UINTEGER AS u32,
  CASE WHEN i % 3 = 0 THEN NULL ELSE (i / 8.0)::FLOAT END AS f32,
  CASE WHEN i % 11 = 0 THEN NULL WHEN i % 13 = 0 THEN -0.0 ELSE (i * 0.1)::DOUBLE END AS f64,
  CASE WHEN i % 4 = 0 THEN NULL ELSE i % 3 = 0 END AS flag,
  CASE WHEN i % 6 = 0 THEN NULL ELSE ['Zürich', '東京', '', 'a,b', 'naïve café'][i % 5 + 1] END AS city,
  CASE WHEN i % 9 = 0 THEN NULL ELSE 'note ' || i || ' 🙂' END AS note,
  CASE WHEN i % 8 = 0 THEN NULL ELSE DATE '1970-01-01' + (i * 17 % 40000 - 10000)::INTEGER END AS day,
  TIMESTAMP '2024-01-01' + to_microseconds(i * 1000003) AS ts_us,
  (TIMESTAMP '2024-01-01' + to_milliseconds(i * 1003))::TIMESTAMP_MS AS ts_ms,
  (TIMESTAMP '2024-01-01' + to_microseconds(i * 1000003))::TIMESTAMP_NS + to_microseconds(0) AS ts_ns
FROM range(6000) r(i)`;

const AS_BASIN =
  "id, i32::BIGINT, i64, u8::BIGINT, u32::BIGINT, f32::DOUBLE, f64, flag, city, note, day, ts_us, ts_ms::TIMESTAMP, ts_ns::TIMESTAMP";

beforeAll(async () => {
  duck = await Duck.open();
  await duck.run(TABLE);
});
afterAll(() => duck.close());

describe.each(["snappy", "zstd", "uncompressed", "gzip"])("%s", (codec) => {
  it.each(["V1", "V2"])("data pages %s read as DuckDB reads them, over several row groups", async (version) => {
    const path = join(out, `${codec}-${version}.parquet`);
    await duck.run(
      `COPY t TO '${path}' (FORMAT parquet, COMPRESSION ${codec}, PARQUET_VERSION ${version}, ROW_GROUP_SIZE 2048)`,
    );
    const frame = readParquet(path, { blocksize: 1 });
    expect(frame.schema.map((f) => f.type)).toEqual([
      "int64",
      "int64",
      "int64",
      "int64",
      "int64",
      "float64",
      "float64",
      "bool",
      "string",
      "string",
      "date",
      "timestamp",
      "timestamp",
      "timestamp",
    ]);
    await expectOnBoth(clusters, frame, await duck.rows(`SELECT ${AS_BASIN} FROM t ORDER BY id`), path, {
      ordered: true,
    });
  });
});
