// The cluster dashboard (like Dask's): a task stream with one lane per worker and a
// bar per task coloured by what it did (compute, transfer, spill, disk read); the
// running pipeline's progress per task group; memory per tier (device, host, disk)
// with their limits and per worker where workers report it; spill counters; a GPU
// panel (per GPU: Basin's memory, transfers, and nvidia-smi's utilisation and device
// memory, or why those are not shown), or why there is no GPU; and the last runs with the plans they ran
// (explain()). Polled every second while shown; the task stream by cursor, so each
// span crosses the wire once.
import { useEffect, useRef, useState } from "react";
import type {
  ClusterStatus,
  EngineClient,
  GpuMemoryStatus,
  RunProgress,
  RunRecord,
  TaskKind,
  TaskSpan,
} from "../../engine/common/rpc.js";
import { formatBytes, formatMs } from "../common/format.js";
import { GroupProgress } from "./GroupProgress.js";
import { fitWindow, KIND_COLOURS, layoutLanes, MAX_WINDOW_MS, mergeSpans } from "../common/task_lanes.js";

const LANE_H = 22;

const count = (n: number) => n.toLocaleString("en-US");
/** A bar of the store's own work (spilling, reading spilled tables back) rather than a task's. */
const storeBar = (s: TaskSpan) => s.kind === "spill" || s.group.startsWith("read back");

function TaskStreamView({ spans, workers, now }: { spans: TaskSpan[]; workers: string[]; now: number }) {
  const windowMs = fitWindow(spans, now);
  const { lanes, bars } = layoutLanes(spans, workers, now, windowMs);
  const height = Math.max(1, lanes.length) * LANE_H;
  const ticks = [0, 0.2, 0.4, 0.6, 0.8, 1];
  return (
    <section className="dash-section" data-testid="task-stream">
      <h3>
        Task stream{" "}
        <span className="muted">
          · the last {(windowMs / 1000).toFixed(windowMs < 10_000 ? 1 : 0)} s (fitted to the recent tasks, up to{" "}
          {MAX_WINDOW_MS / 1000} s) · one lane per worker
        </span>
      </h3>
      <div className="stream">
        <div className="stream-lanes">
          {lanes.map((l) => (
            <div key={l} className="stream-lane-name" style={{ height: LANE_H }} data-lane={l}>
              {l}
            </div>
          ))}
        </div>
        <div className="stream-plot">
          <svg width="100%" height={height} viewBox={`0 0 1000 ${height}`} preserveAspectRatio="none">
            {lanes.map((l, i) => (
              <rect key={l} x={0} y={i * LANE_H} width={1000} height={LANE_H} className={i % 2 ? "lane odd" : "lane"} />
            ))}
            {bars.map((b, i) => (
              <rect
                key={i}
                x={b.x0 * 1000}
                // The store's spills and read-backs during a task: the lower half, over its bar.
                y={b.lane * LANE_H + (storeBar(b.span) ? LANE_H / 2 : 4)}
                width={Math.max(1.5, (b.x1 - b.x0) * 1000)}
                height={storeBar(b.span) ? LANE_H / 2 - 4 : LANE_H - 8}
                fill={KIND_COLOURS[b.span.kind]}
                data-kind={b.span.kind}
                data-worker={b.span.worker}
              >
                <title>
                  {b.span.group} · {b.span.kind} · {formatMs(b.span.end - b.span.start)} on {b.span.worker}
                </title>
              </rect>
            ))}
          </svg>
          <div className="stream-axis">
            {ticks.map((t) => (
              <span key={t} style={{ left: `${100 - 100 * t}%` }}>
                {t === 0 ? "now" : `−${((t * windowMs) / 1000).toFixed(windowMs < 10_000 ? 1 : 0)} s`}
              </span>
            ))}
          </div>
        </div>
      </div>
      <div className="stream-legend" data-testid="task-legend">
        {(Object.keys(KIND_COLOURS) as TaskKind[]).map((k) => (
          <span key={k}>
            <i style={{ background: KIND_COLOURS[k] }} /> {k}
          </span>
        ))}
        <span className="muted"> · spill and read-back bars: the store's time while the task on that worker ran</span>
      </div>
    </section>
  );
}

/** A labelled bar of used against limit; `text` replaces the "used / limit" bytes on the right. */
function Meter(props: { label: string; used: number; limit: number; testid?: string; tier?: string; text?: string }) {
  const pct = props.limit > 0 ? Math.min(100, (100 * props.used) / props.limit) : 0;
  return (
    <div className="meter" data-testid={props.testid} data-tier={props.tier}>
      <div className="meter-label">
        <span>{props.label}</span>
        <span className="muted">
          {props.text ?? `${formatBytes(props.used)} / ${props.limit > 0 ? formatBytes(props.limit) : "no limit"}`}
        </span>
      </div>
      <div className="meter-bar">
        <span style={{ width: `${props.limit > 0 ? pct : 0}%` }} className={pct > 90 ? "hot" : ""} />
      </div>
    </div>
  );
}

/** nvidia-smi's view of a GPU (utilisation, the device's memory in use by every process), or why there is none. */
function GpuReading({ g, why }: { g: GpuMemoryStatus; why: string | undefined }) {
  const r = g.reading;
  if (!r)
    return (
      <div className="muted" data-testid={`gpu-${g.device}-utilisation`}>
        utilisation: {why || "not reported by this cluster"}
      </div>
    );
  return (
    <>
      <Meter
        label="utilisation"
        used={r.utilisation ?? 0}
        limit={r.utilisation === null ? 0 : 100}
        text={r.utilisation === null ? "[N/A] (the board does not report it)" : `${r.utilisation}%`}
        testid={`gpu-${g.device}-utilisation`}
      />
      {r.memoryUsed !== null && r.memoryTotal !== null && (
        <Meter
          label="device memory, all processes"
          used={r.memoryUsed}
          limit={r.memoryTotal}
          testid={`gpu-${g.device}-device-memory`}
        />
      )}
    </>
  );
}

function Progress({ progress, file }: { progress: RunProgress[]; file: string | undefined }) {
  return (
    <section className="dash-section" data-testid="group-progress">
      <h3>
        Progress per task group <span className="muted">· {file ?? "no run yet"}</span>
      </h3>
      {progress.length === 0 && <div className="muted">No run has reported progress yet.</div>}
      {progress.map((p) => (
        <GroupProgress key={p.group} p={p} className="progress-row" />
      ))}
    </section>
  );
}

function History({ runs }: { runs: RunRecord[] }) {
  const [open, setOpen] = useState<string | undefined>();
  const shown = runs.find((r) => r.runId === open) ?? runs[0];
  return (
    <section className="dash-section dash-history" data-testid="run-history">
      <h3>
        Last runs <span className="muted">· click one for the plan it ran</span>
      </h3>
      {runs.length === 0 && <div className="muted">No runs yet.</div>}
      <div className="history-list">
        {runs.map((r) => (
          <button
            key={r.runId}
            className={`history-row${shown?.runId === r.runId ? " active" : ""}`}
            onClick={() => setOpen(r.runId)}
            data-run={r.runId}
          >
            <span className={`history-status ${r.status}`}>
              {r.status === "done" ? "✓" : r.status === "running" ? "…" : "✗"}
            </span>
            <span className="history-file">{r.file}</span>
            <span className="muted">
              {new Date(r.startedAt).toLocaleTimeString("en-GB")} · {formatMs(r.elapsedMs)}
              {r.tasks > 0 ? ` · ${count(r.tasks)} tasks` : ""}
              {r.results[0]?.rows !== undefined ? ` · ${count(r.results[0].rows)} rows` : ""}
            </span>
          </button>
        ))}
      </div>
      {shown && (
        <div className="explain" data-testid="explain">
          {shown.error && <div className="error-text">{shown.error}</div>}
          {shown.results.map((x, i) => (
            <div key={i}>
              <div className="muted">
                {x.name ?? "default export"}
                {x.rows !== undefined ? ` · ${count(x.rows)} rows` : ""} — explain()
              </div>
              <pre>{x.explain}</pre>
            </div>
          ))}
        </div>
      )}
    </section>
  );
}

export function ClusterPanel({
  client,
  progress,
  runFile,
}: {
  client: EngineClient;
  /** The current (or last) run's progress per task group. */
  progress?: RunProgress[];
  runFile?: string;
}) {
  const [status, setStatus] = useState<ClusterStatus | undefined>();
  const [runs, setRuns] = useState<RunRecord[]>([]);
  const [error, setError] = useState<string | undefined>();
  const spans = useRef<TaskSpan[]>([]);
  const cursor = useRef(0);
  useEffect(() => {
    let live = true;
    let tick = 0;
    const poll = async () => {
      try {
        const s = await client.cluster(cursor.current);
        if (!live) return;
        if (s.stream) {
          spans.current = mergeSpans(spans.current, s.stream);
          cursor.current = s.stream.next;
        }
        setStatus(s);
        setError(undefined);
        // The history (with its plans' text) every other second: it changes only when a run does.
        if (tick++ % 2 === 0) {
          const r = await client.runHistory();
          if (live) setRuns(r);
        }
      } catch (e) {
        if (live) setError((e as Error).message);
      }
    };
    void poll();
    const timer = setInterval(() => void poll(), 1000);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [client]);
  if (error) return <div className="empty error-text">{error}</div>;
  if (!status) return <div className="empty">Connecting…</div>;
  const busy = status.workers.filter((w) => w.busy).length;
  const m = status.memory;
  return (
    <div className="cluster" data-testid="cluster">
      <div className="cluster-stats">
        <div className="stat">
          <div className="stat-v">{status.workers.length}</div>
          <div className="stat-k">{status.kind} workers</div>
        </div>
        <div className="stat">
          <div className="stat-v">{busy}</div>
          <div className="stat-k">busy</div>
        </div>
        <div className="stat">
          <div className="stat-v">{formatBytes(status.store.bytes)}</div>
          <div className="stat-k">store ({status.store.tables} tables)</div>
        </div>
        <div className="stat">
          <div className="stat-v">{formatBytes(status.store.peakBytes)}</div>
          <div className="stat-k">peak</div>
        </div>
      </div>
      {status.dask && (
        <div className="muted" data-testid="dask-scheduler">
          Dask scheduler {status.dask.scheduler} · dashboard {status.dask.dashboard}
        </div>
      )}
      {status.slurm && (
        <div className="muted" data-testid="slurm-jobs">
          SLURM jobs{" "}
          {status.slurm.jobs
            .map((j) => `${j.id} ${j.state.toLowerCase()}${j.scheduler ? " (scheduler)" : ""}`)
            .join(" · ") || "none"}
        </div>
      )}
      <div className="dash-grid">
        {status.stream ? (
          <TaskStreamView spans={spans.current} workers={status.workers.map((w) => w.name)} now={status.stream.now} />
        ) : (
          <section className="dash-section muted" data-testid="task-stream">
            Task stream: this cluster's scheduler keeps it
            {status.dask ? ` (Dask's dashboard: ${status.dask.dashboard})` : ""}.
          </section>
        )}
        <Progress progress={progress ?? []} file={runFile} />
        <section className="dash-section" data-testid="memory-tiers">
          <h3>Memory per tier</h3>
          {m ? (
            <>
              <Meter label="host (RAM)" used={m.host.bytes} limit={m.host.limit} tier="host" />
              <Meter
                label={`disk (spill: ${m.disk.directory || "none"})`}
                used={m.disk.bytes}
                limit={m.disk.limit}
                tier="disk"
              />
              <Meter
                label="device (GPU)"
                used={m.device.bytes}
                limit={(m.gpus ?? []).reduce((n, g) => n + Math.max(0, g.limit), 0)}
                tier="device"
              />
              {m.overLimit && (
                <div className="error-text">Over the host limit even after spilling: new tasks wait.</div>
              )}
            </>
          ) : (
            <div className="muted">This cluster does not report tiers.</div>
          )}
          <h3>Memory per worker</h3>
          <div className="workers">
            {status.workers.map((w) => (
              <div key={w.name} className={`worker${w.busy ? " busy" : ""}`} title={w.busy ? "running a task" : "idle"}>
                <span className="worker-dot" />
                {w.name} <span className="muted">{w.kind}</span>
                {w.memoryLimit !== undefined ? (
                  <span className="muted">
                    {" "}
                    {formatBytes(w.memory ?? 0)} / {formatBytes(w.memoryLimit)}
                  </span>
                ) : (
                  <span className="muted"> · shares the host store</span>
                )}
                {w.tasks !== undefined && <span className="muted"> · {w.tasks} tasks</span>}
              </div>
            ))}
          </div>
        </section>
        {m && (
          <section className="dash-section" data-testid="spill-counters">
            <h3>Spilling</h3>
            <table className="dash-table">
              <tbody>
                <tr>
                  <td>spilled to disk</td>
                  <td>{count(m.spilled.tables)} tables</td>
                  <td>{formatBytes(m.spilled.bytes)}</td>
                  <td>{formatMs(1000 * m.spilled.seconds)}</td>
                </tr>
                <tr>
                  <td>read back</td>
                  <td>{count(m.unspilled.tables)} tables</td>
                  <td>{formatBytes(m.unspilled.bytes)}</td>
                  <td>{formatMs(1000 * m.unspilled.seconds)}</td>
                </tr>
                <tr>
                  <td>on disk now</td>
                  <td>{count(m.disk.tables)} tables</td>
                  <td>{formatBytes(m.disk.bytes)}</td>
                  <td />
                </tr>
              </tbody>
            </table>
          </section>
        )}
        <section className="dash-section" data-testid="gpu-panel">
          <h3>GPUs</h3>
          {(m?.gpus ?? []).length === 0 ? (
            <div className="muted" data-testid="gpu-none">
              No GPU: {status.gpu?.why || "this cluster does not report GPUs"}
            </div>
          ) : (
            m!.gpus!.map((g) => (
              <div key={g.device} data-testid={`gpu-${g.device}`} className={g.broken ? "error-text" : ""}>
                <Meter label={`GPU ${g.device}`} used={g.bytes} limit={g.limit} />
                <GpuReading g={g} why={status.gpu?.utilisation} />
                <div className="muted">
                  {g.cachedColumns} cached columns
                  {g.spilledColumns > 0 && ` · ${g.spilledColumns} spilled to host (${formatBytes(g.spilledBytes)})`}
                  {g.uploads !== undefined &&
                    ` · ${count(g.uploads)} uploads (${formatBytes(g.uploadBytes ?? 0)}), ${count(g.downloads ?? 0)} downloads (${formatBytes(g.downloadBytes ?? 0)})`}
                  {g.chains !== undefined && ` · ${count(g.chains)} step chains run`}
                  {(g.keptOutputs ?? 0) > 0 &&
                    ` · ${count(g.keptOutputs!)} outputs kept on the GPU` +
                      ((g.keptSpills ?? 0) > 0 ? ` (${count(g.keptSpills!)} copied to host for room)` : "")}
                  {g.broken && ` · unusable, running on the CPU: ${g.broken}`}
                </div>
              </div>
            ))
          )}
        </section>
        <History runs={runs} />
      </div>
    </div>
  );
}
