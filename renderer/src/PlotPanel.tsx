// Plots of a result's columns with uPlot: line, scatter and bar over the first
// rows (fetched with page()), histogram over the whole column (the engine's
// profile). Saves the canvas as PNG.
import { useEffect, useRef, useState } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import type { EngineClient, ResultInfo } from "../../engine/common/rpc.js";

export type PlotKind = "line" | "scatter" | "bar" | "histogram";
/** Rows a line/scatter/bar plot draws (one page). */
export const PLOT_ROWS = 10_000;

function numeric(v: unknown): number | null {
  if (v === null || v === undefined) return null;
  if (typeof v === "number") return v;
  if (typeof v === "boolean") return v ? 1 : 0;
  const t = Date.parse(String(v));
  return Number.isNaN(t) ? null : t / 1000;
}

export function PlotPanel(props: { client: EngineClient; result: ResultInfo | undefined; dark: boolean }) {
  const { client, result } = props;
  const host = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | undefined>(undefined);
  const plottable = (result?.schema ?? []).filter((f) => f.type !== "string");
  const [kind, setKind] = useState<PlotKind>("line");
  const [x, setX] = useState<string>("");
  const [y, setY] = useState<string>("");
  const [note, setNote] = useState<string>("");
  const xCol = result?.schema.some((f) => f.name === x) ? x : (plottable[0]?.name ?? "");
  const yCol = plottable.some((f) => f.name === y) ? y : (plottable[1]?.name ?? plottable[0]?.name ?? "");

  useEffect(() => {
    const el = host.current;
    if (!el || !result || !yCol) return;
    let live = true;
    void (async () => {
      let data: uPlot.AlignedData;
      let xs: (string | number)[] = [];
      if (kind === "histogram") {
        const p = await client.profile(result.id, yCol);
        if (!live) return;
        const h = p.histogram;
        if (!h) return setNote(`${yCol} has no histogram (no values, or not numeric)`);
        data = [h.edges.slice(0, -1), h.counts];
        setNote(`histogram of ${yCol}: all ${p.rows.toLocaleString("en-US")} rows`);
      } else {
        const page = await client.page(result.id, 0, Math.min(PLOT_ROWS, result.rows), [xCol, yCol]);
        if (!live) return;
        // Text x values (or none) plot against the row number.
        const isText = page.values[0].some((v) => typeof v === "string" && numeric(v) === null);
        xs = page.values[0].map((v, i) => (isText ? i : (numeric(v) ?? i)));
        data = [xs as number[], page.values[1].map(numeric)];
        setNote(
          `${kind} of ${yCol} by ${xCol}: first ${page.values[0].length.toLocaleString("en-US")} of ${result.rows.toLocaleString("en-US")} rows`,
        );
      }
      plot.current?.destroy();
      const axis = {
        stroke: props.dark ? "#c8ccd4" : "#333",
        grid: { stroke: props.dark ? "#2c313a" : "#e6e6e6" },
        ticks: { stroke: props.dark ? "#2c313a" : "#e6e6e6" },
      };
      const bars = kind === "bar" || kind === "histogram";
      const opts: uPlot.Options = {
        width: el.clientWidth || 600,
        height: Math.max(120, (el.clientHeight || 300) - 30),
        scales: { x: { time: false } },
        axes: [axis, axis],
        series: [
          { label: kind === "histogram" ? yCol : xCol },
          {
            label: kind === "histogram" ? "count" : yCol,
            stroke: "#4f9cf5",
            fill: bars ? "rgba(79,156,245,0.55)" : undefined,
            width: kind === "scatter" ? 0 : 1.5,
            points: { show: kind === "scatter", size: 4, fill: "#4f9cf5" },
            paths: bars ? uPlot.paths.bars!({ size: [0.9, 60] }) : undefined,
          },
        ],
      };
      plot.current = new uPlot(opts, data, el);
    })().catch((e: Error) => live && setNote(e.message));
    return () => {
      live = false;
    };
  }, [client, result, kind, xCol, yCol, props.dark]);

  useEffect(() => () => plot.current?.destroy(), []);

  const savePng = () => {
    const canvas = host.current?.querySelector("canvas");
    if (!canvas) return;
    const a = document.createElement("a");
    a.href = canvas.toDataURL("image/png");
    a.download = `${result?.id ?? "plot"}-${kind}.png`;
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
        <button className="btn" onClick={savePng}>
          Save PNG
        </button>
        <span className="muted">{note}</span>
      </div>
      <div className="plot-host" ref={host} />
    </div>
  );
}
