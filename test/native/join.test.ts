// Hash joins against DuckDB as the oracle: every join type, int/string/date/two-column
// keys, nulls, duplicates on both sides, skew, empty and one-row sides.
import { describe, expect, it } from "vitest";
import { native, type Handle, type JsColumn, type JsTable } from "../../engine/native/addon.js";
import type { JoinHow, JoinSpec } from "../../engine/graph/kernel_args.js";
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
  k_d: number | null;
  v_int: bigint | null;
  v_f: number | null;
  v_s: string | null;
}

interface SideOpts {
  rows: number;
  /** Distinct int keys, drawn from [offset, offset + groups). */
  groups: number;
  offset: number;
  seed: number;
  /** Half the rows share one key. */
  skew?: boolean;
  /** Keys are a permutation: every key once (no nulls). */
  unique?: boolean;
  /** String keys named after the int key, as unique sides make them. */
  namedStrings?: boolean;
}

function generate({ rows, groups, offset, seed, skew, unique, namedStrings }: SideOpts): Row[] {
  const r = seededRandom(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)];
  const maybe = <T>(p: number, v: () => T): T | null => (r() < p ? null : v());
  const perm = Array.from({ length: rows }, (_, i) => i);
  for (let i = rows - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [perm[i], perm[j]] = [perm[j], perm[i]];
  }
  const named = (k: number) => `u${k}${STRINGS[k % STRINGS.length]}`;
  const out: Row[] = [];
  for (let i = 0; i < rows; i++) {
    const hot = skew && r() < 0.5;
    const k = unique ? offset + perm[i] : Math.floor(r() * groups) + offset;
    out.push({
      rid: i,
      k_int: hot ? 1n : unique ? BigInt(k) : maybe(0.08, () => BigInt(k)),
      k_str: hot
        ? "hot"
        : unique
          ? named(k)
          : maybe(0.08, () => (namedStrings ? named(k) : r() < 0.6 ? pick(STRINGS) : `s${k % 7}`)),
      k_d: hot ? 18001 : unique ? 18000 + k : maybe(0.08, () => 18000 + (k % 23)),
      v_int: maybe(0.15, () => BigInt(Math.floor(r() * 2_000_000) - 1_000_000)),
      v_f: maybe(0.15, () => (r() - 0.3) * 1000),
      v_s: maybe(0.15, () => pick(STRINGS) + (r() < 0.3 ? String(Math.floor(r() * 5)) : "")),
    });
  }
  return out;
}

const COLS: NativeCol<Row>[] = [
  { name: "rid", type: "int64", sql: "BIGINT" },
  { name: "k_int", type: "int64", sql: "BIGINT" },
  { name: "k_str", type: "string", sql: "VARCHAR" },
  { name: "k_d", type: "date", sql: "INTEGER", view: daysToDate("k_d") },
  { name: "v_int", type: "int64", sql: "BIGINT" },
  { name: "v_f", type: "float64", sql: "DOUBLE" },
  { name: "v_s", type: "string", sql: "VARCHAR" },
];
const colIndex = (name: string) => COLS.findIndex((c) => c.name === name);

// ---------- DuckDB oracle ----------

const duck = duckPerFile();

const back = (e: string, type: JsColumn["type"]) => (type === "date" ? `((${e}) - DATE '1970-01-01')::BIGINT` : e);

/**
 * The expected rows, in the order the contract promises: left rows in order (one left
 * row's matches in right order), then unmatched right rows in right order.
 */
async function duckJoin(lv: string, rv: string, how: JoinHow, keys: string[]): Promise<unknown[][]> {
  const on = keys.map((k) => `l.${k} = r.${k}`).join(" AND ");
  const lcols = COLS.map((c) => back(`l.${c.name}`, c.type));
  if (how === "semi" || how === "anti") {
    const not = how === "anti" ? "NOT " : "";
    const sql = `SELECT ${lcols.join(", ")} FROM ${lv} l WHERE ${not}EXISTS (SELECT 1 FROM ${rv} r WHERE ${on}) ORDER BY l.rid`;
    return (await duck.con.runAndReadAll(sql)).getRowsJS() as unknown[][];
  }
  const rcols = COLS.map((c) => back(`r.${c.name}`, c.type));
  const kcols = keys.map((k) => back(`COALESCE(l.${k}, r.${k})`, COLS[colIndex(k)].type));
  const join = { inner: "JOIN", left: "LEFT JOIN", right: "RIGHT JOIN", outer: "FULL OUTER JOIN" }[how];
  const sql =
    `SELECT ${[...lcols, ...rcols, ...kcols].join(", ")} FROM ${lv} l ${join} ${rv} r ON ${on} ` +
    `ORDER BY l.rid IS NULL, l.rid, r.rid`;
  return (await duck.con.runAndReadAll(sql)).getRowsJS() as unknown[][];
}

// ---------- native helpers ----------

const track = trackHandles();

/** Floats match exactly (NaN matches NaN): a join copies them, it computes nothing. */
const sameFloat = (a: number, b: number) => a === b || (Number.isNaN(a) && Number.isNaN(b));
const expectSameRows = (got: JsTable, want: unknown[][], label: string) => expectSameCells(got, want, label, sameFloat);

/** Rows as sorted strings: the multiset of full rows (ints and dates as bigints). */
function multiset(rows: unknown[][], types: JsColumn["type"][]): string[] {
  const cell = (v: unknown, j: number) =>
    v === null || v === undefined
      ? "null"
      : types[j] === "float64"
        ? `f${Number(v)}`
        : typeof v === "string"
          ? JSON.stringify(v)
          : `${BigInt(v as bigint | number)}`;
  return rows.map((r) => r.map(cell).join("|")).sort();
}

function specFor(how: JoinHow, keys: string[]): JoinSpec {
  const output: JoinSpec["output"] = COLS.map((c, i) => ({ side: "left" as const, column: i, name: `l_${c.name}` }));
  if (how !== "semi" && how !== "anti") {
    output.push(...COLS.map((c, i) => ({ side: "right" as const, column: i, name: `r_${c.name}` })));
    output.push(...keys.map((k, i) => ({ side: "key" as const, column: i, name: k })));
  }
  return { how, leftKeys: keys.map(colIndex), rightKeys: keys.map(colIndex), output };
}

// ---------- tests ----------

const HOWS: JoinHow[] = ["inner", "left", "right", "outer", "semi", "anti"];
const KEY_SETS: string[][] = [["k_int"], ["k_str"], ["k_int", "k_str"], ["k_d"]];

const DATASETS: { label: string; left: SideOpts; right: SideOpts }[] = [
  {
    label: "many-to-many",
    left: { rows: 1500, groups: 60, offset: -3, seed: 1 },
    right: { rows: 600, groups: 60, offset: 5, seed: 2 },
  },
  {
    label: "skewed",
    left: { rows: 500, groups: 40, offset: 0, seed: 3, skew: true },
    right: { rows: 200, groups: 40, offset: 0, seed: 4, skew: true },
  },
  {
    label: "unique right",
    left: { rows: 2000, groups: 1200, offset: 0, seed: 5, namedStrings: true },
    right: { rows: 1000, groups: 0, offset: 0, seed: 6, unique: true },
  },
  {
    label: "empty left",
    left: { rows: 0, groups: 10, offset: 0, seed: 7 },
    right: { rows: 300, groups: 10, offset: 0, seed: 8 },
  },
  {
    label: "empty right",
    left: { rows: 300, groups: 10, offset: 0, seed: 9 },
    right: { rows: 0, groups: 10, offset: 0, seed: 10 },
  },
  {
    label: "empty both",
    left: { rows: 0, groups: 10, offset: 0, seed: 11 },
    right: { rows: 0, groups: 10, offset: 0, seed: 12 },
  },
  {
    label: "one-row left",
    left: { rows: 1, groups: 3, offset: 0, seed: 13 },
    right: { rows: 300, groups: 3, offset: 0, seed: 14 },
  },
  {
    label: "one-row right",
    left: { rows: 300, groups: 3, offset: 0, seed: 15 },
    right: { rows: 1, groups: 3, offset: 0, seed: 16 },
  },
  {
    label: "one row each",
    left: { rows: 1, groups: 1, offset: 0, seed: 17 },
    right: { rows: 1, groups: 1, offset: 0, seed: 18 },
  },
];

const loaded = new Map<string, { left: Row[]; right: Row[]; lv: string; rv: string; ljs: JsTable; rjs: JsTable }>();
async function dataset(ds: (typeof DATASETS)[number]) {
  let d = loaded.get(ds.label);
  if (!d) {
    const left = generate(ds.left);
    const right = generate(ds.right);
    const js = (rows: Row[]) => rowsToJsTable(rows, COLS, { nullValidityWhenComplete: true });
    d = {
      left,
      right,
      lv: await loadRowsIntoDuck(duck.con, left, COLS),
      rv: await loadRowsIntoDuck(duck.con, right, COLS),
      ljs: js(left),
      rjs: js(right),
    };
    loaded.set(ds.label, d);
  }
  return d;
}

describe("hashJoin vs DuckDB", () => {
  for (const ds of DATASETS)
    for (const keys of KEY_SETS)
      for (const how of HOWS) {
        it(`${ds.label}, ${how}, keys [${keys.join(", ")}]`, async () => {
          const d = await dataset(ds);
          const l = track(native().tableFromJs(d.ljs));
          const r = track(native().tableFromJs(d.rjs));
          const spec = specFor(how, keys);
          const out = native().tableToJs(track(native().hashJoin(l, r, spec)));
          expect(out.names).toEqual(spec.output.map((o) => o.name));
          expect(out.columns.map((c) => c.type)).toEqual(
            spec.output.map((o) => COLS[o.side === "key" ? colIndex(keys[o.column]) : o.column].type),
          );
          const want = await duckJoin(d.lv, d.rv, how, keys);
          const label = `${ds.label} ${how} [${keys}]`;
          const types = out.columns.map((c) => c.type);
          expect(multiset(cellsOf(out), types), `${label}: multiset`).toEqual(multiset(want, types));
          expectSameRows(out, want, label);
        });
      }
});

describe("hashJoin details", () => {
  const table = (cols: Record<string, JsColumn>): Handle => {
    const names = Object.keys(cols);
    const rows = names.length ? (cols[names[0]].values as ArrayLike<unknown>).length : 0;
    return track(native().tableFromJs({ rows, names, columns: names.map((n) => cols[n]) }));
  };
  const run = (l: Handle, r: Handle, spec: JoinSpec) =>
    cellsOf(native().tableToJs(track(native().hashJoin(l, r, spec))));

  it("float keys: -0 equals 0, NaN equals NaN, nulls never match", () => {
    const l = table({
      k: {
        type: "float64",
        values: Float64Array.from([0, NaN, 1.5, 2, 7]),
        validity: Uint8Array.from([1, 1, 1, 0, 1]),
      },
    });
    const r = table({
      k: {
        type: "float64",
        values: Float64Array.from([-0, NaN, 1.5, 2, 1.5]),
        validity: Uint8Array.from([1, 1, 1, 0, 1]),
      },
      v: { type: "int64", values: BigInt64Array.from([10n, 11n, 12n, 13n, 14n]), validity: null },
    });
    const spec = (how: JoinHow): JoinSpec => ({
      how,
      leftKeys: [0],
      rightKeys: [0],
      output:
        how === "semi" || how === "anti"
          ? [{ side: "left", column: 0, name: "k" }]
          : [
              { side: "key", column: 0, name: "k" },
              { side: "right", column: 1, name: "v" },
            ],
    });
    expect(run(l, r, spec("inner"))).toEqual([
      [0, 10n],
      [NaN, 11n],
      [1.5, 12n],
      [1.5, 14n],
    ]);
    expect(run(l, r, spec("outer"))).toEqual([
      [0, 10n],
      [NaN, 11n],
      [1.5, 12n],
      [1.5, 14n],
      [null, null],
      [7, null],
      [null, 13n],
    ]);
    expect(run(l, r, spec("anti"))).toEqual([[null], [7]]);
  });

  it("bool and timestamp keys, two columns", () => {
    const l = table({
      b: { type: "bool", values: Uint8Array.from([1, 0, 1, 0]), validity: Uint8Array.from([1, 1, 1, 0]) },
      ts: { type: "timestamp", values: BigInt64Array.from([5n, 5n, 6n, 5n]), validity: null },
    });
    const r = table({
      ts: { type: "timestamp", values: BigInt64Array.from([5n, 6n, 5n, 5n]), validity: null },
      b: { type: "bool", values: Uint8Array.from([1, 1, 0, 1]), validity: null },
      id: { type: "int64", values: BigInt64Array.from([0n, 1n, 2n, 3n]), validity: null },
    });
    const out = run(l, r, {
      how: "left",
      leftKeys: [0, 1],
      rightKeys: [1, 0],
      output: [
        { side: "left", column: 0, name: "b" },
        { side: "left", column: 1, name: "ts" },
        { side: "right", column: 2, name: "id" },
      ],
    });
    expect(out).toEqual([
      [1, 5n, 0n],
      [1, 5n, 3n],
      [0, 5n, 2n],
      [1, 6n, 1n],
      [null, 5n, null],
    ]);
    const single = run(l, r, {
      how: "semi",
      leftKeys: [0],
      rightKeys: [1],
      output: [{ side: "left", column: 1, name: "ts" }],
    });
    expect(single).toEqual([[5n], [5n], [6n]]);
  });

  it("output may repeat and reorder columns; a left join with unique right keys keeps every left row once", () => {
    const l = table({ k: { type: "int64", values: BigInt64Array.from([3n, 1n, 2n, 9n]), validity: null } });
    const r = table({
      v: { type: "string", values: ["three", "one", "two"], validity: null },
      k: { type: "int64", values: BigInt64Array.from([3n, 1n, 2n]), validity: null },
    });
    const out = run(l, r, {
      how: "left",
      leftKeys: [0],
      rightKeys: [1],
      output: [
        { side: "right", column: 0, name: "v" },
        { side: "left", column: 0, name: "k" },
        { side: "right", column: 0, name: "v2" },
      ],
    });
    expect(out).toEqual([
      ["three", 3n, "three"],
      ["one", 1n, "one"],
      ["two", 2n, "two"],
      [null, 9n, null],
    ]);
  });

  it("a larger many-to-many join matches a nested-loop count", () => {
    const r0 = seededRandom(99);
    const n = 20000;
    const mk = () => BigInt64Array.from({ length: n }, () => BigInt(Math.floor(r0() * 5000)));
    const lk = mk(),
      rk = mk();
    const l = table({ k: { type: "int64", values: lk, validity: null } });
    const r = table({ k: { type: "int64", values: rk, validity: null } });
    const counts = new Map<bigint, number>();
    for (const k of rk) counts.set(k, (counts.get(k) ?? 0) + 1);
    let want = 0;
    for (const k of lk) want += counts.get(k) ?? 0;
    const h = track(
      native().hashJoin(l, r, {
        how: "inner",
        leftKeys: [0],
        rightKeys: [0],
        output: [{ side: "left", column: 0, name: "k" }],
      }),
    );
    expect(native().tableInfo(h).rows).toBe(want);
  });

  it("errors carry codes", () => {
    const l = table({ k: { type: "int64", values: BigInt64Array.from([1n]), validity: null } });
    const r = table({ k: { type: "string", values: ["1"], validity: null } });
    expect(() => native().hashJoin(l, r, { how: "inner", leftKeys: [0], rightKeys: [0], output: [] })).toThrow(
      expect.objectContaining({ code: "BASIN_TYPE" }),
    );
    expect(() =>
      native().hashJoin(l, l, {
        how: "semi",
        leftKeys: [0],
        rightKeys: [0],
        output: [{ side: "right", column: 0, name: "x" }],
      }),
    ).toThrow(expect.objectContaining({ code: "BASIN_INTERNAL" }));
    expect(() => native().hashJoin(l, l, { how: "inner", leftKeys: [], rightKeys: [], output: [] })).toThrow(
      expect.objectContaining({ code: "BASIN_INTERNAL" }),
    );
    expect(() => native().hashJoin(l, l, { how: "inner", leftKeys: [0], rightKeys: [3], output: [] })).toThrow(
      expect.objectContaining({ code: "BASIN_INTERNAL" }),
    );
  });
});
