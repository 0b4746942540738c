// A column's profile in its header: a tiny histogram (numbers, dates) or the top
// value's share (strings, bools), with the full numbers in the tooltip.
import type { ColumnProfile } from "../../engine/common/rpc.js";
import { formatCell } from "../common/format.js";

export function ProfileBadge({ profile }: { profile: ColumnProfile | "loading" | undefined }) {
  if (profile === undefined) return <span className="profile" />;
  if (profile === "loading") return <span className="profile profile-loading" title="profiling…" />;
  const nullPct = profile.rows ? (100 * profile.nulls) / profile.rows : 0;
  const lines = [
    `${profile.rows.toLocaleString("en-US")} rows, ${profile.nulls.toLocaleString("en-US")} null (${nullPct.toFixed(1)}%)`,
    `min ${formatCell(profile.min)}`,
    `max ${formatCell(profile.max)}`,
  ];
  if (profile.top)
    for (const t of profile.top.slice(0, 5)) lines.push(`${formatCell(t.value)}: ${t.count.toLocaleString("en-US")}`);
  const counts = profile.histogram?.counts ?? profile.top?.map((t) => t.count) ?? [];
  const peak = Math.max(1, ...counts);
  return (
    <span className="profile" title={lines.join("\n")} data-testid="profile">
      <svg width="48" height="14" viewBox={`0 0 ${Math.max(1, counts.length)} 14`} preserveAspectRatio="none">
        {counts.map((c, i) => (
          <rect key={i} x={i + 0.08} width={0.84} y={14 - (14 * c) / peak} height={(14 * c) / peak} />
        ))}
      </svg>
      {profile.nulls > 0 && <span className="profile-nulls">{nullPct < 0.1 ? "<0.1" : nullPct.toFixed(0)}% ∅</span>}
    </span>
  );
}
