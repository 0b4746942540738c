// The workbench pages' sessions: each page keeps an id across reloads (in its
// sessionStorage) and attaches with it. What a session's runs and views made
// belongs to it: a reloaded page gets its results and its last run back instead of
// the engine keeping them forever, and a session that no page has been attached to
// for a grace period is ended: its results released, its run cancelled.
import { BasinError, type SerializedError } from "../common/errors.js";
import type { ResultInfo, RunProgress, SessionRun, SessionState } from "../common/rpc.js";

/** How long a session outlives its last page (a reload reattaches well within it). */
export const DEFAULT_SESSION_GRACE_MS = 60_000;

interface RunRecord {
  runId: string;
  file: string;
  /** performance.now() when it started. */
  startedAt: number;
  status: SessionRun["status"];
  elapsedMs?: number;
  tasks?: number;
  error?: SerializedError;
  progress: Map<string, RunProgress>;
}

interface Session {
  id: string;
  /** Connections attached now. */
  connections: number;
  /** Every result it holds, by id. */
  owned: Set<string>;
  /** The last finished run's results. */
  results: ResultInfo[];
  run?: RunRecord;
  timer?: ReturnType<typeof setTimeout>;
  /** A page's: a run's results replace the last run's. A script's (a connection that never attached) keeps them all until it goes. */
  replaces: boolean;
}

/** What ending a session does in the engine. */
export interface SessionEnds {
  release(resultId: string): void;
  cancel(runId: string): void;
}

/**
 * @example
 * const sessions = new Sessions({ release: (id) => store.release(id), cancel: (id) => runs.get(id)?.abort() }, 60_000);
 * const state = sessions.attach("page-1");
 * sessions.own("page-1", view.id);
 * sessions.detach("page-1"); // the page went away: ended after the grace period unless it comes back
 */
export class Sessions {
  private readonly sessions = new Map<string, Session>();

  constructor(
    private readonly ends: SessionEnds,
    private readonly graceMs = DEFAULT_SESSION_GRACE_MS,
  ) {}

  /**
   * A connection attaches: the session (made on first use) and what it holds. A
   * connection's own session (`replaces` false) keeps every run's results until it ends.
   */
  attach(id: string, replaces = true): SessionState {
    if (typeof id !== "string" || !/^[\w-]{8,100}$/.test(id))
      throw new BasinError("BASIN_PLAN", "attach needs a session id of 8 to 100 letters, digits, _ or -");
    let s = this.sessions.get(id);
    if (!s) {
      s = { id, connections: 0, owned: new Set(), results: [], replaces };
      this.sessions.set(id, s);
    }
    clearTimeout(s.timer);
    s.timer = undefined;
    s.connections++;
    const keep = new Set(s.results.map((r) => r.id));
    const r = s.run;
    return {
      sessionId: id,
      results: s.results,
      others: [...s.owned].filter((x) => !keep.has(x)),
      ...(r
        ? {
            run: {
              runId: r.runId,
              file: r.file,
              status: r.status,
              elapsedMs: r.elapsedMs ?? Math.round(performance.now() - r.startedAt),
              ...(r.tasks !== undefined ? { tasks: r.tasks } : {}),
              ...(r.error ? { error: r.error } : {}),
              progress: [...r.progress.values()],
            },
          }
        : {}),
    };
  }

  /** A connection of the session closed: with none left, the grace period starts. */
  detach(id: string): void {
    const s = this.sessions.get(id);
    if (!s || s.connections === 0) return;
    if (--s.connections > 0) return;
    s.timer = setTimeout(() => this.end(s), this.graceMs);
    s.timer.unref?.();
  }

  /** The result belongs to the session (released with it). */
  own(id: string | undefined, resultId: string): void {
    if (id !== undefined) this.sessions.get(id)?.owned.add(resultId);
  }

  /** A result was released: no session holds it any more. */
  released(resultId: string): void {
    for (const s of this.sessions.values()) {
      s.owned.delete(resultId);
      if (s.results.some((r) => r.id === resultId)) s.results = s.results.filter((r) => r.id !== resultId);
    }
  }

  runStarted(id: string | undefined, runId: string, file: string): void {
    const s = id === undefined ? undefined : this.sessions.get(id);
    if (s) s.run = { runId, file, startedAt: performance.now(), status: "running", progress: new Map() };
  }

  progress(id: string | undefined, runId: string, p: RunProgress): void {
    const r = this.runOf(id, runId);
    r?.progress.set(p.group, p);
  }

  /**
   * The run finished: its results replace the session's earlier ones, which are released.
   * False when its session has ended meanwhile (nobody will look at them: release them).
   */
  runFinished(id: string | undefined, runId: string, results: ResultInfo[], elapsedMs: number, tasks: number): boolean {
    if (id === undefined) return true;
    const s = this.sessions.get(id);
    if (!s) return false;
    for (const r of results) s.owned.add(r.id);
    if (s.run?.runId !== runId) return true; // a newer run started meanwhile: these go when the page releases them
    const earlier = s.results;
    s.results = results;
    if (s.replaces) for (const r of earlier) if (s.owned.has(r.id)) this.ends.release(r.id);
    Object.assign(s.run, { status: "done", elapsedMs, tasks });
    return true;
  }

  runFailed(id: string | undefined, runId: string, error: SerializedError, elapsedMs: number): void {
    const r = this.runOf(id, runId);
    if (r) Object.assign(r, { status: error.code === "BASIN_CANCELLED" ? "cancelled" : "failed", elapsedMs, error });
  }

  /** Ends every session now (the engine is closing). */
  clear(): void {
    for (const s of [...this.sessions.values()]) clearTimeout(s.timer);
    this.sessions.clear();
  }

  private runOf(id: string | undefined, runId: string): Session["run"] {
    const r = id === undefined ? undefined : this.sessions.get(id)?.run;
    return r?.runId === runId ? r : undefined;
  }

  private end(s: Session): void {
    if (s.connections > 0 || this.sessions.get(s.id) !== s) return;
    this.sessions.delete(s.id);
    if (s.run?.status === "running") this.ends.cancel(s.run.runId);
    for (const id of [...s.owned]) this.ends.release(id);
  }
}
