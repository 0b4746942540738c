// What the plots share: fonts, axes sized to their labels, and the host element that
// keeps the chart (the tests and the PNG export read it). Time labels: time_labels.ts.
import type uPlot from "uplot";
import type { Bins2d } from "../../engine/common/rpc.js";
import type { DType } from "../../engine/common/types.js";
import type { PlotData } from "../common/plot_data.js";
import { timeLabel } from "../common/time_labels.js";
import { textWidth } from "./text_width.js";

export const FONT = "11px system-ui, sans-serif";
export const LABEL_FONT = "600 12px system-ui, sans-serif";

/** The plot host keeps its uPlot instance (the tests and the PNG export read it), and a binned scatter's cells. */
export type PlotHost = HTMLDivElement & { plot?: uPlot; plotData?: PlotData; bins?: Bins2d };

/** uPlot draws tick labels this far from the plot: its ticks (10 px) and the gap after them (5 px). */
const TICK_OFFSET = 15;
/** Room between the widest tick label and the axis title beside it. */
const TITLE_GAP = 6;

/**
 * An axis as wide (y) or tall (x) as its labels need, with room before its title (which
 * uPlot puts just outside this size).
 */
export function axisSize(vertical: boolean) {
  return (_u: uPlot, values: string[] | null) => {
    if (!vertical) return 28;
    const widest = Math.max(0, ...(values ?? []).map((v) => textWidth(String(v ?? ""), FONT, 7)));
    return Math.ceil(widest) + TICK_OFFSET + TITLE_GAP;
  };
}

/** An axis's tick labels: times for dates and timestamps, else numbers. */
export function tickLabel(v: number, type: DType): string {
  return type === "date" || type === "timestamp"
    ? timeLabel(v, type)
    : v.toLocaleString("en-US", { maximumFractionDigits: 6 });
}

/**
 * The axis style every chart shares (colours by theme, fonts).
 *
 * @example
 * const axis = axisStyle(dark); // { stroke, grid, ticks, font, labelFont }
 */
export function axisStyle(dark: boolean) {
  const grid = dark ? "#2c313a" : "#e6e6e6";
  return {
    stroke: dark ? "#c8ccd4" : "#333",
    grid: { stroke: grid },
    ticks: { stroke: grid },
    font: FONT,
    labelFont: LABEL_FONT,
  };
}
