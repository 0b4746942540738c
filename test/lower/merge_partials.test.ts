// A group-by's merge of partial states as a full aggregation of them (then means
// divided), the form a GPU worker runs: the same answer as the "final" merge, bit for
// bit, over partitions that are empty, one row, all-null in a group, with nulls
// everywhere; and the moments of var/std and corr keep the "final" merge.
import { describe, expect, it } from "vitest";
import type { DType } from "../../engine/common/types.js";
import type { NativeAgg } from "../../engine/graph/kernel_args.js";
import { mergePartials, type MergedAgg } from "../../engine/lower/merge_partials.js";
import { native, type Handle, type JsColumn } from "../../engine/native/addon.js";
import { runSteps } from "../../engine/workers/run_steps.js";
import { makeTrips } from "../helpers/data.js";

const addon = native();

const validity = (v: unknown[]) => (v.some((x) => x === null) ? Uint8Array.from(v, (x) => (x === null ? 0 : 1)) : null);

/** Trips (k, city, v, f, flag, day) plus a group (k = 999) whose f and v are all null. */
function trips(): { h: Handle; types: DType[] } {
  const t = makeTrips(3000, 11);
  for (let i = 0; i < 5; i++) {
    t.k.push(999);
    t.city.push("é");
    t.v.push(null);
    t.f.push(null);
    t.flag.push(null);
    t.day.push(null);
  }
  const n = t.k.length;
  const days = t.day.map((d) => (d === null ? 0 : Date.parse(`${d}T00:00:00Z`) / 86_400_000));
  const columns: JsColumn[] = [
    { type: "int64", values: BigInt64Array.from(t.k, (x) => BigInt(x ?? 0)), validity: validity(t.k) },
    { type: "string", values: t.city, validity: null },
    { type: "int64", values: BigInt64Array.from(t.v, (x) => BigInt(x ?? 0)), validity: validity(t.v) },
    { type: "float64", values: Float64Array.from(t.f, (x) => x ?? 0), validity: validity(t.f) },
    { type: "bool", values: Uint8Array.from(t.flag, (x) => (x ? 1 : 0)), validity: validity(t.flag) },
    { type: "date", values: Int32Array.from(days), validity: validity(t.day) },
  ];
  const h = addon.tableFromJs({ rows: n, names: ["k", "city", "v", "f", "flag", "day"], columns });
  return { h, types: ["int64", "string", "int64", "float64", "bool", "date"] };
}

/** Rows of a stored table, every value as JS gives it (floats compared with Object.is). */
function cells(h: Handle): { names: string[]; types: string[]; rows: unknown[][] } {
  const t = addon.tableToJs(h);
  const info = addon.tableInfo(h);
  const rows = Array.from({ length: t.rows }, (_, r) =>
    t.columns.map((c) => (c.validity && !c.validity[r] ? null : (c.values as ArrayLike<unknown>)[r])),
  );
  return { names: t.names, types: info.types, rows };
}

/** The final merge and the full-aggregation merge of the same partials, by `keys`. */
function bothMerges(keys: number[], aggs: NativeAgg[]): { final: Handle; merged: Handle; steps: number } {
  const { h, types } = trips();
  const held: Handle[] = [h];
  try {
    // Partitions: 1000 rows, none, one, the rest; states laid out by mode "partial".
    const parts = [
      addon.slice(h, 0, 1000),
      addon.slice(h, 1000, 0),
      addon.slice(h, 1000, 1),
      addon.slice(h, 1001, 2004),
    ];
    held.push(...parts);
    const partials = parts.map((p) => addon.groupByAgg(p, keys, aggs, "partial"));
    held.push(...partials);
    const cat = addon.concat(partials);
    held.push(cat);
    const stateKeys = keys.map((_, i) => i);
    const final = addon.groupByAgg(cat, stateKeys, aggs, "final");
    const merged: MergedAgg[] = aggs.map((agg) => ({ agg, argType: agg.column >= 0 ? types[agg.column] : undefined }));
    const steps = mergePartials(
      keys.map((k) => ["k", "city", "v", "f", "flag", "day"][k]!),
      keys.map((k) => types[k]!),
      merged,
    );
    const out = runSteps(steps, [cat]).outputs[0]!;
    return { final, merged: out, steps: steps.length };
  } finally {
    for (const x of held) addon.release(x);
  }
}

describe("merging partial aggregates", () => {
  it("as a full aggregation of the states gives the final merge's answer, bit for bit", () => {
    const aggs: NativeAgg[] = [
      { op: "sum", column: 2, name: "sv" },
      { op: "sum", column: 3, name: "sf" },
      { op: "sum", column: 4, name: "sflag" },
      { op: "count", column: -1, name: "n" },
      { op: "count", column: 3, name: "nf" },
      { op: "min", column: 1, name: "minCity" },
      { op: "max", column: 5, name: "maxDay" },
      { op: "first", column: 3, name: "firstF" },
      { op: "last", column: 1, name: "lastCity" },
      { op: "mean", column: 2, name: "mv" },
      { op: "mean", column: 3, name: "mf" },
    ];
    for (const keys of [[0], [0, 4], [1]]) {
      const { final, merged, steps } = bothMerges(keys, aggs);
      try {
        expect(steps).toBe(2); // a full aggregation, then the means' division
        const want = cells(final),
          got = cells(merged);
        expect(got.names).toEqual(want.names);
        expect(got.types).toEqual(want.types);
        expect(got.rows.length).toBe(want.rows.length);
        for (let r = 0; r < want.rows.length; r++)
          for (let c = 0; c < want.names.length; c++)
            expect(Object.is(got.rows[r]![c], want.rows[r]![c]), `${want.names[c]} row ${r}`).toBe(true);
        // The group whose values are all null has null means, as the final merge makes them.
        if (keys.length === 1 && keys[0] === 0) {
          const row = got.rows.find((x) => x[0] === 999n)!;
          expect([row[want.names.indexOf("mv")], row[want.names.indexOf("mf")]]).toEqual([null, null]);
        }
      } finally {
        addon.release(final);
        addon.release(merged);
      }
    }
  });

  it("without a mean is the full aggregation alone", () => {
    const steps = mergePartials(["k"], ["int64"], [{ agg: { op: "sum", column: 2, name: "s" }, argType: "int64" }]);
    expect(steps).toEqual([
      { kind: "aggregate", keys: [0], aggs: [{ op: "sum", column: 1, name: "s" }], mode: "full" },
    ]);
  });

  it("keeps the final merge for var, std and corr, whose moments need it", () => {
    for (const op of ["var", "std", "corr"] as const) {
      const agg: NativeAgg = { op, column: 3, name: "x", ...(op === "corr" ? { column2: 2 } : {}) };
      const steps = mergePartials(["k"], ["int64"], [{ agg: { op: "sum", column: 2, name: "s" } }, { agg }]);
      expect(steps).toEqual([
        { kind: "aggregate", keys: [0], aggs: [{ op: "sum", column: 2, name: "s" }, agg], mode: "final" },
      ]);
    }
  });
});
