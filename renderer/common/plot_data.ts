// What a line, scatter or bar plot draws from a result's sampled x and y values:
// numbers (dates and timestamps as seconds) sorted by x, since uPlot's lines,
// drag-zoom and hover all assume an ascending x; or, for a text x column, one slot
// per category on a category axis. Pure, so it is tested without a browser.
import type { WireValue } from "../../engine/common/rpc.js";
import type { DType } from "../../engine/common/types.js";

export type PlotKind = "line" | "scatter" | "bar" | "histogram";

export interface PlotData {
  /** Ascending x (category slots 0..n-1 on a category axis). */
  xs: number[];
  ys: (number | null)[];
  /** The category axis's labels, by slot; absent for a numeric or time axis. */
  categories?: string[];
  xTitle: string;
  yTitle: string;
  xType: DType;
  /** What is drawn, for the plot bar and the PNG's title ("… sampled 10,000 of 2,000,000 rows"). */
  note: string;
}

/** A cell as a number: numbers, booleans as 0/1, dates and timestamps as seconds; null otherwise. */
export function plotNumber(v: WireValue | undefined): number | null {
  if (v === null || v === undefined) return null;
  if (typeof v === "number") return Number.isFinite(v) ? v : null;
  if (typeof v === "boolean") return v ? 1 : 0;
  const n = Number(v); // int64 beyond 2^53 arrives as decimal text
  if (v.trim() !== "" && Number.isFinite(n)) return n;
  const t = Date.parse(v);
  return Number.isNaN(t) ? null : t / 1000;
}

const fmt = (n: number) => n.toLocaleString("en-US");

/**
 * @example
 * plotSeries("line", [3, 1, 2], [30, 10, 20], { x: "x", y: "y", xType: "int64", total: 3 })
 * // { xs: [1, 2, 3], ys: [10, 20, 30], … note: "line of y by x: all 3 rows" }
 */
export function plotSeries(
  kind: Exclude<PlotKind, "histogram">,
  xValues: readonly WireValue[],
  yValues: readonly WireValue[],
  what: { x: string; y: string; xType: DType; total: number },
): PlotData {
  const n = Math.min(xValues.length, yValues.length);
  const sampled =
    n < what.total ? `a uniform random sample of ${fmt(n)} of ${fmt(what.total)} rows` : `all ${fmt(n)} rows`;
  if (what.xType === "string") {
    // One slot per category, in the order the rows bring them; several rows of one category: their mean.
    const slot = new Map<string, number>();
    const sums: number[] = [],
      counts: number[] = [];
    for (let i = 0; i < n; i++) {
      const label = xValues[i] === null ? "(null)" : String(xValues[i]);
      let s = slot.get(label);
      if (s === undefined) (slot.set(label, (s = slot.size)), sums.push(0), counts.push(0));
      const y = plotNumber(yValues[i]);
      if (y !== null) ((sums[s] += y), counts[s]++);
    }
    const many = slot.size < n;
    return {
      xs: [...slot.values()],
      ys: sums.map((s, i) => (counts[i] === 0 ? null : s / counts[i])),
      categories: [...slot.keys()],
      xTitle: what.x,
      yTitle: many ? `mean of ${what.y}` : what.y,
      xType: what.xType,
      note: `${kind} of ${many ? `mean ${what.y}` : what.y} per ${what.x}: ${sampled}`,
    };
  }
  const pairs: [number, number | null][] = [];
  let dropped = 0;
  for (let i = 0; i < n; i++) {
    const x = plotNumber(xValues[i]);
    if (x === null) dropped++;
    else pairs.push([x, plotNumber(yValues[i])]);
  }
  pairs.sort((a, b) => a[0] - b[0]); // stable: rows with the same x keep their order
  return {
    xs: pairs.map((p) => p[0]),
    ys: pairs.map((p) => p[1]),
    xTitle: what.x,
    yTitle: what.y,
    xType: what.xType,
    note: `${kind} of ${what.y} by ${what.x}: ${sampled}${dropped > 0 ? ` (${fmt(dropped)} with no ${what.x} left out)` : ""}`,
  };
}
