// Sorting, sort boundaries and range partitioning against DuckDB's ORDER BY.
import { describe, expect, it } from "vitest";
import { native, type Handle } from "../../engine/native/addon.js";
import type { SortKey } from "../../engine/graph/kernel_args.js";
import { seededRandom } from "../../engine/common/random.js";
import {
  cellsOf,
  duckPerFile,
  loadRowsIntoDuck,
  rowsToJsTable,
  trackHandles,
  type NativeCol,
} from "../helpers/native_rows.js";

// ---------- data ----------

const STRINGS = [
  "α",
  "béta",
  "東京",
  "🙂 emoji",
  "",
  "a",
  "A",
  "ab",
  "aB",
  "zz",
  "Ωmega",
  "naïve",
  "straße",
  "x y",
  "key_1234",
  "key_12345",
  "key_123456789",
  "key_12345678",
  "a\u0000",
];
const FLOATS = [0.5, -0.0, 0.0, -3, 1e10, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 7, -1e-300];

interface Row {
  rid: number;
  k_int: bigint | null;
  k_f: number | null;
  k_s: string | null;
  k_b: boolean | null;
  k_d: number | null;
  k_ts: bigint | null;
  v: string | null;
}

type Col = keyof Row;

interface GenOpts {
  rows: number;
  distinct: number;
  seed: number;
  skew?: boolean;
}

function generate({ rows, distinct, seed, skew }: GenOpts): Row[] {
  const r = seededRandom(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)];
  const maybe = <T>(v: () => T): T | null => (r() < 0.1 ? null : v());
  const out: Row[] = [];
  for (let i = 0; i < rows; i++) {
    const hot = skew && r() < 0.5;
    out.push({
      rid: i,
      k_int: hot
        ? 7n
        : maybe(
            () =>
              BigInt(Math.floor(r() * distinct) - Math.floor(distinct / 2)) * (r() < 0.05 ? 1_000_000_000_000n : 1n),
          ),
      k_f: hot ? 1 : maybe(() => (r() < 0.6 ? pick(FLOATS) : Math.floor(r() * distinct) / 4 - distinct / 8)),
      k_s: hot ? "hot" : maybe(() => (r() < 0.5 ? pick(STRINGS) : `s${Math.floor(r() * distinct)}`)),
      k_b: hot ? true : maybe(() => r() < 0.5),
      k_d: hot ? 0 : maybe(() => Math.floor(r() * distinct) - 100),
      k_ts: hot ? 0n : maybe(() => BigInt(Math.floor(r() * distinct)) * 3_600_000_000n - 86_400_000_000n),
      v: maybe(() => pick(STRINGS) + i),
    });
  }
  return out;
}

const COLS: NativeCol<Row>[] = [
  { name: "rid", type: "int64", sql: "BIGINT" },
  { name: "k_int", type: "int64", sql: "BIGINT" },
  { name: "k_f", type: "float64", sql: "DOUBLE" },
  { name: "k_s", type: "string", sql: "VARCHAR" },
  { name: "k_b", type: "bool", sql: "BOOLEAN" },
  { name: "k_d", type: "date", sql: "INTEGER" },
  { name: "k_ts", type: "timestamp", sql: "BIGINT" },
  { name: "v", type: "string", sql: "VARCHAR" },
];
const colIndex = (name: string) => COLS.findIndex((c) => c.name === name);
const KEY_COLS: Col[] = ["k_int", "k_f", "k_s", "k_b", "k_d", "k_ts"];

// ---------- DuckDB oracle ----------

const duck = duckPerFile();

const orderSql = (keys: SortKey[]) =>
  keys
    .map((k) => `${COLS[k.column].name} ${k.descending ? "DESC" : "ASC"} NULLS ${k.nullsFirst ? "FIRST" : "LAST"}`)
    .join(", ");

/** Row ids in DuckDB's order (ties broken by rid: a stable sort). */
async function duckOrder(table: string, keys: SortKey[]): Promise<number[]> {
  const order = keys.length ? `${orderSql(keys)}, rid` : "rid";
  const reader = await duck.con.runAndReadAll(`SELECT rid FROM ${table} ORDER BY ${order}`);
  return (reader.getRowsJS() as unknown[][]).map((r) => Number(r[0]));
}

// ---------- native helpers ----------

const track = trackHandles();

const cells = (h: Handle) => cellsOf(native().tableToJs(h));

/** A cell as a comparable string (floats by bits, so NaN and -0.0 are exact). */
function cellKey(x: unknown): string {
  if (x === null) return "∅";
  if (typeof x === "number") return Object.is(x, -0) ? "-0" : String(x);
  return `${typeof x}:${String(x)}`;
}
const rowKey = (r: unknown[]) => r.map(cellKey).join("\u0001");

const utf8 = new TextEncoder();

/** JS reference comparison of two non-null values of one type, ascending. */
function compareValues(a: unknown, b: unknown): number {
  if (typeof a === "string") return Buffer.compare(utf8.encode(a), utf8.encode(b as string));
  if (typeof a === "number") {
    const an = Number.isNaN(a),
      bn = Number.isNaN(b as number);
    if (an || bn) return an && bn ? 0 : an ? 1 : -1;
    return a < (b as number) ? -1 : a > (b as number) ? 1 : 0;
  }
  if (typeof a === "bigint") return a < (b as bigint) ? -1 : a > (b as bigint) ? 1 : 0;
  return Number(a) - Number(b);
}

/** Compares key tuples (cells in key order) under `keys`' directions and null orders. */
function compareKeys(a: unknown[], b: unknown[], keys: SortKey[]): number {
  for (let i = 0; i < keys.length; i++) {
    const x = a[i],
      y = b[i];
    let c: number;
    if (x === null || y === null) c = x === y ? 0 : (x === null) === keys[i].nullsFirst ? -1 : 1;
    else c = keys[i].descending ? -compareValues(x, y) : compareValues(x, y);
    if (c !== 0) return c;
  }
  return 0;
}

const K = (col: Col, descending = false, nullsFirst = false): SortKey => ({
  column: colIndex(col),
  descending,
  nullsFirst,
});

const DATASETS: (GenOpts & { label: string })[] = [
  { label: "random", rows: 2000, distinct: 30, seed: 1 },
  { label: "many distinct", rows: 3000, distinct: 5000, seed: 2 },
  { label: "skewed", rows: 1500, distinct: 40, seed: 3, skew: true },
  { label: "one row", rows: 1, distinct: 5, seed: 4 },
  { label: "empty", rows: 0, distinct: 5, seed: 5 },
];

const KEY_SETS: SortKey[][] = [
  ...KEY_COLS.flatMap((c) => [K(c), K(c, true), K(c, false, true), K(c, true, true)].map((k) => [k])),
  [K("k_s"), K("k_f", true)],
  [K("k_b", true, true), K("k_int")],
  [K("k_d", false, true), K("k_s", true), K("k_ts", true, false)],
  [K("k_f", true, true), K("k_b"), K("k_s", false, true)],
  [K("k_ts"), K("k_d", true), K("k_int", true, true)],
  [],
];

const keyLabel = (keys: SortKey[]) =>
  keys
    .map((k) => `${COLS[k.column].name} ${k.descending ? "desc" : "asc"} nulls ${k.nullsFirst ? "first" : "last"}`)
    .join(", ") || "no keys";

// ---------- tests ----------

describe("sortTable vs DuckDB", () => {
  for (const ds of DATASETS) {
    it(`${ds.label}: every key set`, async () => {
      const rows = generate(ds);
      const table = await loadRowsIntoDuck(duck.con, rows, COLS);
      const h = track(native().tableFromJs(rowsToJsTable(rows, COLS)));
      const input = cells(h);
      for (const keys of KEY_SETS) {
        const out = native().tableToJs(track(native().sortTable(h, keys)));
        expect(out.names).toEqual(COLS.map((c) => c.name));
        expect(out.columns.map((c) => c.type)).toEqual(COLS.map((c) => c.type));
        const want = (await duckOrder(table, keys)).map((rid) => rowKey(input[rid]));
        const got = cellsOf(out).map(rowKey);
        expect(got, `${ds.label} [${keyLabel(keys)}]`).toEqual(want);
      }
    });
  }

  it("floats: NaN after every number, -0.0 equals 0.0 (stable), infinities in place", () => {
    const f = [Number.NaN, 0.0, -0.0, Number.POSITIVE_INFINITY, -1, Number.NEGATIVE_INFINITY, -0.0, Number.NaN, 0.0, 2];
    const h = track(
      native().tableFromJs({
        rows: f.length,
        names: ["f", "i"],
        columns: [
          { type: "float64", values: Float64Array.from(f), validity: null },
          { type: "int64", values: BigInt64Array.from(f.map((_, i) => BigInt(i))), validity: null },
        ],
      }),
    );
    const asc = cells(track(native().sortTable(h, [{ column: 0, descending: false, nullsFirst: false }]))).map(
      (r) => r[1],
    );
    expect(asc).toEqual([5n, 4n, 1n, 2n, 6n, 8n, 9n, 3n, 0n, 7n]);
    const desc = cells(track(native().sortTable(h, [{ column: 0, descending: true, nullsFirst: false }]))).map(
      (r) => r[1],
    );
    expect(desc).toEqual([0n, 7n, 3n, 9n, 1n, 2n, 6n, 8n, 4n, 5n]);
  });

  it("long strings with shared prefixes and embedded NULs sort by bytes", async () => {
    const r = seededRandom(7);
    const base = [
      "prefix_common_",
      "prefix_common_x",
      "prefix_",
      "pre",
      "prefix_common_\u0000",
      "prefix_common_\u0000\u0000",
      "prefix_commoN",
      "ü",
    ];
    const rows = generate({ rows: 1500, distinct: 10, seed: 8 }).map((row) => ({
      ...row,
      k_s:
        r() < 0.05
          ? null
          : base[Math.floor(r() * base.length)] +
            (r() < 0.5 ? String(Math.floor(r() * 30)).repeat(Math.floor(r() * 4)) : ""),
    }));
    const table = await loadRowsIntoDuck(duck.con, rows, COLS);
    const h = track(native().tableFromJs(rowsToJsTable(rows, COLS)));
    const input = cells(h);
    for (const keys of [[K("k_s")], [K("k_s", true, true)], [K("k_s", true), K("k_int", false, true)]]) {
      const got = cells(track(native().sortTable(h, keys))).map(rowKey);
      expect(got, keyLabel(keys)).toEqual((await duckOrder(table, keys)).map((rid) => rowKey(input[rid])));
    }
  });

  it("string keys all of one length, or none past 8 bytes, tie to the next key as DuckDB", async () => {
    // "id001".."id040" (one length: ties need no length order) and "a".."abcdefgh" (all
    // within one 8-byte chunk, of different lengths), with nulls, before a second key.
    const r = seededRandom(11);
    const short = ["a", "ab", "abc", "abcd", "abcdefgh", "b", "", "abcdefg"];
    for (const pick of [(i: number) => `id${String(1 + (i % 40)).padStart(3, "0")}`, (i: number) => short[i % 8]!]) {
      const rows = generate({ rows: 1200, distinct: 25, seed: 12 }).map((row) => ({
        ...row,
        k_s: r() < 0.05 ? null : pick(Math.floor(r() * 1000)),
      }));
      const table = await loadRowsIntoDuck(duck.con, rows, COLS);
      const h = track(native().tableFromJs(rowsToJsTable(rows, COLS)));
      const input = cells(h);
      for (const keys of [[K("k_s"), K("k_int")], [K("k_s", true, true), K("k_f", true)], [K("k_s")]]) {
        const got = cells(track(native().sortTable(h, keys))).map(rowKey);
        expect(got, keyLabel(keys)).toEqual((await duckOrder(table, keys)).map((rid) => rowKey(input[rid])));
      }
    }
  });

  it("large int and float keys (radix paths) match DuckDB", async () => {
    const rows = generate({ rows: 20000, distinct: 1_000_000, seed: 9 });
    const table = await loadRowsIntoDuck(duck.con, rows, COLS);
    const h = track(native().tableFromJs(rowsToJsTable(rows, COLS)));
    const input = cells(h);
    for (const keys of [[K("k_int")], [K("k_f", true, true)], [K("k_s"), K("k_f", true)], [K("k_ts", true)]]) {
      const got = cells(track(native().sortTable(h, keys))).map(rowKey);
      expect(got, keyLabel(keys)).toEqual((await duckOrder(table, keys)).map((rid) => rowKey(input[rid])));
    }
  });

  it("bad key columns throw with a code", () => {
    const h = track(native().tableFromJs(rowsToJsTable(generate({ rows: 5, distinct: 3, seed: 1 }), COLS)));
    expect(() => native().sortTable(h, [{ column: 99, descending: false, nullsFirst: false }])).toThrow(
      expect.objectContaining({ code: "BASIN_INTERNAL" }),
    );
  });
});

describe("sortBoundaries + rangePartition", () => {
  const PART_KEYS: SortKey[][] = [
    [K("k_int")],
    [K("k_s", true, true)],
    [K("k_f", false, true)],
    [K("k_s"), K("k_f", true)],
    [K("k_b", false, true), K("k_d", true), K("k_int")],
  ];
  const cases: { label: string; ds: GenOpts; parts: number[] }[] = [
    { label: "random", ds: { rows: 3000, distinct: 200, seed: 11 }, parts: [1, 2, 5, 8] },
    { label: "skewed", ds: { rows: 3000, distinct: 100, seed: 12, skew: true }, parts: [4, 8] },
    { label: "few distinct", ds: { rows: 500, distinct: 2, seed: 13 }, parts: [6] },
    { label: "parts > rows", ds: { rows: 5, distinct: 100, seed: 14 }, parts: [20] },
    { label: "one row", ds: { rows: 1, distinct: 5, seed: 15 }, parts: [3] },
    { label: "empty", ds: { rows: 0, distinct: 5, seed: 16 }, parts: [3] },
  ];

  for (const c of cases) {
    for (const keys of PART_KEYS) {
      it(`${c.label}: ${keyLabel(keys)}`, () => {
        const h = track(native().tableFromJs(rowsToJsTable(generate(c.ds), COLS)));
        const input = cells(h);
        const keyOf = (r: unknown[]) => keys.map((k) => r[k.column]);
        const full = cells(track(native().sortTable(h, keys))).map(rowKey);
        const distinct = new Set(input.map((r) => rowKey(keyOf(r)))).size;
        for (const parts of c.parts) {
          const bh = track(native().sortBoundaries(h, keys, parts));
          const bt = native().tableToJs(bh);
          expect(bt.names).toEqual(keys.map((k) => COLS[k.column].name));
          expect(bt.columns.map((x) => x.type)).toEqual(keys.map((k) => COLS[k.column].type));
          const bounds = cellsOf(bt);
          expect(bounds.length).toBeLessThanOrEqual(Math.min(parts - 1, Math.max(0, distinct - 1)));
          if (distinct >= parts && parts > 1) expect(bounds.length).toBeGreaterThan(0);
          for (let i = 1; i < bounds.length; i++) expect(compareKeys(bounds[i - 1], bounds[i], keys)).toBeLessThan(0);

          const ps = native().rangePartition(h, keys, bh).map(track);
          expect(ps.length).toBe(bounds.length + 1);
          const partOfKey = new Map<string, number>();
          const union: string[] = [];
          const sortedParts: string[] = [];
          let prevMax: unknown[] | null = null;
          ps.forEach((p, pi) => {
            const t = native().tableToJs(p);
            expect(t.names).toEqual(COLS.map((x) => x.name));
            const rs = cellsOf(t);
            let lastRid = -1n;
            let max: unknown[] | null = null;
            for (const r of rs) {
              expect(r[0] as bigint).toBeGreaterThan(lastRid); // input order kept
              lastRid = r[0] as bigint;
              const k = keyOf(r);
              if (pi > 0) expect(compareKeys(k, bounds[pi - 1], keys)).toBeGreaterThan(0);
              if (pi < bounds.length) expect(compareKeys(k, bounds[pi], keys)).toBeLessThanOrEqual(0);
              if (prevMax) expect(compareKeys(prevMax, k, keys)).toBeLessThan(0); // parts ordered
              const ks = rowKey(k);
              expect(partOfKey.get(ks) ?? pi).toBe(pi); // equal keys land together
              partOfKey.set(ks, pi);
              if (!max || compareKeys(max, k, keys) < 0) max = k;
              union.push(rowKey(r));
            }
            if (max) prevMax = max;
            sortedParts.push(...cells(track(native().sortTable(p, keys))).map(rowKey));
          });
          expect(union.sort()).toEqual(input.map(rowKey).sort());
          expect(sortedParts).toEqual(full);
        }
      });
    }
  }

  it("distinct keys split evenly", () => {
    const n = 1000;
    const h = track(
      native().tableFromJs({
        rows: n,
        names: ["k"],
        columns: [
          {
            type: "int64",
            values: BigInt64Array.from({ length: n }, (_, i) => BigInt((i * 7919) % n)),
            validity: null,
          },
        ],
      }),
    );
    const keys = [{ column: 0, descending: true, nullsFirst: false }];
    const bh = track(native().sortBoundaries(h, keys, 4));
    expect(cells(bh)).toEqual([[750n], [500n], [250n]]);
    const sizes = native()
      .rangePartition(h, keys, bh)
      .map(track)
      .map((p) => native().tableInfo(p).rows);
    expect(sizes).toEqual([250, 250, 250, 250]);
  });

  it("skewed data: the hot key lands in one part and the others still split", () => {
    const rows = generate({ rows: 4000, distinct: 1000, seed: 17, skew: true });
    const h = track(native().tableFromJs(rowsToJsTable(rows, COLS)));
    const keys = [K("k_int")];
    const bh = track(native().sortBoundaries(h, keys, 8));
    const ps = native().rangePartition(h, keys, bh).map(track);
    const hot = ps.map((p) => cells(p).filter((r) => r[colIndex("k_int")] === 7n).length);
    expect(hot.filter((x) => x > 0).length).toBe(1);
    expect(hot.reduce((a, b) => a + b, 0)).toBe(rows.filter((r) => r.k_int === 7n).length);
    expect(ps.filter((p) => native().tableInfo(p).rows > 0).length).toBeGreaterThan(3);
  });

  it("no bounds gives one part with every row; mismatched bounds throw", () => {
    const h = track(native().tableFromJs(rowsToJsTable(generate({ rows: 50, distinct: 10, seed: 18 }), COLS)));
    const bh = track(native().sortBoundaries(h, [K("k_int")], 1));
    expect(native().tableInfo(bh).rows).toBe(0);
    const ps = native()
      .rangePartition(h, [K("k_int")], bh)
      .map(track);
    expect(ps.length).toBe(1);
    expect(cells(ps[0])).toEqual(cells(h));
    const sb = track(native().sortBoundaries(h, [K("k_s")], 3));
    expect(() => native().rangePartition(h, [K("k_int")], sb)).toThrow(
      expect.objectContaining({ code: "BASIN_INTERNAL" }),
    );
    expect(() => native().rangePartition(h, [K("k_int"), K("k_s")], sb)).toThrow(
      expect.objectContaining({ code: "BASIN_INTERNAL" }),
    );
  });
});
