// The cluster's workers and the native store's memory, polled every second while shown.
import { useEffect, useState } from "react";
import type { ClusterStatus, EngineClient } from "../../engine/common/rpc.js";
import { formatBytes } from "../common/format.js";

export function ClusterPanel({ client }: { client: EngineClient }) {
  const [status, setStatus] = useState<ClusterStatus | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    let live = true;
    const poll = () =>
      client.cluster().then(
        (s) => live && (setStatus(s), setError(undefined)),
        (e: Error) => live && setError(e.message),
      );
    void poll();
    const timer = setInterval(poll, 1000);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [client]);
  if (error) return <div className="empty error-text">{error}</div>;
  if (!status) return <div className="empty">Connecting…</div>;
  const busy = status.workers.filter((w) => w.busy).length;
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
      {status.memory?.gpus?.map((g) => (
        <div key={g.device} className={g.broken ? "error-text" : "muted"} data-testid={`gpu-${g.device}`}>
          GPU {g.device}: {formatBytes(g.bytes)} / {formatBytes(g.limit)} on the device, {g.cachedColumns} cached
          columns
          {g.spilledColumns > 0 && `, ${g.spilledColumns} spilled to host (${formatBytes(g.spilledBytes)})`}
          {g.broken && ` · unusable, running on the CPU: ${g.broken}`}
        </div>
      ))}
      <div className="workers">
        {status.workers.map((w) => (
          <div key={w.name} className={`worker${w.busy ? " busy" : ""}`} title={w.busy ? "running a task" : "idle"}>
            <span className="worker-dot" />
            {w.name} <span className="muted">{w.kind}</span>
            {w.memoryLimit !== undefined && (
              <span className="muted">
                {" "}
                {formatBytes(w.memory ?? 0)} / {formatBytes(w.memoryLimit)}
              </span>
            )}
            {w.tasks !== undefined && <span className="muted"> · {w.tasks} tasks</span>}
          </div>
        ))}
      </div>
    </div>
  );
}
