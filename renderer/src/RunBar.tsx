// Run / Stop, the run's elapsed time and its progress per group of tasks.
import { GroupProgress } from "./GroupProgress.js";
import { useEffect, useState } from "react";
import type { RunProgress } from "../../engine/common/rpc.js";
import { formatMs } from "../common/format.js";

export interface RunState {
  runId: string | undefined;
  file: string;
  startedAt: number;
  status: "starting" | "running" | "done" | "failed" | "cancelled";
  progress: Record<string, RunProgress>;
  elapsedMs?: number;
  tasks?: number;
  /** Failed here because the engine could not be reached: what the engine says on reconnecting replaces it. */
  givenUp?: boolean;
}

export function RunBar(props: {
  run: RunState | undefined;
  canRun: boolean;
  connection: string;
  onRun(): void;
  onStop(): void;
}) {
  const { run } = props;
  const running = run?.status === "running" || run?.status === "starting";
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!running) return;
    const t = setInterval(() => setNow(Date.now()), 100);
    return () => clearInterval(t);
  }, [running]);
  // `now` is stale until the interval's first tick (it was last set when the previous
  // run ended): the clock is read again here, and a duration is never negative.
  const elapsed = run ? Math.max(0, run.elapsedMs ?? Math.max(now, Date.now()) - run.startedAt) : 0;
  return (
    <div className="runbar">
      <button
        className="btn primary"
        onClick={props.onRun}
        disabled={!props.canRun || running}
        title="Run the active file (Ctrl/Cmd+Enter)"
        data-testid="run"
      >
        ▶ Run
      </button>
      <button className="btn" onClick={props.onStop} disabled={!running} title="Stop the run" data-testid="stop">
        ■ Stop
      </button>
      {run && (
        <span className={`run-status ${run.status}`} data-testid="run-status">
          {run.status === "done"
            ? `✓ ${run.file} · ${formatMs(elapsed)} · ${run.tasks ?? 0} tasks`
            : run.status === "failed"
              ? `✕ failed after ${formatMs(elapsed)}`
              : run.status === "cancelled"
                ? `stopped after ${formatMs(elapsed)}`
                : `running ${run.file} · ${formatMs(elapsed)}`}
        </span>
      )}
      <div className="progress-groups">
        {run &&
          running &&
          Object.values(run.progress).map((p) => <GroupProgress key={p.group} p={p} className="progress-group" />)}
      </div>
      <span className="grow" />
      <span
        className={`conn ${props.connection}`}
        title={`engine connection: ${props.connection}`}
        data-testid="connection"
      >
        ● {props.connection === "open" ? "engine" : props.connection}
      </span>
    </div>
  );
}
