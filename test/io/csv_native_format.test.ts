// The native CSV formatter (native/src/io/csv_write.cc) writes byte for byte what the
// TypeScript formatter (engine/io/write.ts csvLines) writes: JS number text, ISO dates
// and timestamps, RFC 4180 quoting, nulls as empty fields, the empty string as "".
import { describe, expect, it } from "vitest";
import { csvLines } from "../../engine/io/write.js";
import { native, type JsTable } from "../../engine/native/addon.js";

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const EDGE_DOUBLES = [
  0,
  -0,
  1,
  -1,
  0.1,
  0.2 + 0.1,
  1 / 3,
  -2 / 3,
  1e21,
  1e20,
  123456789012345680000,
  1.5e21,
  1e-6,
  1e-7,
  1.5e-7,
  0.000001234,
  5e-324,
  -5e-324,
  1.7976931348623157e308,
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 63),
  4.35,
  100,
  1e100,
  Number.NaN,
  Infinity,
  -Infinity,
  12345.678,
  0.5,
  999999999999999900000,
  1e-5,
  123e-20,
];

function table(rows: number, seed: number): JsTable {
  const rnd = seeded(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
  const doubles = Float64Array.from({ length: rows }, (_, i) => {
    if (i < EDGE_DOUBLES.length) return EDGE_DOUBLES[i];
    const r = rnd();
    if (r < 0.3) return pick(EDGE_DOUBLES);
    if (r < 0.6) return (rnd() - 0.5) * 10 ** Math.floor(rnd() * 40 - 20);
    const b = new DataView(new ArrayBuffer(8));
    b.setUint32(0, Math.floor(rnd() * 2 ** 32));
    b.setUint32(4, Math.floor(rnd() * 2 ** 32));
    return b.getFloat64(0);
  });
  const strings = ["", "plain", 'say "hi"', "a,b", "line\nbreak", "cr\rhere", "ünïcødé ☃", "tab\there", " spaced "];
  const validity = (p: number) => Uint8Array.from({ length: rows }, () => (rnd() < p ? 0 : 1));
  return {
    rows,
    names: ["i", "f", "b", "d", "ts", "s"],
    columns: [
      {
        type: "int64",
        values: BigInt64Array.from({ length: rows }, (_, i) =>
          i === 0 ? -(2n ** 63n) : i === 1 ? 2n ** 63n - 1n : BigInt(Math.floor((rnd() - 0.5) * 2 ** 52)),
        ),
        validity: validity(0.1),
      },
      { type: "float64", values: doubles, validity: validity(0.05) },
      { type: "bool", values: Uint8Array.from({ length: rows }, () => (rnd() < 0.5 ? 1 : 0)), validity: null },
      {
        type: "date",
        values: Int32Array.from({ length: rows }, (_, i) =>
          i === 0 ? -719528 : i === 1 ? 2932896 : i === 2 ? -1 : Math.floor((rnd() - 0.5) * 200_000),
        ),
        validity: validity(0.1),
      },
      {
        type: "timestamp",
        values: BigInt64Array.from({ length: rows }, (_, i) =>
          i === 0
            ? -1n
            : i === 1
              ? 0n
              : rnd() < 0.5
                ? BigInt(Math.floor(rnd() * 315_537_000_000 - 62_167_219_200)) * 1_000_000n
                : BigInt(Math.floor(rnd() * 2 ** 52)),
        ),
        validity: validity(0.1),
      },
      { type: "string", values: Array.from({ length: rows }, () => pick(strings)), validity: validity(0.1) },
    ],
  };
}

describe("native CSV formatting", () => {
  it("writes exactly the bytes the TypeScript formatter writes, over edge and random values", () => {
    const addon = native();
    for (const seed of [1, 2, 3]) {
      const h = addon.tableFromJs(table(5000, seed));
      try {
        const want = csvLines(addon.tableToJs(h));
        const got = new TextDecoder().decode(addon.csvFormat(h));
        const w = want.split("\n"),
          g = got.split("\n");
        for (let i = 0; i < Math.max(w.length, g.length); i++) expect(g[i], `line ${i}`).toBe(w[i]);
      } finally {
        addon.release(h);
      }
    }
  });
});
