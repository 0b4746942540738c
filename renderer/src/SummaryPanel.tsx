// The data explorer's summary (like Positron's): one card per column with its type,
// missing share, distinct count, min/max/mean/median/std and a histogram (numbers,
// dates) or its top values (strings, bools). Every number comes from the engine's
// profile plans over the whole result, run on the workers; a card says what is still
// being computed. Clicking a column's name shows it in the table.
import { memo } from "react";
import type { ColumnProfile, ResultInfo, WireValue } from "../../engine/common/rpc.js";
import { formatCell, formatStat } from "../common/format.js";
import { binEdgeSeconds, timeLabel } from "../common/time_labels.js";
import type { ProfileState } from "./state/use_profiles.js";

const count = (n: number) => n.toLocaleString("en-US");

/** A value of the column itself (min, max): as the grid shows it, every digit. */
function exact(v: WireValue | undefined): string {
  return v === undefined ? "…" : formatCell(v);
}

/** A histogram's bars, or the top values' bars, as a small SVG with a tooltip per bar. */
function Bars({ profile }: { profile: ColumnProfile }) {
  const h = profile.histogram;
  if (!h) return null;
  const peak = Math.max(1, ...h.counts);
  const W = 220,
    H = 40;
  const w = W / h.counts.length;
  const edge = (x: number) =>
    profile.type === "date"
      ? timeLabel(Math.round(x) * 86_400, "date")
      : profile.type === "timestamp"
        ? timeLabel(binEdgeSeconds(x, "timestamp"), "timestamp")
        : Number(x.toPrecision(4)).toLocaleString("en-US");
  return (
    <svg className="summary-hist" width={W} height={H} viewBox={`0 0 ${W} ${H}`} data-testid="summary-histogram">
      {h.counts.map((c, i) => (
        <rect key={i} x={i * w + 0.5} width={Math.max(1, w - 1)} y={H - (H * c) / peak} height={(H * c) / peak}>
          <title>
            {edge(h.edges[i])}–{edge(h.edges[i + 1])}: {count(c)} rows
          </title>
        </rect>
      ))}
    </svg>
  );
}

function TopValues({ profile }: { profile: ColumnProfile }) {
  const top = profile.top ?? [];
  const nonNull = profile.rows - profile.nulls;
  return (
    <div className="summary-top" data-testid="summary-top">
      {top.slice(0, 5).map((t) => (
        <div key={String(t.value)} className="summary-top-row" title={`${formatCell(t.value)}: ${count(t.count)} rows`}>
          <span className="summary-top-value">{formatCell(t.value)}</span>
          <span className="summary-top-bar">
            <span style={{ width: `${(100 * t.count) / Math.max(1, nonNull)}%` }} />
          </span>
          <span className="summary-top-count">{((100 * t.count) / Math.max(1, nonNull)).toFixed(1)}%</span>
        </div>
      ))}
    </div>
  );
}

/** A column's card; memoised: profiles arrive in batches, and only the cards they change render again. */
const Card = memo(function Card(props: {
  name: string;
  type: string;
  profile: ProfileState;
  counting: boolean;
  onPick(column: string): void;
}) {
  const p = typeof props.profile === "object" ? props.profile : undefined;
  const nullPct = p && p.rows > 0 ? (100 * p.nulls) / p.rows : 0;
  const rows: [string, string][] = p
    ? [
        ["missing", `${count(p.nulls)} (${nullPct < 0.1 && p.nulls > 0 ? "<0.1" : nullPct.toFixed(1)}%)`],
        ["distinct", p.distinct !== undefined ? count(p.distinct) : props.counting ? "counting…" : "…"],
        ["min", exact(p.min)],
        ["max", exact(p.max)],
        ...(p.mean !== undefined ? ([["mean", formatStat(p.mean)]] as [string, string][]) : []),
        ...(p.median !== undefined ? ([["median", formatStat(p.median)]] as [string, string][]) : []),
        ...(p.std !== undefined ? ([["std", formatStat(p.std)]] as [string, string][]) : []),
      ]
    : [];
  return (
    <div
      className="summary-card"
      data-summary-column={props.name}
      data-state={p ? (p.distinct !== undefined ? "done" : "counting") : "loading"}
    >
      <div className="summary-head">
        <button
          className="summary-name"
          onClick={() => props.onPick(props.name)}
          title={`${props.name}: show in the table`}
        >
          {props.name}
        </button>
        <span className="summary-type">{props.type}</span>
      </div>
      {!p ? (
        <div className="profile-loading summary-loading" title="profiling on the workers…" />
      ) : (
        <>
          {p.histogram ? <Bars profile={p} /> : p.top ? <TopValues profile={p} /> : null}
          <dl className="summary-stats">
            {rows.map(([k, v]) => (
              <div key={k} data-stat={k}>
                <dt>{k}</dt>
                <dd title={v}>{v}</dd>
              </div>
            ))}
          </dl>
        </>
      )}
    </div>
  );
});

export function SummaryPanel(props: {
  result: ResultInfo;
  profiles: Record<string, ProfileState>;
  counting: ReadonlySet<string>;
  onPick(column: string): void;
}) {
  const done = props.result.schema.filter((f) => typeof props.profiles[f.name] === "object").length;
  return (
    <aside className="summary" data-testid="summary" aria-label="column summary">
      <div className="summary-title">
        Summary · {props.result.schema.length} columns · {count(props.result.rows)} rows
        {done < props.result.schema.length ? (
          <span className="muted">
            {" "}
            · profiling {done}/{props.result.schema.length} on the workers…
          </span>
        ) : props.counting.size > 0 ? (
          <span className="muted"> · counting distinct values…</span>
        ) : (
          <span className="muted" data-testid="summary-complete">
            {" "}
            · exact, over all rows
          </span>
        )}
      </div>
      {props.result.schema.map((f) => (
        <Card
          key={f.name}
          name={f.name}
          type={f.type}
          profile={props.profiles[f.name]}
          counting={props.counting.has(f.name)}
          onPick={props.onPick}
        />
      ))}
    </aside>
  );
}
