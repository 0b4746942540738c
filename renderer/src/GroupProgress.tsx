// One task group's progress (name, bar, done/total): the run bar's and the dashboard's rows.
import type { RunProgress } from "../../engine/common/rpc.js";

export function GroupProgress({ p, className }: { p: RunProgress; className: string }) {
  return (
    <div className={`group-progress ${className}`} title={`${p.group}: ${p.done}/${p.total}`} data-group={p.group}>
      <span className="pg-name">{p.group}</span>
      <span className="pg-bar">
        <span style={{ width: `${p.total ? (100 * p.done) / p.total : 0}%` }} />
      </span>
      <span className="pg-num">
        {p.done}/{p.total}
      </span>
    </div>
  );
}
