// Plots of a result's columns with uPlot: line, scatter and bar over a uniform
// random sample of the rows (the engine's sample(); all rows when there are few),
// sorted by x so that lines, drag-zoom and hover follow the data; text x columns on
// a category axis; histogram over the whole column (the engine's profile). Axes are
// titled and sized to their labels. Saves a PNG with a background and a title.
import { useEffect, useRef, useState } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import type { Bins2dView, EngineClient, ResultInfo, WireValue } from "../../engine/common/rpc.js";
import { plotSeries, type PlotData, type PlotKind } from "../common/plot_data.js";
import { binnable, binsFor, drawBinned } from "./binned_scatter.js";
import { binEdgeSeconds, timeLabel, timeTicks } from "../common/time_labels.js";
import { axisSize, axisStyle, type PlotHost } from "./plot_axes.js";

export type { PlotKind, PlotHost };
/** Rows a line/scatter/bar plot draws at most: a uniform sample of a larger result. */
export const PLOT_ROWS = 10_000;

export function PlotPanel(props: { client: EngineClient; result: ResultInfo | undefined; dark: boolean }) {
  const { client, result } = props;
  const host = useRef<PlotHost>(null);
  const plot = useRef<uPlot | undefined>(undefined);
  const plottable = (result?.schema ?? []).filter((f) => f.type !== "string");
  const [kind, setKind] = useState<PlotKind>("line");
  const [x, setX] = useState<string>("");
  const [y, setY] = useState<string>("");
  const [note, setNote] = useState<string>("");
  const [size, setSize] = useState({ w: 0, h: 0 });
  /** A binned scatter's zoomed ranges (undefined: all rows). */
  const [zoom, setZoom] = useState<Bins2dView | undefined>();
  const xCol = result?.schema.some((f) => f.name === x) ? x : (result?.schema[0]?.name ?? "");
  const yCol = plottable.some((f) => f.name === y)
    ? y
    : (plottable.find((f) => f.name !== xCol)?.name ?? plottable[0]?.name ?? "");

  // Another result, plot or column shows all rows again.
  useEffect(() => setZoom(undefined), [result, kind, xCol, yCol]);

  // Follow the panel's size (a splitter drag, a window resize).
  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setSize({ w: el.clientWidth, h: el.clientHeight }));
    ro.observe(el);
    return () => ro.disconnect();
  }, [result !== undefined]);

  useEffect(() => {
    const el = host.current;
    if (!el || !result) return;
    // Whatever this draw ends in (a chart, a note, an error), the last chart goes first:
    // a note under a chart it does not describe misleads.
    const clear = () => {
      plot.current?.destroy();
      plot.current = undefined;
      el.plot = undefined;
      el.plotData = undefined;
      el.querySelector(".bin-readout")?.remove();
      el.bins = undefined;
    };
    if (!yCol) {
      clear();
      setNote(
        "nothing to plot: the result has no number, date or boolean column (strings can be counted with valueCounts())",
      );
      return;
    }
    let live = true;
    void (async () => {
      let data: PlotData;
      const type = (c: string) => result.schema.find((f) => f.name === c)?.type ?? "string";
      if (kind === "scatter" && result.rows > PLOT_ROWS && binnable(type(xCol)) && binnable(type(yCol))) {
        // Too many points to draw one by one: every row counted into cells on the workers.
        const w = el.clientWidth || 600,
          h = Math.max(140, (el.clientHeight || 300) - 34);
        const bins = await client.bins2d(result.id, xCol, yCol, binsFor(w), binsFor(h), zoom);
        if (!live) return;
        drawBinned(el, bins, {
          xType: type(xCol),
          yType: type(yCol),
          dark: props.dark,
          width: w,
          height: h,
          onZoom: setZoom,
        });
        plot.current = el.plot;
        setNote(el.plotData!.note);
        return;
      }
      if (kind === "histogram") {
        const p = await client.profile(result.id, yCol);
        if (!live) return;
        const h = p.histogram;
        if (!h) {
          clear();
          return setNote(`${yCol} has no histogram (no values, or not numeric)`);
        }
        const yType = type(yCol);
        const xType = yType === "date" || yType === "timestamp" ? yType : "float64";
        // Dates and timestamps on a time axis, in seconds.
        const at = (e: number) => (xType === "float64" ? e : binEdgeSeconds(e, xType));
        data = {
          // Each bar at its bin's centre, on the column's own axis (dates as dates).
          xs: h.edges.slice(0, -1).map((e, i) => (at(e) + at(h.edges[i + 1]!)) / 2),
          ys: h.counts,
          xTitle: yCol,
          yTitle: "count",
          xType,
          note: `histogram of ${yCol}: all ${p.rows.toLocaleString("en-US")} rows`,
        };
      } else {
        const s = await client.sample(result.id, PLOT_ROWS, [xCol, yCol]);
        if (!live) return;
        data = plotSeries(kind, s.values[0] as WireValue[], s.values[1] as WireValue[], {
          x: xCol,
          y: yCol,
          xType: type(xCol),
          total: s.total,
        });
      }
      setNote(data.note);
      clear();
      const cats = data.categories;
      const onTime = !cats && (data.xType === "date" || data.xType === "timestamp");
      const xValues = (_u: uPlot, splits: number[]) =>
        onTime
          ? timeTicks(splits, data.xType)
          : splits.map((v) =>
              cats
                ? Number.isInteger(v)
                  ? (cats[v] ?? "")
                  : ""
                : v.toLocaleString("en-US", { maximumFractionDigits: 6 }),
            );
      const bars = kind === "bar" || kind === "histogram";
      const common = axisStyle(props.dark);
      const opts: uPlot.Options = {
        width: el.clientWidth || 600,
        height: Math.max(140, (el.clientHeight || 300) - 34),
        // Time axes tick at whole days, hours, minutes of UTC, as the labels are written.
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
        scales: {
          x: {
            time: onTime,
            ...(cats ? { range: [-0.5, Math.max(0.5, cats.length - 0.5)] as uPlot.Range.MinMax } : {}),
          },
          // Bars count from 0: a y axis starting at the lowest bar makes it look empty.
          ...(bars
            ? {
                y: {
                  range: (_u: uPlot, _min: number, max: number) => [0, Math.max(1, max * 1.05)] as uPlot.Range.MinMax,
                },
              }
            : {}),
        },
        axes: [
          {
            ...common,
            label: data.xTitle,
            labelSize: 18,
            size: axisSize(false),
            values: xValues,
            ...(cats && cats.length <= 40 ? { splits: () => cats.map((_, i) => i) } : {}),
          },
          { ...common, label: data.yTitle, labelSize: 18, size: axisSize(true) },
        ],
        series: [
          {
            label: data.xTitle,
            value: (_u, v) =>
              v === null || v === undefined
                ? "–"
                : cats
                  ? (cats[v] ?? "")
                  : data.xType === "date" || data.xType === "timestamp"
                    ? timeLabel(v, data.xType)
                    : String(v),
          },
          {
            label: data.yTitle,
            stroke: "#4f9cf5",
            fill: bars ? "rgba(79,156,245,0.55)" : undefined,
            width: kind === "scatter" ? 0 : 1.5,
            points: { show: kind === "scatter", size: 4, fill: "#4f9cf5" },
            paths: bars ? uPlot.paths.bars!({ size: [0.9, 60] }) : undefined,
          },
        ],
      };
      const u = new uPlot(opts, [data.xs, data.ys], el);
      plot.current = u;
      el.plot = u;
      el.plotData = data;
    })().catch((e: Error) => {
      if (!live) return;
      clear();
      setNote(e.message);
    });
    return () => {
      live = false;
    };
  }, [client, result, kind, xCol, yCol, props.dark, zoom]);

  useEffect(() => {
    const u = plot.current;
    const el = host.current;
    if (u && el && size.w > 0) u.setSize({ width: el.clientWidth, height: Math.max(140, el.clientHeight - 34) });
  }, [size]);

  useEffect(() => () => plot.current?.destroy(), []);

  /** The chart on an opaque background, under a title line that says what it shows. */
  const savePng = () => {
    const u = plot.current;
    const el = host.current;
    const canvas = el?.querySelector("canvas");
    if (!u || !el || !canvas) return;
    const ratio = canvas.width / Math.max(1, u.width);
    const titleH = Math.round(26 * ratio);
    const out = document.createElement("canvas");
    out.width = canvas.width;
    out.height = canvas.height + titleH;
    const ctx = out.getContext("2d")!;
    ctx.fillStyle = props.dark ? "#1b1d23" : "#ffffff";
    ctx.fillRect(0, 0, out.width, out.height);
    ctx.fillStyle = props.dark ? "#e6e6e6" : "#222222";
    ctx.font = `600 ${Math.round(13 * ratio)}px system-ui, sans-serif`;
    ctx.textBaseline = "middle";
    ctx.fillText(`${result?.name ? `${result.name}: ` : ""}${note}`, Math.round(8 * ratio), titleH / 2);
    ctx.drawImage(canvas, 0, titleH);
    const a = document.createElement("a");
    a.href = out.toDataURL("image/png");
    a.download = `${result?.name ?? result?.id ?? "plot"}-${kind}-${yCol}.png`.replace(/[^\w.-]+/g, "_");
    a.click();
  };

  if (!result) return <div className="empty">Run a pipeline to plot its result.</div>;
  return (
    <div className="plot-panel" data-testid="plot">
      <div className="plot-bar">
        <label>
          Plot{" "}
          <select value={kind} onChange={(e) => setKind(e.target.value as PlotKind)} aria-label="plot kind">
            <option value="line">line</option>
            <option value="scatter">scatter</option>
            <option value="bar">bar</option>
            <option value="histogram">histogram</option>
          </select>
        </label>
        {kind !== "histogram" && (
          <label>
            x{" "}
            <select value={xCol} onChange={(e) => setX(e.target.value)} aria-label="x column">
              {result.schema.map((f) => (
                <option key={f.name} value={f.name}>
                  {f.name}
                </option>
              ))}
            </select>
          </label>
        )}
        <label>
          {kind === "histogram" ? "column" : "y"}{" "}
          <select value={yCol} onChange={(e) => setY(e.target.value)} aria-label="y column">
            {plottable.map((f) => (
              <option key={f.name} value={f.name}>
                {f.name}
              </option>
            ))}
          </select>
        </label>
        <button className="btn" onClick={savePng} data-testid="save-png">
          Save PNG
        </button>
        <span
          className="muted plot-note"
          data-testid="plot-note"
          title="drag across the chart to zoom, double-click to zoom out"
        >
          {note}
        </span>
      </div>
      <div className="plot-host" ref={host} />
    </div>
  );
}
