// A kept result's column profiles (the workbench's summary panel): every number is
// a Basin plan over the stored result, run on the cluster's workers. One aggregate over
// all columns gives the counts and extremes (made once per result, shared by its
// columns); then each column gets its own plans: strings and bools one group-by of their
// values (distinct, top values); integers and dates of a narrow range one group-by of
// their values too (distinct, median, mean, std, histogram); other numbers a histogram,
// a median and a mean/std aggregate, their distinct count left to countDistinct (asked
// for last: seconds for 1e7 different values). Everything is exact.
import { col, count, type Expr } from "../api/expr.js";
import { when } from "../api/when.js";
import { DataFrame } from "../api/dataframe.js";
import { computeStored, type ComputeOptions } from "../run/stored.js";
import type { Bins2d, Bins2dView, ColumnProfile, WireValue } from "../common/rpc.js";
import { BasinError } from "../common/errors.js";
import type { DType, Field } from "../common/types.js";
import { native } from "../native/addon.js";
import { dateText } from "../common/civil_text.js";
import { isoTimestamp, toWire } from "./wire.js";

const HISTOGRAM_BINS = 20;
const TOP_VALUES = 10;
/** Integer and date columns spanning fewer values than this are profiled from their values' counts. */
const VALUE_COUNT_SPAN = 100_000;

/** What the one aggregate over all columns says about a column. */
export interface ColumnBasics {
  rows: number;
  nulls: number;
  min: WireValue;
  max: WireValue;
  /** Numbers, dates and timestamps as float64 (days, µs): the histogram's range. */
  lo?: number | null;
  hi?: number | null;
}

const numeric = (t: DType) => t === "int64" || t === "float64";
const temporal = (t: DType) => t === "date" || t === "timestamp";
/** Aggregate aliases by column position (names may hold any character). */
const alias = (i: number, what: string) => `__p${i}_${what}`;

/** A wire cell as a finite number, or null. */
function num(v: WireValue): number | null {
  if (v === null) return null;
  const n = typeof v === "number" ? v : Number(v);
  return Number.isFinite(n) ? n : null;
}

/** A date (days) or timestamp (µs) held as float64, in wire form. */
function temporalWire(v: number, type: DType): string {
  return type === "date" ? dateText(Math.round(v)) : isoTimestamp(BigInt(Math.round(v)));
}

/**
 * The bin of column `name` for bins of `width` centred on lo, lo + width, …: the
 * nearest multiple, as a cast to int64 rounds it (half to even). One cast instead of a
 * floor (y − (y mod 1)): fmod made histograms of 1e7 rows twice as slow.
 */
function binOf(name: string, lo: number, width: number): Expr {
  // NaN and ±inf have no bin (null, left out): a strict cast failed the whole profile.
  return col(name).cast("float64").sub(lo).div(width).cast("int64", { strict: false });
}

/** What binOf computes, in JS (for bins made from value counts): round half to even. */
function binOfValue(v: number, lo: number, width: number): number {
  const y = (v - lo) / width;
  const f = Math.floor(y);
  return y - f === 0.5 ? (f % 2 === 0 ? f : f + 1) : Math.round(y);
}

/** Runs `df` and gives its one row of cells in wire form, by column name. */
async function oneRow(df: DataFrame, compute: Pick<ComputeOptions, "cluster">): Promise<Map<string, WireValue>> {
  const { ref } = await computeStored(df.toPlan(), compute);
  try {
    const js = native().tableToJs(ref);
    const wire = toWire(js);
    return new Map(js.names.map((n, i) => [n, wire[i][0] ?? null]));
  } finally {
    native().release(ref);
  }
}

/**
 * Counts, nulls, min and max of every column, in one aggregate plan (means and
 * deviations come with each column's own plans: integers of a narrow range get them
 * from their value counts without another pass).
 *
 * @example
 * const basics = await profileBasics(df, { cluster }); basics.get("fare")!.max
 */
export async function profileBasics(
  df: DataFrame,
  compute: Pick<ComputeOptions, "cluster">,
): Promise<Map<string, ColumnBasics>> {
  const aggs: Expr[] = [count().alias("__rows")];
  df.schema.forEach((f, i) => {
    const c = col(f.name);
    aggs.push(c.count().alias(alias(i, "n")), c.min().alias(alias(i, "min")), c.max().alias(alias(i, "max")));
    if (temporal(f.type)) {
      const x = c.cast("float64");
      aggs.push(x.min().alias(alias(i, "lo")), x.max().alias(alias(i, "hi")));
    }
    if (f.type === "float64") {
      // The histogram spans the finite values: NaN is the largest double, ±inf the ends.
      const finite = when(c.ge(-Number.MAX_VALUE).and(c.le(Number.MAX_VALUE))).then(c);
      aggs.push(finite.min().alias(alias(i, "lo")), finite.max().alias(alias(i, "hi")));
    }
  });
  const row = await oneRow(df.agg(...aggs), compute);
  const rows = Number(row.get("__rows"));
  const out = new Map<string, ColumnBasics>();
  df.schema.forEach((f, i) => {
    const get = (what: string) => row.get(alias(i, what)) ?? null;
    const b: ColumnBasics = { rows, nulls: rows - Number(get("n")), min: get("min"), max: get("max") };
    if (numeric(f.type)) {
      b.lo = num(get("min"));
      b.hi = num(get("max"));
    }
    if (temporal(f.type) || f.type === "float64") {
      b.lo = num(get("lo"));
      b.hi = num(get("hi"));
    }
    out.set(f.name, b);
  });
  return out;
}

/**
 * One column's full profile, from its basics and its own plans on the cluster.
 *
 * @example
 * const p = await profileColumn(df, field, basics.get(field.name)!, { cluster });
 */
export async function profileColumn(
  df: DataFrame,
  field: Field,
  basics: ColumnBasics,
  compute: Pick<ComputeOptions, "cluster">,
): Promise<ColumnProfile> {
  const { rows, nulls, min, max } = basics;
  const profile: ColumnProfile = { column: field.name, type: field.type, rows, nulls, min, max };
  if (rows - nulls === 0) {
    profile.distinct = 0;
    return profile;
  }
  const c = col(field.name);
  if (field.type === "string" || field.type === "bool") {
    Object.assign(profile, await valueCounts(df, field.name, compute));
    return profile;
  }
  const lo = basics.lo ?? 0,
    hi = basics.hi ?? 0;
  if ((field.type === "int64" || field.type === "date") && hi - lo < VALUE_COUNT_SPAN && Number.isSafeInteger(lo))
    return Object.assign(profile, await fromValueCounts(df, field, lo, hi, compute));
  profile.histogram = await histogram(df, field, lo, hi, compute);
  const x = temporal(field.type) ? c.cast("float64") : c;
  const median = num((await oneRow(df.agg(x.median().alias("median")), compute)).get("median") ?? null);
  profile.median = median === null || !temporal(field.type) ? median : temporalWire(median, field.type);
  if (numeric(field.type)) {
    // Its own plan: beside a median, these aggregates take the median's slower gathering path.
    const m = await oneRow(df.agg(c.mean().alias("mean"), c.std().alias("std")), compute);
    profile.mean = num(m.get("mean") ?? null);
    profile.std = num(m.get("std") ?? null);
  }
  // Counting 1e7 different numbers takes seconds: left to countDistinct(), which the
  // summary asks for once every column's profile is in.
  return profile;
}

/**
 * Integers and dates of a narrow range: one group-by counts each value on the workers,
 * and its (at most VALUE_COUNT_SPAN) rows give the distinct count, the exact median, the
 * mean and std, and the histogram — the same bins histogram() makes — without another pass.
 */
async function fromValueCounts(
  df: DataFrame,
  field: Field,
  lo: number,
  hi: number,
  compute: Pick<ComputeOptions, "cluster">,
): Promise<Pick<ColumnProfile, "distinct" | "median" | "histogram" | "mean" | "std">> {
  const v = field.type === "date" ? col(field.name).cast("float64") : col(field.name);
  const counted = await df.groupBy(v.alias("v")).agg(count().alias("n")).compute(compute);
  const values = counted.column("v"),
    ns = counted.column("n");
  const pairs: [number, number][] = [];
  for (let i = 0; i < counted.numRows; i++) if (values[i] !== null) pairs.push([Number(values[i]), Number(ns[i])]);
  pairs.sort((a, b) => a[0] - b[0]);
  const total = pairs.reduce((n, p) => n + p[1], 0);
  // The median: the mean of the values at ranks ⌊(n−1)/2⌋ and ⌈(n−1)/2⌉.
  const ranks = [Math.floor((total - 1) / 2), Math.ceil((total - 1) / 2)];
  const at: number[] = [];
  for (let i = 0, seen = 0; i < pairs.length && at.length < 2; seen += pairs[i++][1])
    while (at.length < 2 && ranks[at.length] < seen + pairs[i][1]) at.push(pairs[i][0]);
  const median = (at[0] + at[1]) / 2;
  const { edges, bins, width } = binning(field, lo, hi);
  const counts = new Array<number>(bins).fill(0);
  for (const [value, n] of pairs) counts[Math.min(binOfValue(value, lo, width), bins - 1)] += n;
  const out: Pick<ColumnProfile, "distinct" | "median" | "histogram" | "mean" | "std"> = {
    distinct: pairs.length,
    median: field.type === "date" ? temporalWire(median, field.type) : median,
    histogram: { edges, counts },
  };
  if (field.type === "int64") {
    // The sample standard deviation (n − 1), in two passes over the value counts.
    const mean = pairs.reduce((a, [v, n]) => a + v * n, 0) / total;
    const ss = pairs.reduce((a, [v, n]) => a + n * (v - mean) ** 2, 0);
    out.mean = mean;
    out.std = total > 1 ? Math.sqrt(ss / (total - 1)) : null;
  }
  return out;
}

/**
 * The histogram's bins over [lo, hi], centred on lo, lo + width, …, hi (so the first
 * and last reach half a bin beyond the data): HISTOGRAM_BINS of them, or one per value
 * for integers of a narrow range.
 */
/** (hi − lo) / parts, finite even where hi − lo overflows (-1e308 … 1e308). */
function partWidth(lo: number, hi: number, parts: number): number {
  const w = (hi - lo) / parts;
  return Number.isFinite(w) ? w : hi / parts - lo / parts;
}

function binning(field: Field, lo: number, hi: number): { edges: number[]; bins: number; width: number } {
  const span = hi - lo;
  const perValue = field.type !== "float64" && span + 1 <= HISTOGRAM_BINS;
  const bins = perValue ? span + 1 : span > 0 ? HISTOGRAM_BINS : 1;
  const width = perValue || span === 0 ? 1 : partWidth(lo, hi, bins - 1);
  return { edges: Array.from({ length: bins + 1 }, (_, i) => lo + (i - 0.5) * width), bins, width };
}

/**
 * Distinct non-null values of a column (exact).
 *
 * @example
 * await countDistinct(df, "fare", { cluster }) // 5776231
 */
export async function countDistinct(
  df: DataFrame,
  column: string,
  compute: Pick<ComputeOptions, "cluster">,
): Promise<number> {
  // A group-by spreads the values over the workers by hash; nUnique() gathers them on one.
  const groups = df.groupBy(column).agg(count().alias("n")).filter(col(column).isNotNull());
  return Number((await oneRow(groups.agg(count().alias("distinct")), compute)).get("distinct"));
}

/**
 * Strings and bools: each value's count (a group-by on the workers); the top values
 * are sorted here when there are few, else by a plan over the counts left in the store.
 */
async function valueCounts(
  df: DataFrame,
  column: string,
  compute: Pick<ComputeOptions, "cluster">,
): Promise<Pick<ColumnProfile, "distinct" | "top">> {
  const c = col(column);
  const counted = df.filter(c.isNotNull()).groupBy(column).agg(count().alias("count"));
  const { ref } = await computeStored(counted.toPlan(), compute);
  let topRef: number | undefined;
  try {
    const distinct = native().tableRows(ref);
    if (distinct > VALUE_COUNT_SPAN) {
      const grouped = new DataFrame({
        kind: "stored",
        handles: [ref],
        bytes: distinct * 16,
        schema: [...counted.schema],
      });
      const top = grouped.sort(["count", column], { descending: [true, false] }).head(TOP_VALUES);
      topRef = (await computeStored(top.toPlan(), compute)).ref;
    }
    const js = native().tableToJs(topRef ?? ref);
    const wire = toWire(js);
    const [values, counts] = [column, "count"].map((n) => wire[js.names.indexOf(n)]);
    const rows = values.map((value, i) => ({ value, count: Number(counts[i]) }));
    // Most frequent first; ties by value, as the plan sorts them.
    rows.sort((a, b) => b.count - a.count || (a.value! < b.value! ? -1 : a.value! > b.value! ? 1 : 0));
    return { distinct, top: rows.slice(0, TOP_VALUES) };
  } finally {
    if (topRef !== undefined) native().release(topRef);
    native().release(ref);
  }
}

/** The histogram of a column as numbers (dates as days, timestamps as µs): binning()'s bins, counted by one group-by. */
async function histogram(
  df: DataFrame,
  field: Field,
  lo: number,
  hi: number,
  compute: Pick<ComputeOptions, "cluster">,
): Promise<{ edges: number[]; counts: number[] }> {
  const { edges, bins, width } = binning(field, lo, hi);
  // Nulls fall in a null bin, left out below (cheaper than filtering them first).
  const counted = await df
    .groupBy(binOf(field.name, lo, width).alias("bin"))
    .agg(count().alias("n"))
    .compute(compute);
  const counts = new Array<number>(bins).fill(0);
  const bin = counted.column("bin"),
    n = counted.column("n");
  for (let i = 0; i < counted.numRows; i++)
    if (bin[i] !== null) counts[Math.min(Math.max(0, Number(bin[i])), bins - 1)] += Number(n[i]);
  return { edges, counts };
}

/** Most bins a 2-D histogram may have along an axis. */
export const MAX_BINS_2D = 1000;

/**
 * A 2-D histogram of x and y over every row: one group-by of both bins on the workers.
 *
 * @example
 * const b = await bins2d(df, "x", "y", 200, 120, basics, { cluster }); b.counts.length // 24000
 */
export async function bins2d(
  df: DataFrame,
  axes: { x: string; y: string; xBins: number; yBins: number; view?: Bins2dView },
  basics: Map<string, ColumnBasics>,
  compute: Pick<ComputeOptions, "cluster">,
): Promise<Omit<Bins2d, "resultId">> {
  const { x, y, xBins, yBins, view } = axes;
  if (view !== undefined && view !== null) {
    const ok = (r: unknown) =>
      Array.isArray(r) && r.length === 2 && r.every((v) => typeof v === "number" && Number.isFinite(v)) && r[0] < r[1];
    if (!ok(view.x) || !ok(view.y))
      throw new BasinError("BASIN_PLAN", "a binned scatter's view needs x and y as [low, high] with low < high");
  }
  for (const [name, n] of [
    ["xBins", xBins],
    ["yBins", yBins],
  ] as const)
    if (!Number.isInteger(n) || n < 1 || n > MAX_BINS_2D)
      throw new BasinError("BASIN_PLAN", `${name} must be an integer in 1..${MAX_BINS_2D}, got ${n}`);
  const axis = (name: string, bins: number, range: [number, number] | undefined) => {
    const field = df.schema.find((f) => f.name === name);
    if (!field) throw new BasinError("BASIN_PLAN", `the result has no column "${name}"`);
    if (!numeric(field.type) && !temporal(field.type))
      throw new BasinError(
        "BASIN_PLAN",
        `"${name}" is ${field.type}: a binned scatter needs numbers, dates or timestamps on both axes`,
      );
    const b = basics.get(name)!;
    const lo = b.lo ?? 0,
      hi = b.hi ?? 0;
    if (range) {
      // A zoomed view: cells tile [low, high] exactly, rows outside it are left out.
      const width = (range[1] - range[0]) / bins;
      const centre = range[0] + width / 2;
      const v = col(name).cast("float64");
      return { lo, hi, width, centre, bin: binOf(name, centre, width), inside: v.ge(range[0]).and(v.le(range[1])) };
    }
    // Cells centred on lo … hi: the first and the last reach half a cell beyond the data.
    const width = hi > lo && bins > 1 ? partWidth(lo, hi, bins - 1) : Math.max(1, hi - lo);
    return { lo, hi, width, centre: lo, bin: binOf(name, lo, width), inside: undefined };
  };
  const ax = axis(x, xBins, view?.x),
    ay = axis(y, yBins, view?.y);
  const rows = ax.inside && ay.inside ? df.filter(ax.inside.and(ay.inside)) : df;
  const counted = await rows.groupBy(ax.bin.alias("bx"), ay.bin.alias("by")).agg(count().alias("n")).compute(compute);
  const counts = new Array<number>(xBins * yBins).fill(0);
  const bx = counted.column("bx"),
    by = counted.column("by"),
    n = counted.column("n");
  let total = 0;
  const cell = (v: unknown, bins: number) => Math.min(Math.max(0, Number(v)), bins - 1);
  for (let i = 0; i < counted.numRows; i++) {
    total += Number(n[i]);
    if (bx[i] === null || by[i] === null) continue; // x or y missing: not drawn
    counts[cell(by[i], yBins) * xBins + cell(bx[i], xBins)] += Number(n[i]);
  }
  return {
    x,
    y,
    xRange: [ax.centre - ax.width / 2, ax.centre + (xBins - 0.5) * ax.width],
    yRange: [ay.centre - ay.width / 2, ay.centre + (yBins - 0.5) * ay.width],
    xExtent: [ax.lo, ax.hi],
    yExtent: [ay.lo, ay.hi],
    xBins,
    yBins,
    counts,
    counted: counts.reduce((a, b) => a + b, 0),
    // Zoomed, the group-by saw only the rows in view: the result's rows come from its basics.
    total: view ? basics.get(x)!.rows : total,
    ...(view ? { view: { x: view.x, y: view.y } } : {}),
  };
}
