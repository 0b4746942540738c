// Hash group-by and hash partitioning against DuckDB as the oracle.
import { describe, expect, it } from "vitest";
import { native, type Handle, type JsTable } from "../../engine/native/addon.js";
import type { AggMode, AggOp, NativeAgg } from "../../engine/graph/kernel_args.js";
import { seededRandom } from "../../engine/common/random.js";
import {
  cellsOf,
  daysToDate,
  duckPerFile,
  expectSameCells,
  loadRowsIntoDuck,
  rowsToJsTable,
  trackHandles,
  type NativeCol,
} from "../helpers/native_rows.js";

// ---------- data ----------

const STRINGS = ["α", "béta", "東京", "🙂 emoji", "", "a", "A", "ab", "aB", "zz", "Ωmega", "naïve", "straße", "x y"];

interface Row {
  rid: number;
  k_int: bigint | null;
  k_str: string | null;
  k_b: boolean | null;
  k_d: number | null;
  k_f: number | null;
  v_int: bigint | null;
  v_f: number | null;
  v_s: string | null;
  v_b: boolean | null;
  v_d: number | null;
}

interface GenOpts {
  rows: number;
  groups: number;
  seed: number;
  skew?: boolean;
}

function generate({ rows, groups, seed, skew }: GenOpts): Row[] {
  const r = seededRandom(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)];
  const maybe = <T>(p: number, v: () => T): T | null => (r() < p ? null : v());
  const out: Row[] = [];
  for (let i = 0; i < rows; i++) {
    const hot = skew && r() < 0.5;
    const row: Row = {
      rid: i,
      k_int: hot ? 1n : maybe(0.08, () => BigInt(Math.floor(r() * groups) - 3)),
      k_str: hot ? "hot" : maybe(0.08, () => (r() < 0.5 ? pick(STRINGS) : `s${Math.floor(r() * groups)}`)),
      k_b: maybe(0.1, () => r() < 0.5),
      k_d: maybe(0.1, () => 18000 + Math.floor(r() * 7)),
      k_f: maybe(0.1, () => pick([0.5, 1.25, -3, 1e10, 7])),
      v_int: maybe(0.15, () => BigInt(Math.floor(r() * 2_000_000) - 1_000_000)),
      v_f: maybe(0.15, () => (r() - 0.3) * 1000),
      v_s: maybe(0.15, () => pick(STRINGS) + (r() < 0.3 ? String(Math.floor(r() * 5)) : "")),
      v_b: maybe(0.15, () => r() < 0.5),
      v_d: maybe(0.15, () => Math.floor(r() * 40000) - 5000),
    };
    // One group whose values are all null.
    if (row.k_int === 999n || (!hot && r() < 0.02)) {
      row.k_int = 999n;
      row.v_int = row.v_f = row.v_s = row.v_b = row.v_d = null;
    }
    out.push(row);
  }
  return out;
}

const COLS: NativeCol<Row>[] = [
  { name: "rid", type: "int64", sql: "BIGINT" },
  { name: "k_int", type: "int64", sql: "BIGINT" },
  { name: "k_str", type: "string", sql: "VARCHAR" },
  { name: "k_b", type: "bool", sql: "INTEGER", view: "k_b::BOOLEAN" },
  { name: "k_d", type: "date", sql: "INTEGER", view: daysToDate("k_d") },
  { name: "k_f", type: "float64", sql: "DOUBLE" },
  { name: "v_int", type: "int64", sql: "BIGINT" },
  { name: "v_f", type: "float64", sql: "DOUBLE" },
  { name: "v_s", type: "string", sql: "VARCHAR" },
  { name: "v_b", type: "bool", sql: "INTEGER", view: "v_b::BOOLEAN" },
  { name: "v_d", type: "date", sql: "INTEGER", view: daysToDate("v_d") },
];
const colIndex = (name: string) => COLS.findIndex((c) => c.name === name);

// ---------- DuckDB oracle ----------

const duck = duckPerFile();

/** SQL for one aggregate, cast so that JS sees numbers/bigints/strings. */
function aggSql(op: AggOp, col: string | null): string {
  const c = col ?? "*";
  const type = col ? COLS[colIndex(col)].type : "int64";
  const back = (e: string) =>
    type === "bool" ? `(${e})::INTEGER` : type === "date" ? `((${e}) - DATE '1970-01-01')::BIGINT` : e;
  switch (op) {
    case "sum":
      return `sum(${c})`;
    case "mean":
      return `avg(${c})`;
    case "min":
      return back(`min(${c})`);
    case "max":
      return back(`max(${c})`);
    case "count":
      return `count(${c})`;
    case "std":
      return `stddev_samp(${c})`;
    case "var":
      return `var_samp(${c})`;
    case "median":
      return `median(${c}::DOUBLE)`;
    case "nunique":
      return `count(DISTINCT ${c})`;
    case "first":
      return back(`first(${c} ORDER BY rid) FILTER (WHERE ${c} IS NOT NULL)`);
    case "last":
      return back(`last(${c} ORDER BY rid) FILTER (WHERE ${c} IS NOT NULL)`);
    case "quantile":
    case "corr":
      throw new Error(`${op} takes parameters: test/engine/stats_aggs.test.ts covers it`);
  }
}

function keySql(k: string): string {
  const t = COLS[colIndex(k)].type;
  return t === "bool" ? `${k}::INTEGER` : t === "date" ? `(${k} - DATE '1970-01-01')::BIGINT` : k;
}

async function duckGroupBy(
  view: string,
  keys: string[],
  aggs: { op: AggOp; col: string | null }[],
): Promise<unknown[][]> {
  const sel = [...keys.map(keySql), ...aggs.map((a) => aggSql(a.op, a.col))].join(", ");
  const group = keys.length ? `GROUP BY ${keys.join(", ")} ORDER BY min(rid)` : "";
  const reader = await duck.con.runAndReadAll(`SELECT ${sel} FROM ${view} ${group}`);
  return reader.getRowsJS() as unknown[][];
}

// ---------- native helpers ----------

const track = trackHandles();

function close(a: number, b: number): boolean {
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b);
  return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
}

const expectSameRows = (got: JsTable, want: unknown[][], label: string) => expectSameCells(got, want, label, close);

const NUMERIC_OPS: AggOp[] = ["sum", "mean", "min", "max", "count", "std", "var", "median", "nunique", "first", "last"];
const ALL_AGGS: { op: AggOp; col: string | null }[] = [
  { op: "count", col: null },
  ...NUMERIC_OPS.map((op) => ({ op, col: "v_int" })),
  ...NUMERIC_OPS.map((op) => ({ op, col: "v_f" })),
  ...(["min", "max", "count", "nunique", "first", "last"] as AggOp[]).map((op) => ({ op, col: "v_s" })),
  ...(["min", "max", "count", "first", "last", "nunique"] as AggOp[]).map((op) => ({ op, col: "v_b" })),
  ...(["min", "max", "count", "first", "last", "nunique"] as AggOp[]).map((op) => ({ op, col: "v_d" })),
];
const DECOMPOSABLE = ALL_AGGS.filter((a) => a.op !== "median" && a.op !== "nunique");

const nativeAggs = (aggs: { op: AggOp; col: string | null }[]): NativeAgg[] =>
  aggs.map((a, i) => ({ op: a.op, column: a.col ? colIndex(a.col) : -1, name: `${a.op}_${a.col ?? "star"}_${i}` }));

function groupBy(h: Handle, keys: number[], aggs: NativeAgg[], mode: AggMode): Handle {
  return track(native().groupByAgg(h, keys, aggs, mode));
}

const KEY_SETS: string[][] = [
  ["k_int"],
  ["k_str"],
  ["k_int", "k_str"],
  [],
  ["k_b"],
  ["k_d"],
  ["k_f"],
  ["k_str", "k_b", "k_d"],
];

const DATASETS: (GenOpts & { label: string })[] = [
  { label: "random", rows: 3000, groups: 40, seed: 1 },
  { label: "many groups", rows: 4000, groups: 2000, seed: 2 },
  { label: "skewed", rows: 3000, groups: 50, seed: 3, skew: true },
  { label: "one row", rows: 1, groups: 5, seed: 4 },
  { label: "empty", rows: 0, groups: 5, seed: 5 },
];

// ---------- tests ----------

describe("groupByAgg full vs DuckDB", () => {
  for (const ds of DATASETS) {
    for (const keys of KEY_SETS) {
      it(`${ds.label}, keys [${keys.join(", ")}]`, async () => {
        const rows = generate(ds);
        const view = await loadRowsIntoDuck(duck.con, rows, COLS);
        const h = track(native().tableFromJs(rowsToJsTable(rows, COLS)));
        const out = native().tableToJs(groupBy(h, keys.map(colIndex), nativeAggs(ALL_AGGS), "full"));
        expect(out.names).toEqual([...keys, ...nativeAggs(ALL_AGGS).map((a) => a.name)]);
        const types = out.columns.map((c) => c.type);
        expect(types.slice(keys.length)).toEqual(
          ALL_AGGS.map((a) => {
            if (["mean", "std", "var", "median"].includes(a.op)) return "float64";
            if (a.op === "count" || a.op === "nunique") return "int64";
            if (a.op === "sum") return a.col === "v_f" ? "float64" : "int64";
            return COLS[colIndex(a.col!)].type;
          }),
        );
        if (keys.length === 0) expect(out.rows).toBe(1);
        expectSameRows(out, await duckGroupBy(view, keys, ALL_AGGS), `${ds.label} [${keys}]`);
      });
    }
  }

  it("null keys form one group per key column and all-null groups give null aggregates", async () => {
    const rows = generate({ rows: 500, groups: 10, seed: 9 });
    const h = track(native().tableFromJs(rowsToJsTable(rows, COLS)));
    const aggs: NativeAgg[] = [
      { op: "sum", column: colIndex("v_int"), name: "s" },
      { op: "count", column: colIndex("v_int"), name: "c" },
      { op: "nunique", column: colIndex("v_s"), name: "u" },
      { op: "std", column: colIndex("v_f"), name: "sd" },
      { op: "count", column: -1, name: "n" },
    ];
    const out = native().tableToJs(groupBy(h, [colIndex("k_int")], aggs, "full"));
    const cells = cellsOf(out);
    expect(cells.filter((r) => r[0] === null).length).toBe(1);
    const dead = cells.find((r) => r[0] === 999n)!;
    expect(dead[1]).toBe(null);
    expect(dead[2]).toBe(0n);
    expect(dead[3]).toBe(0n);
    expect(dead[4]).toBe(null);
    expect(Number(dead[5])).toBe(rows.filter((r) => r.k_int === 999n).length);
  });

  it("std/var with fewer than two values are null; median of an even count averages", () => {
    const h = track(
      native().tableFromJs({
        rows: 5,
        names: ["k", "v"],
        columns: [
          { type: "int64", values: BigInt64Array.from([1n, 2n, 2n, 3n, 3n]), validity: null },
          { type: "float64", values: Float64Array.from([5, 1, 4, 2, 0]), validity: Uint8Array.from([1, 1, 1, 1, 0]) },
        ],
      }),
    );
    const out = native().tableToJs(
      groupBy(
        h,
        [0],
        [
          { op: "std", column: 1, name: "sd" },
          { op: "var", column: 1, name: "v" },
          { op: "median", column: 1, name: "m" },
        ],
        "full",
      ),
    );
    const cells = cellsOf(out);
    expect(cells[1][1]).toBeCloseTo(Math.SQRT2 * 1.5, 12);
    cells[1][1] = 0;
    expect(cells).toEqual([
      [1n, null, null, 5],
      [2n, 0, 4.5, 2.5],
      [3n, null, null, 2],
    ]);
  });

  it("timestamp keys and min/max", () => {
    const h = track(
      native().tableFromJs({
        rows: 4,
        names: ["ts", "v"],
        columns: [
          {
            type: "timestamp",
            values: BigInt64Array.from([10n, 20n, 10n, 0n]),
            validity: Uint8Array.from([1, 1, 1, 0]),
          },
          { type: "timestamp", values: BigInt64Array.from([5n, -7n, 3n, 9n]), validity: null },
        ],
      }),
    );
    const out = native().tableToJs(
      groupBy(
        h,
        [0],
        [
          { op: "min", column: 1, name: "lo" },
          { op: "max", column: 1, name: "hi" },
        ],
        "full",
      ),
    );
    expect(out.columns.map((c) => c.type)).toEqual(["timestamp", "timestamp", "timestamp"]);
    expect(cellsOf(out)).toEqual([
      [10n, 3n, 5n],
      [20n, -7n, -7n],
      [null, 9n, 9n],
    ]);
  });

  it("errors carry codes", () => {
    const h = track(native().tableFromJs(rowsToJsTable(generate({ rows: 10, groups: 3, seed: 1 }), COLS)));
    for (const op of ["median", "nunique"] as AggOp[])
      for (const mode of ["partial", "merge", "final"] as AggMode[])
        expect(() => native().groupByAgg(h, [1], [{ op, column: colIndex("v_f"), name: "x" }], mode)).toThrow(
          expect.objectContaining({ code: "BASIN_INTERNAL" }),
        );
    expect(() => native().groupByAgg(h, [1], [{ op: "sum", column: colIndex("v_s"), name: "x" }], "full")).toThrow(
      expect.objectContaining({ code: "BASIN_TYPE" }),
    );
    expect(() => native().groupByAgg(h, [1], [{ op: "sum", column: 0, name: "x" }], "merge")).toThrow(
      expect.objectContaining({ code: "BASIN_INTERNAL" }),
    );
  });
});

describe("partial → merge → final", () => {
  const cases: { label: string; ds: GenOpts; keys: string[]; chunks: number[] }[] = [
    {
      label: "int key, 4 chunks",
      ds: { rows: 3000, groups: 40, seed: 11 },
      keys: ["k_int"],
      chunks: [700, 800, 0, 1500],
    },
    {
      label: "string key, many groups",
      ds: { rows: 3000, groups: 1500, seed: 12 },
      keys: ["k_str"],
      chunks: [1, 999, 1000, 1000],
    },
    {
      label: "int+string key, skewed",
      ds: { rows: 3000, groups: 30, seed: 13, skew: true },
      keys: ["k_int", "k_str"],
      chunks: [1000, 1000, 1000],
    },
    { label: "global reduction", ds: { rows: 2000, groups: 10, seed: 14 }, keys: [], chunks: [0, 500, 1500, 0] },
    { label: "empty", ds: { rows: 0, groups: 10, seed: 15 }, keys: ["k_int"], chunks: [0, 0] },
    { label: "empty global", ds: { rows: 0, groups: 10, seed: 16 }, keys: [], chunks: [0, 0, 0] },
  ];
  for (const c of cases) {
    it(c.label, () => {
      const rows = generate(c.ds);
      const h = track(native().tableFromJs(rowsToJsTable(rows, COLS)));
      const keys = c.keys.map(colIndex);
      const aggs = nativeAggs(DECOMPOSABLE);
      const stateKeys = keys.map((_, i) => i);
      const full = native().tableToJs(groupBy(h, keys, aggs, "full"));

      let at = 0;
      const partials = c.chunks.map((len) => {
        const part = track(native().slice(h, at, len));
        at += len;
        return groupBy(part, keys, aggs, "partial");
      });
      // Tree: merge pairs, then merge the merges, then final.
      const merged: Handle[] = [];
      for (let i = 0; i < partials.length; i += 2) {
        const cat = track(native().concat(partials.slice(i, i + 2)));
        merged.push(groupBy(cat, stateKeys, aggs, "merge"));
      }
      const top = groupBy(track(native().concat(merged)), stateKeys, aggs, "merge");
      const fin = native().tableToJs(groupBy(top, stateKeys, aggs, "final"));
      // Partials straight to final as well.
      const fin2 = native().tableToJs(groupBy(track(native().concat(partials)), stateKeys, aggs, "final"));

      expect(fin.names).toEqual(full.names);
      expect(fin.columns.map((x) => x.type)).toEqual(full.columns.map((x) => x.type));
      expectSameRows(fin, cellsOf(full), `${c.label} tree`);
      expectSameRows(fin2, cellsOf(full), `${c.label} flat`);
    });
  }

  it("a partial aggregation over nearly unique keys passes its rows on as states, and the final still matches full", () => {
    // 2 × 150k rows: above the 131072-row floor of the cardinality check.
    const rows = generate({ rows: 300_000, groups: 1e12, seed: 17 });
    const h = track(native().tableFromJs(rowsToJsTable(rows, COLS)));
    const keys = ["k_int", "k_str"].map(colIndex);
    const aggs = nativeAggs(DECOMPOSABLE);
    const partials = [0, 150_000].map((at) => groupBy(track(native().slice(h, at, 150_000)), keys, aggs, "partial"));
    expect(partials.map((p) => native().tableInfo(p).rows)).toEqual([150_000, 150_000]);
    const full = native().tableToJs(groupBy(h, keys, aggs, "full"));
    const fin = native().tableToJs(
      groupBy(
        track(native().concat(partials)),
        keys.map((_, i) => i),
        aggs,
        "final",
      ),
    );
    expectSameRows(fin, cellsOf(full), "nearly unique keys");
    // Few groups over as many rows: the partial aggregation shrinks them.
    const few = track(native().tableFromJs(rowsToJsTable(generate({ rows: 150_000, groups: 50, seed: 18 }), COLS)));
    expect(native().tableInfo(groupBy(few, keys, aggs, "partial")).rows).toBeLessThan(15_000);
  });

  it("var/std merge is numerically stable", () => {
    // Large offset, small spread: naive sum-of-squares would lose every digit.
    const n = 4000;
    const v = Float64Array.from({ length: n }, (_, i) => 1e9 + (i % 7) * 0.001);
    const h = track(
      native().tableFromJs({
        rows: n,
        names: ["k", "v"],
        columns: [
          { type: "int64", values: BigInt64Array.from({ length: n }, (_, i) => BigInt(i % 3)), validity: null },
          { type: "float64", values: v, validity: null },
        ],
      }),
    );
    const aggs: NativeAgg[] = [
      { op: "var", column: 1, name: "v" },
      { op: "std", column: 1, name: "s" },
    ];
    const full = cellsOf(native().tableToJs(groupBy(h, [0], aggs, "full")));
    const parts = [0, 1, 2, 3].map((i) => groupBy(track(native().slice(h, i * 1000, 1000)), [0], aggs, "partial"));
    const fin = cellsOf(native().tableToJs(groupBy(track(native().concat(parts)), [0], aggs, "final")));
    for (let g = 0; g < 3; g++) {
      const xs = Array.from(v).filter((_, i) => i % 3 === g);
      const mean = xs.reduce((a, b) => a + (b - 1e9), 0) / xs.length;
      const want = xs.reduce((a, b) => a + (b - 1e9 - mean) ** 2, 0) / (xs.length - 1);
      expect(Math.abs((full[g][1] as number) - want) / want).toBeLessThan(1e-6);
      expect(Math.abs((fin[g][1] as number) - want) / want).toBeLessThan(1e-6);
    }
  });
});

describe("hashPartition", () => {
  const rowKey = (cells: unknown[]) => cells.map((x) => (x === null ? "∅" : String(x))).join("\u0001");

  for (const keys of [["k_int"], ["k_str"], ["k_int", "k_str"], ["k_f", "k_d", "k_b"]]) {
    it(`keys [${keys.join(", ")}]`, () => {
      const rows = generate({ rows: 3000, groups: 100, seed: 21, skew: true });
      const h = track(native().tableFromJs(rowsToJsTable(rows, COLS)));
      const kidx = keys.map(colIndex);
      const input = cellsOf(native().tableToJs(h));
      const parts = native().hashPartition(h, kidx, 5).map(track);
      expect(parts.length).toBe(5);
      const again = native().hashPartition(h, kidx, 5).map(track);
      const seenIn = new Map<string, number>();
      const all: string[] = [];
      parts.forEach((p, pi) => {
        const t = native().tableToJs(p);
        expect(t.names).toEqual(COLS.map((c) => c.name));
        expect(native().tableToJs(again[pi])).toEqual(t); // deterministic
        let lastRid = -1n;
        for (const r of cellsOf(t)) {
          all.push(rowKey(r));
          expect(r[0] as bigint).toBeGreaterThan(lastRid); // row order kept
          lastRid = r[0] as bigint;
          const k = rowKey(kidx.map((i) => r[i]));
          expect(seenIn.get(k) ?? pi).toBe(pi); // equal keys co-located
          seenIn.set(k, pi);
        }
      });
      expect(all.sort()).toEqual(input.map(rowKey).sort()); // same multiset
      expect(new Set(seenIn.values()).size).toBeGreaterThan(1);
    });
  }

  it("partition then full group-by equals the full group-by (median, nunique)", () => {
    const rows = generate({ rows: 3000, groups: 300, seed: 22 });
    const h = track(native().tableFromJs(rowsToJsTable(rows, COLS)));
    const keys = [colIndex("k_int"), colIndex("k_str")];
    const aggs = nativeAggs(ALL_AGGS);
    const want = cellsOf(native().tableToJs(groupBy(h, keys, aggs, "full"))).map((r) =>
      rowKey(r.map((x) => (typeof x === "number" ? x.toPrecision(8) : x))),
    );
    const got = native()
      .hashPartition(h, keys, 3)
      .map(track)
      .flatMap((p) => cellsOf(native().tableToJs(groupBy(p, keys, aggs, "full"))))
      .map((r) => rowKey(r.map((x) => (typeof x === "number" ? x.toPrecision(8) : x))));
    expect(got.sort()).toEqual(want.sort());
  });

  it("one part, empty input, no keys", () => {
    const rows = generate({ rows: 50, groups: 5, seed: 23 });
    const h = track(native().tableFromJs(rowsToJsTable(rows, COLS)));
    const [one] = native().hashPartition(h, [1], 1).map(track);
    expect(native().tableToJs(one)).toEqual(native().tableToJs(h));
    const empty = track(native().slice(h, 0, 0));
    const ps = native().hashPartition(empty, [1, 2], 4).map(track);
    expect(ps.map((p) => native().tableInfo(p).rows)).toEqual([0, 0, 0, 0]);
    const nk = native().hashPartition(h, [], 3).map(track);
    expect(nk.map((p) => native().tableInfo(p).rows).sort()).toEqual([0, 0, 50]);
  });
});
