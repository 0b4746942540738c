// Required (non-nullable) Parquet columns, as Arrow and parquet-wasm write them (DuckDB
// and Basin write every column optional): PLAIN pages of doubles, int64 and dates are
// decompressed straight into the column, dictionary pages gathered by width. Values
// that make Snappy use every kind of tag — long runs (copies overlapping their source),
// short periods (offsets under 8 and under 16), random bytes (long literals) — read
// back exactly as written, -0 and NaN included.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { chunkParquet } from "../../bench/tpch/gen/encode.js";
import type { Chunk } from "../../bench/tpch/gen/columns.js";
import { readParquet } from "../../engine/api/index.js";
import { seededRandom } from "../../engine/common/random.js";

const dir = mkdtempSync(join(tmpdir(), "basin-parquet-required-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function strings(values: string[]): { chars: Uint8Array; offsets: Int32Array } {
  const enc = new TextEncoder();
  const parts = values.map((v) => enc.encode(v));
  const offsets = new Int32Array(values.length + 1);
  parts.forEach((p, i) => (offsets[i + 1] = offsets[i] + p.length));
  const chars = new Uint8Array(offsets[values.length]);
  parts.forEach((p, i) => chars.set(p, offsets[i]));
  return { chars, offsets };
}

it("required PLAIN and dictionary columns read back exactly, whatever Snappy tags encode them", async () => {
  const rows = 120_000;
  const r = seededRandom(17);
  // Names the encoder writes PLAIN (see NO_DICTIONARY in encode.ts) and dictionary-encoded.
  const o_orderkey = new BigInt64Array(rows).map((_, i) => BigInt(i < 40_000 ? 7 : i % 3 === 0 ? -i : i * 1_000_003));
  const l_extendedprice = new Float64Array(rows).map((_, i) =>
    i % 1000 === 0 ? -0 : i % 1777 === 0 ? NaN : i < 30_000 ? 1.5 : i % 5 === 0 ? r() * 1e9 : (i % 9) * 0.25,
  );
  const day = new Int32Array(rows).map((_, i) => (i < 50_000 ? 9000 : 8000 + (i % 13)));
  const qty = new Float64Array(rows).map((_, i) => (i % 50) + 1);
  const text = Array.from({ length: rows }, (_, i) =>
    i % 7 === 0 ? "Zürich 東京" : `row ${i % 11} ${"x".repeat(i % 70)}`,
  );
  const x_comment = Array.from({ length: rows }, (_, i) => `c${Math.floor(r() * 1e12)}${i % 3 ? "ü" : ""}`);
  const chunk = {
    rows,
    columns: [
      { name: "o_orderkey", type: "int64", values: o_orderkey },
      { name: "l_extendedprice", type: "float64", values: l_extendedprice },
      { name: "day", type: "date", values: day },
      { name: "qty", type: "float64", values: qty },
      { name: "text", type: "string", values: strings(text) },
      { name: "x_comment", type: "string", values: strings(x_comment) },
    ],
  } as unknown as Chunk;
  const path = join(dir, "required.parquet");
  writeFileSync(path, chunkParquet(chunk));

  const t = await readParquet(path).compute();
  expect(t.schema.map((f) => f.type)).toEqual(["int64", "float64", "date", "float64", "string", "string"]);
  const got = t.toColumns();
  expect(got.o_orderkey).toEqual(Array.from(o_orderkey, Number));
  const prices = got.l_extendedprice as number[];
  l_extendedprice.forEach((v, i) => {
    if (!Object.is(prices[i], v)) expect.fail(`l_extendedprice row ${i}: ${prices[i]} is not ${v}`);
  });
  expect((got.day as Date[]).map((d) => d.getTime() / 86_400_000)).toEqual(Array.from(day));
  expect(got.qty).toEqual(Array.from(qty));
  expect(got.text).toEqual(text);
  expect(got.x_comment).toEqual(x_comment);
});

it("long Snappy copies of every short period read back exactly", async () => {
  // A run of one PLAIN string of length L repeats a (4 + L)-byte period: periods 4 to
  // 28 bytes, each copied far past its own length; an empty string's run is zero bytes
  // (period 1), and "aa…" inside a value period 1 again. Runs of an int64 pair repeat 16 bytes.
  const values: string[] = [];
  const keys: bigint[] = [];
  for (let len = 0; len <= 24; len++) {
    const s = len % 5 === 4 ? "a".repeat(len) : "xyzüvw東0123456789abcdefghij".slice(0, len);
    for (let i = 0; i < 1500; i++) values.push(s);
    for (let i = 0; i < 1500; i++) keys.push(BigInt(i % 2 === 0 ? len : -len - 1_000_000));
  }
  const rows = values.length;
  const chunk = {
    rows,
    columns: [
      { name: "x_comment", type: "string", values: strings(values) },
      { name: "o_orderkey", type: "int64", values: BigInt64Array.from(keys) },
    ],
  } as unknown as Chunk;
  const path = join(dir, "periods.parquet");
  writeFileSync(path, chunkParquet(chunk));
  const got = (await readParquet(path).compute()).toColumns();
  expect(got.x_comment).toEqual(values);
  expect(got.o_orderkey).toEqual(keys.map(Number));
});
