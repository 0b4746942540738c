// The engine side of the workbench contract (engine/common/rpc.ts): runs
// pipeline files of a workspace on a cluster, keeps their results for paging, and
// reports progress as events. Transports (WebSocket, Electron) wrap one of these.
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { dirname, extname } from "node:path";
import type { Cluster } from "../cluster/cluster.js";
import { defaultCluster, localPart } from "../cluster/default.js";
import type { ArrayResult } from "../run/run_plan.js";
import { BasinError } from "../common/errors.js";
import type { DataFrame } from "../api/dataframe.js";
import { readArrow } from "../api/read_arrow.js";
import { readCsv } from "../api/read_csv.js";
import { readJson } from "../api/read_json.js";
import { readParquet } from "../api/read_parquet.js";
import type {
  ArrayInfo,
  Bins2d,
  Bins2dView,
  ClusterStatus,
  ColumnProfile,
  EngineClient,
  EngineEvent,
  ExportFormat,
  ExportSummary,
  OpenedFile,
  Page,
  ResultFilter,
  ResultInfo,
  ResultSample,
  ResultSort,
  RunRecord,
  SessionState,
  WorkspaceInfo,
} from "../common/rpc.js";
import type { ArrayNode } from "../common/array_plan.js";
import { arrayHeatmap, arrayTable } from "./array_result.js";
import { native } from "../native/addon.js";
import { explainPlan } from "../run/explain.js";
import { runPipeline } from "../session/run_pipeline.js";
import { ResultStore } from "./results.js";
import { Sessions } from "./sessions.js";
import { Workspace } from "./workspace.js";

export interface EngineServiceOptions {
  /** The folder the workbench opens. */
  root: string;
  /**
   * Where runs go (default: the process's local cluster). Results stay in this
   * process either way: they are paged, viewed and exported here, and arrays run on
   * the local cluster (a Dask cluster runs frames only).
   */
  cluster?: Cluster;
  /** An event for the pages of `session` (a run's events), or for every page (no session). */
  emit: (e: EngineEvent, session?: string) => void;
  /** How long a page's session outlives its last connection (default 60 s); then its results are released. */
  sessionGraceMs?: number;
}

/** Runs the dashboard's history keeps. */
export const HISTORY_RUNS = 20;

/** Rows a preview of a data file shows. */
export const PREVIEW_ROWS = 1000;

/** The readers a preview uses, by file extension. */
function previewFrame(file: string, path: string): DataFrame {
  switch (extname(file).toLowerCase()) {
    case ".csv":
      return readCsv(file);
    case ".tsv":
      return readCsv(file, { delimiter: "\t" });
    case ".parquet":
      return readParquet(file);
    case ".json":
    case ".ndjson":
    case ".jsonl":
      return readJson(file);
    case ".arrow":
    case ".ipc":
    case ".feather":
      return readArrow(file);
    default:
      throw new BasinError(
        "BASIN_IO",
        `${path}: only data files can be previewed (.csv, .tsv, .parquet, .json/.ndjson, .arrow); open it in the editor instead`,
      );
  }
}

/**
 * @example
 * const engine = new EngineService({ root: ".", emit: (e) => console.log(e) });
 * await engine.run("examples/taxi.ts");
 */
export class EngineService implements EngineClient {
  readonly workspaceFolder: Workspace;
  private readonly results: ResultStore;
  private readonly runs = new Map<string, AbortController>();
  private readonly sessions: Sessions;
  /** The last runs, newest first. */
  private readonly history: RunRecord[] = [];
  private counter = 0;

  constructor(private readonly options: EngineServiceOptions) {
    this.workspaceFolder = new Workspace(options.root);
    // Results stay here, and their views run here, wherever runs go.
    this.results = new ResultStore({ cluster: localPart(options.cluster) });
    this.sessions = new Sessions(
      { release: (id) => void this.release(id).catch(() => {}), cancel: (id) => void this.cancel(id) },
      options.sessionGraceMs,
    );
  }

  /** One page's connection: what it makes belongs to the session it attaches to. */
  connection(): EngineConnection {
    return new EngineConnection(this);
  }

  async workspace(): Promise<WorkspaceInfo> {
    return this.workspaceFolder.list();
  }

  async readFile(path: string): Promise<string> {
    return this.workspaceFolder.read(path);
  }

  async writeFile(path: string, text: string): Promise<void> {
    if (typeof text !== "string") throw new BasinError("BASIN_IO", "writeFile needs the file's text");
    this.workspaceFolder.create(path, text);
  }

  async openFile(path: string): Promise<OpenedFile> {
    return this.workspaceFolder.open(path);
  }

  async saveFile(path: string, text: string, version?: string): Promise<{ version: string }> {
    if (typeof text !== "string") throw new BasinError("BASIN_IO", "saveFile needs the file's text");
    return this.workspaceFolder.save(path, text, typeof version === "string" ? version : undefined);
  }

  /** Without a connection (engine_process, tests), attaching only reports the session; see connection(). */
  async attach(sessionId: string): Promise<SessionState> {
    const state = this.sessions.attach(sessionId);
    this.sessions.detach(sessionId);
    return state;
  }

  /** @internal EngineConnection's side of attach/detach (`replaces` false: a connection's own session, see Sessions.attach). */
  attachSession(sessionId: string, replaces = true): SessionState {
    return this.sessions.attach(sessionId, replaces);
  }

  /** @internal */
  detachSession(sessionId: string): void {
    this.sessions.detach(sessionId);
  }

  preview(path: string, rows?: number): Promise<ResultInfo> {
    return this.previewFor(undefined, path, rows);
  }

  /** @internal */
  async previewFor(session: string | undefined, path: string, rows = PREVIEW_ROWS): Promise<ResultInfo> {
    if (!Number.isInteger(rows) || rows < 1 || rows > 100_000)
      throw new BasinError("BASIN_PLAN", `preview rows must be an integer in 1..100000, got ${rows}`);
    const file = this.workspaceFolder.path(path);
    if (!existsSync(file)) throw new BasinError("BASIN_IO", `${path}: no such file in the workspace`);
    const info = await this.results.keepFrame(previewFrame(file, path).head(rows), `preview:${path}`, { name: path });
    this.sessions.own(session, info.id);
    return info;
  }

  sample(resultId: string, n: number, columns: string[]): Promise<ResultSample> {
    return this.results.sample(resultId, n, columns);
  }

  /** Starts a run and returns at once; its outcome arrives as runFinished or runFailed. */
  run(path: string, source?: string): Promise<{ runId: string }> {
    return this.runFor(undefined, path, source);
  }

  /** @internal A run of `session` (its events go to that session's pages, its results belong to it). */
  async runFor(session: string | undefined, path: string, source?: string): Promise<{ runId: string }> {
    const file = this.workspaceFolder.path(path);
    const runId = `run-${++this.counter}`;
    const ac = new AbortController();
    this.runs.set(runId, ac);
    const emit = (e: EngineEvent) => this.options.emit(e, session);
    this.sessions.runStarted(session, runId, path);
    emit({ type: "runStarted", runId, file: path });
    const t0 = performance.now();
    const elapsedMs = () => Math.round(performance.now() - t0);
    const record: RunRecord = {
      runId,
      file: path,
      status: "running",
      startedAt: Date.now(),
      elapsedMs: 0,
      tasks: 0,
      results: [],
    };
    this.history.unshift(record);
    this.history.splice(HISTORY_RUNS);
    const ended = (status: RunRecord["status"], tasks: number, error?: string) => {
      Object.assign(record, { status, tasks, elapsedMs: elapsedMs() }, error === undefined ? {} : { error });
    };
    void (async () => {
      try {
        // The default export first, then each show() in call order; a failure frees what was kept.
        const kept: ResultInfo[] = [];
        let tasks = 0;
        try {
          await runPipeline(
            file,
            {
              cluster: this.options.cluster,
              source: typeof source === "string" ? source : undefined,
              isolate: true,
              signal: ac.signal,
              before: (next, name) => {
                // The plan as explain() prints it, for the dashboard's history (a failure to explain is not the run's).
                let explain: string;
                try {
                  explain =
                    next.kind === "frame"
                      ? explainPlan(next.plan.root, { cluster: this.options.cluster })
                      : "(an array: its chunks' task graph)";
                } catch (e) {
                  explain = `(no explanation: ${(e as Error).message})`;
                }
                record.results.push({ ...(name === undefined ? {} : { name }), explain });
              },
              onProgress: (progress) => {
                this.sessions.progress(session, runId, progress);
                emit({ type: "progress", runId, progress });
              },
            },
            (r) => {
              if (r.kind === "array") kept.push(this.keepArray(r.node, r.array, runId));
              else if (r.kind === "frame") {
                tasks += r.parts.tasks;
                if (r.parts.skippedLines > 0)
                  this.options.emit({
                    type: "log",
                    level: "warn",
                    text: `${path}${r.name === undefined ? "" : ` (${r.name})`}: skipped ${r.parts.skippedLines} malformed line(s)`,
                  });
                // Kept as the result's parts: a result larger than the memory limit stays spillable.
                kept.push(
                  this.results.keep(r.parts.refs, runId, {
                    name: r.name,
                    kind: r.plan.root.kind === "fromBag" && r.plan.root.raw ? "bag" : undefined,
                  }),
                );
              }
            },
          );
        } catch (e) {
          for (const r of kept) this.results.release(r.id);
          throw e;
        }
        const [result, ...shown] = kept;
        kept.forEach((r, i) => record.results[i] && (record.results[i].rows = r.rows));
        ended("done", tasks);
        const ms = elapsedMs();
        if (!this.sessions.runFinished(session, runId, kept, ms, tasks)) {
          for (const r of kept) this.results.release(r.id); // its page is gone for good
          return;
        }
        emit({ type: "runFinished", runId, result, ...(shown.length > 0 ? { shown } : {}), elapsedMs: ms, tasks });
      } catch (e) {
        const error = BasinError.from(e).toJSON();
        ended(ac.signal.aborted ? "cancelled" : "failed", 0, error.message);
        this.sessions.runFailed(session, runId, error, elapsedMs());
        emit({ type: "runFailed", runId, error, elapsedMs: elapsedMs() });
      } finally {
        this.runs.delete(runId);
      }
    })();
    return { runId };
  }

  /** Keeps a computed array default export's elements as a table result of kind "array". */
  private keepArray(node: ArrayNode, r: ArrayResult, runId: string): ResultInfo {
    const ref = native().tableFromJs(arrayTable(r));
    const heatmap = arrayHeatmap(r);
    const array: ArrayInfo = {
      shape: r.shape,
      dtype: r.dtype,
      chunks: node.kind === "mask" ? [[r.shape[0]]] : node.chunks.map((c) => [...c]),
      ...(heatmap ? { heatmap } : {}),
    };
    return this.results.keep(ref, runId, { kind: "array", array });
  }

  async cancel(runId: string): Promise<void> {
    this.runs.get(runId)?.abort("cancelled");
  }

  async page(resultId: string, offset: number, limit: number, columns?: string[]): Promise<Page> {
    return this.results.page(resultId, offset, limit, columns);
  }

  view(resultId: string, sort: ResultSort[], filters: ResultFilter[]): Promise<ResultInfo> {
    return this.viewFor(undefined, resultId, sort, filters);
  }

  /** @internal */
  async viewFor(
    session: string | undefined,
    resultId: string,
    sort: ResultSort[],
    filters: ResultFilter[],
  ): Promise<ResultInfo> {
    const info = await this.results.view(resultId, sort ?? [], filters ?? []);
    this.sessions.own(session, info.id);
    return info;
  }

  profile(resultId: string, column: string): Promise<ColumnProfile> {
    return this.results.profile(resultId, column);
  }

  countDistinct(resultId: string, column: string): Promise<number> {
    return this.results.countDistinct(resultId, column);
  }

  bins2d(resultId: string, x: string, y: string, xBins: number, yBins: number, view?: Bins2dView): Promise<Bins2d> {
    return this.results.bins2d(resultId, x, y, xBins, yBins, view ?? undefined);
  }

  async runHistory(): Promise<RunRecord[]> {
    return this.history.map((r) => ({
      ...r,
      elapsedMs: r.status === "running" ? Date.now() - r.startedAt : r.elapsedMs,
      results: r.results.map((x) => ({ ...x })),
    }));
  }

  async release(resultId: string): Promise<void> {
    this.sessions.released(resultId);
    this.results.release(resultId);
  }

  /** Writes a result into the workspace as CSV or Parquet (the path is checked to stay inside it). */
  async exportResult(resultId: string, path: string, format: ExportFormat): Promise<ExportSummary> {
    const file = this.workspaceFolder.path(path);
    // Like saving a file, exporting into a new subfolder creates it.
    if (!existsSync(dirname(file))) mkdirSync(dirname(file), { recursive: true });
    const out = await this.results.export(resultId, file, format, (progress) =>
      this.options.emit({ type: "exportProgress", path, progress }),
    );
    this.options.emit({ type: "log", level: "info", text: `exported ${out.rows} rows to ${path} (${format})` });
    return { path, rows: out.rows, bytes: out.bytes };
  }

  cluster(since?: number): Promise<ClusterStatus> {
    return (this.options.cluster ?? defaultCluster()).clusterStatus(typeof since === "number" ? since : undefined);
  }

  /** Cancels every run and frees every result. */
  async close(): Promise<void> {
    for (const ac of this.runs.values()) ac.abort("closing");
    while (this.runs.size > 0) await new Promise((r) => setTimeout(r, 10));
    this.sessions.clear();
    this.results.clear();
  }
}

/**
 * One page's connection to the engine (a WebSocket, the desktop window's port): the
 * contract, with the runs, views and previews it makes belonging to the session it
 * attached to. Closing it starts that session's grace period.
 *
 * @example
 * const conn = engine.connection();
 * ws.on("message", (m) => void dispatch(conn, JSON.parse(String(m))).then(send));
 * ws.on("close", () => conn.close());
 */
export class EngineConnection implements EngineClient {
  /** The session attached to, if any. */
  session: string | undefined;

  constructor(private readonly engine: EngineService) {}

  async attach(sessionId: string): Promise<SessionState> {
    const state = this.engine.attachSession(sessionId);
    if (this.session !== undefined) this.engine.detachSession(this.session);
    this.session = sessionId;
    return state;
  }

  /**
   * The session what this connection makes belongs to: the one attached to, else one
   * of its own (a script of the RPC contract that never attaches), whose results are
   * kept, run after run, until a grace period after the connection closes.
   */
  private owner(): string {
    if (this.session === undefined) {
      const id = `connection-${randomUUID()}`;
      this.engine.attachSession(id, false);
      this.session = id;
    }
    return this.session;
  }

  /** The page went away (or reloads). */
  close(): void {
    if (this.session !== undefined) this.engine.detachSession(this.session);
    this.session = undefined;
  }

  workspace(): Promise<WorkspaceInfo> {
    return this.engine.workspace();
  }
  readFile(path: string): Promise<string> {
    return this.engine.readFile(path);
  }
  writeFile(path: string, text: string): Promise<void> {
    return this.engine.writeFile(path, text);
  }
  openFile(path: string): Promise<OpenedFile> {
    return this.engine.openFile(path);
  }
  saveFile(path: string, text: string, version?: string): Promise<{ version: string }> {
    return this.engine.saveFile(path, text, version);
  }
  preview(path: string, rows?: number): Promise<ResultInfo> {
    return this.engine.previewFor(this.owner(), path, rows);
  }
  sample(resultId: string, n: number, columns: string[]): Promise<ResultSample> {
    return this.engine.sample(resultId, n, columns);
  }
  run(path: string, source?: string): Promise<{ runId: string }> {
    return this.engine.runFor(this.owner(), path, source);
  }
  cancel(runId: string): Promise<void> {
    return this.engine.cancel(runId);
  }
  page(resultId: string, offset: number, limit: number, columns?: string[]): Promise<Page> {
    return this.engine.page(resultId, offset, limit, columns);
  }
  view(resultId: string, sort: ResultSort[], filters: ResultFilter[]): Promise<ResultInfo> {
    return this.engine.viewFor(this.owner(), resultId, sort, filters);
  }
  profile(resultId: string, column: string): Promise<ColumnProfile> {
    return this.engine.profile(resultId, column);
  }
  release(resultId: string): Promise<void> {
    return this.engine.release(resultId);
  }
  countDistinct(resultId: string, column: string): Promise<number> {
    return this.engine.countDistinct(resultId, column);
  }
  bins2d(resultId: string, x: string, y: string, xBins: number, yBins: number, view?: Bins2dView): Promise<Bins2d> {
    return this.engine.bins2d(resultId, x, y, xBins, yBins, view);
  }
  runHistory(): Promise<RunRecord[]> {
    return this.engine.runHistory();
  }
  cluster(since?: number): Promise<ClusterStatus> {
    return this.engine.cluster(since);
  }
  exportResult(resultId: string, path: string, format: ExportFormat): Promise<ExportSummary> {
    return this.engine.exportResult(resultId, path, format);
  }
}
