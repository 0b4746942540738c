// A scatter of more rows than can be drawn one by one: the engine counts every row
// into a grid of cells on the workers (bins2d), and the chart paints each non-empty
// cell, its colour the number of rows in it (log scale). The axes span the data's
// whole extent (the engine's min and max), so no row falls outside the plot; the note
// says that this is binning, of how many rows, and what was left out.
import uPlot from "uplot";
import type { Bins2d, Bins2dView } from "../../engine/common/rpc.js";
import type { DType } from "../../engine/common/types.js";
import { axisSize, axisStyle, tickLabel, type PlotHost } from "./plot_axes.js";

/** Columns a binned scatter can put on an axis. */
export const binnable = (t: DType) => t === "int64" || t === "float64" || t === "date" || t === "timestamp";

/** Cells along an axis of `px` pixels: about one per 4 px, 10 to 400. */
export const binsFor = (px: number) => Math.max(10, Math.min(400, Math.round(px / 4)));

/** An engine value (dates in days, timestamps in µs) on the plot's axis (seconds for times). */
function onAxis(v: number, type: DType): number {
  return type === "date" ? v * 86_400 : type === "timestamp" ? v / 1e6 : v;
}

/** A value of the plot's axis back in the engine's units. */
function fromAxis(v: number, type: DType): number {
  return type === "date" ? v / 86_400 : type === "timestamp" ? v * 1e6 : v;
}

/** A cell's colour: pale blue for one row, through to yellow for the fullest cell. */
function shade(t: number, dark: boolean): string {
  return `hsl(${Math.round(220 - 170 * t)}, 85%, ${Math.round(dark ? 38 + 30 * t : 72 - 30 * t)}%)`;
}

const fmt = (n: number) => n.toLocaleString("en-US");
/** A cell edge in the readout: times as times, numbers to 5 significant digits. */
const edge = (v: number, type: DType) =>
  type === "date" || type === "timestamp" ? tickLabel(v, type) : Number(v.toPrecision(5)).toLocaleString("en-US");

/**
 * Draws `b` into `el` (replacing its chart), sets el.plot, el.bins and el.plotData (with its note).
 *
 * @example
 * drawBinned(host, await client.bins2d(id, "x", "y", 200, 100), { xType: "float64", yType: "float64", dark, width, height });
 */
export function drawBinned(
  el: PlotHost,
  b: Bins2d,
  o: {
    xType: DType;
    yType: DType;
    dark: boolean;
    width: number;
    height: number;
    /** A drag selected ranges to zoom into (the engine bins them anew); undefined: back to all rows. */
    onZoom(view: Bins2dView | undefined): void;
  },
): void {
  el.plot?.destroy();
  el.querySelector(".bin-readout")?.remove();
  const [x0, x1] = b.xRange.map((v) => onAxis(v, o.xType));
  const [y0, y1] = b.yRange.map((v) => onAxis(v, o.yType));
  const wx = (x1 - x0) / b.xBins,
    wy = (y1 - y0) / b.yBins;
  const peak = Math.max(1, ...b.counts);
  const common = axisStyle(o.dark);
  const readout = document.createElement("div");
  readout.className = "bin-readout muted";
  readout.dataset.testid = "bin-readout";
  const opts: uPlot.Options = {
    width: o.width,
    height: o.height,
    scales: { x: { time: false, range: [x0, x1] }, y: { range: [y0, y1] } },
    axes: [
      {
        ...common,
        label: b.x,
        labelSize: 18,
        size: axisSize(false),
        values: (_u, s) => s.map((v) => tickLabel(v, o.xType)),
      },
      {
        ...common,
        label: b.y,
        labelSize: 18,
        size: axisSize(true),
        values: (_u, s) => s.map((v) => tickLabel(v, o.yType)),
      },
    ],
    legend: { show: false },
    // A drag asks the engine for the selected ranges' cells (finer, and counted anew) rather than magnifying these.
    cursor: { drag: { x: true, y: true, setScale: false } },
    series: [{ label: b.x }, { label: `rows per cell`, stroke: "transparent", points: { show: false } }],
    hooks: {
      draw: [
        (u) => {
          const ctx = u.ctx;
          ctx.save();
          ctx.beginPath();
          ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
          ctx.clip();
          const logPeak = Math.log(peak + 1);
          for (let j = 0; j < b.yBins; j++)
            for (let i = 0; i < b.xBins; i++) {
              const n = b.counts[j * b.xBins + i];
              if (n === 0) continue;
              const left = u.valToPos(x0 + i * wx, "x", true),
                right = u.valToPos(x0 + (i + 1) * wx, "x", true);
              const top = u.valToPos(y0 + (j + 1) * wy, "y", true),
                bottom = u.valToPos(y0 + j * wy, "y", true);
              ctx.fillStyle = shade(Math.log(n + 1) / logPeak, o.dark);
              // At least a pixel, so that a lone row far from the rest stays visible.
              ctx.fillRect(left, top, Math.max(1, right - left), Math.max(1, bottom - top));
            }
          ctx.restore();
        },
      ],
      setSelect: [
        (u) => {
          const { left, top, width, height } = u.select;
          if (width < 4 || height < 4) return;
          const xs = [u.posToVal(left, "x"), u.posToVal(left + width, "x")].map((v) => fromAxis(v, o.xType));
          const ys = [u.posToVal(top + height, "y"), u.posToVal(top, "y")].map((v) => fromAxis(v, o.yType));
          u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
          o.onZoom({ x: [xs[0], xs[1]], y: [ys[0], ys[1]] });
        },
      ],
      setCursor: [
        (u) => {
          const { left, top } = u.cursor;
          if (left === undefined || top === undefined || left < 0) return void (readout.textContent = "");
          const x = u.posToVal(left, "x"),
            y = u.posToVal(top, "y");
          const i = Math.min(b.xBins - 1, Math.floor((x - x0) / wx)),
            j = Math.min(b.yBins - 1, Math.floor((y - y0) / wy));
          if (i < 0 || j < 0) return void (readout.textContent = "");
          const n = b.counts[j * b.xBins + i];
          readout.textContent = `${b.x} ${edge(x0 + i * wx, o.xType)} – ${edge(x0 + (i + 1) * wx, o.xType)}, ${b.y} ${edge(y0 + j * wy, o.yType)} – ${edge(y0 + (j + 1) * wy, o.yType)}: ${fmt(n)} row${n === 1 ? "" : "s"}`;
        },
      ],
    },
  };
  const u = new uPlot(
    opts,
    [
      [x0, x1],
      [null, null],
    ],
    el,
  );
  u.over.addEventListener("dblclick", () => b.view && o.onZoom(undefined));
  el.append(readout);
  const left = b.total - b.counted;
  el.plot = u;
  el.bins = b;
  el.plotData = {
    xs: [x0, x1],
    ys: [null, null],
    xTitle: b.x,
    yTitle: b.y,
    xType: o.xType,
    note: b.view
      ? `scatter of ${b.y} by ${b.x}: ${fmt(b.counted)} of ${fmt(b.total)} rows in this view, binned on the workers into ` +
        `${b.xBins} × ${b.yBins} cells (colour: rows per cell, log scale; max ${fmt(peak)}); double-click to see all rows`
      : `scatter of ${b.y} by ${b.x}: all ${fmt(b.counted)} rows, binned on the workers into ${b.xBins} × ${b.yBins} cells ` +
        `(colour: rows per cell, log scale; max ${fmt(peak)}; drag to zoom)` +
        (left > 0 ? `; ${fmt(left)} rows without ${b.x} or ${b.y} not drawn` : ""),
  };
}
