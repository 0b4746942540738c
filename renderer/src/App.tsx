// The workbench: explorer, editor tabs, run bar, and the bottom panel (results,
// plot, problems, output, cluster). Talks to the engine only through EngineClient.
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import type { EngineEvent, ExportFormat, ResultFilter, ResultInfo, ResultSort } from "../../engine/common/rpc.js";
import { parseFilter } from "../common/filter_syntax.js";
import { LAYOUT_KEY, parseLayout, type BottomTab, type Layout } from "../common/layout.js";
import { parseLocation, workspaceFileOf } from "../common/location.js";
import { exportPathFor, resultLabel } from "../common/result_tabs.js";
import type { ConnectionState, WorkbenchClient } from "../common/rpc_client.js";
import { ClusterPanel } from "./ClusterPanel.js";
import { EditorPane } from "./EditorPane.js";
import { FileTree } from "./FileTree.js";
import { loadBasinTypings, modelUri, monaco } from "./monaco_setup.js";
import { OutputPanel, type LogLine } from "./OutputPanel.js";
import { PlotPanel } from "./PlotPanel.js";
import { ProblemsPanel, type Problem } from "./ProblemsPanel.js";
import { ResultsTable } from "./ResultsTable.js";
import { BagView } from "./BagView.js";
import { ArrayHeader } from "./ArrayHeader.js";
import { RunBar, type RunState } from "./RunBar.js";
import { Splitter } from "./Splitter.js";

const NEW_FILE = `import { fromColumns, col } from "basin";

export default fromColumns({ x: [1, 2, 3], y: [10, 20, 30] })
  .withColumns({ z: col("x").mul(col("y")) });
`;

interface Open {
  model: monaco.editor.ITextModel;
  savedVersion: number;
}

const TABS: { id: BottomTab; label: string }[] = [
  { id: "results", label: "Results" },
  { id: "plot", label: "Plot" },
  { id: "problems", label: "Problems" },
  { id: "output", label: "Output" },
  { id: "cluster", label: "Cluster" },
];

export function App({ client }: { client: WorkbenchClient }) {
  const [layout, setLayout] = useState<Layout>(() => parseLayout(localStorage.getItem(LAYOUT_KEY)));
  const [files, setFiles] = useState<string[]>([]);
  /** Where a remote engine's workspace is ("user@host:port:/folder"); undefined for a local one. */
  const [host, setHost] = useState<string | undefined>();
  const [connection, setConnection] = useState<ConnectionState>(client.state);
  const opened = useRef(new Map<string, Open>());
  const [dirty, setDirty] = useState<Set<string>>(new Set());
  const [, setModelsVersion] = useState(0);
  const [run, setRun] = useState<RunState | undefined>();
  const runRef = useRef<RunState | undefined>(undefined);
  runRef.current = run;
  /** The run's results: its default export, then each show(). */
  const [results, setResults] = useState<ResultInfo[]>([]);
  const [base, setBase] = useState<ResultInfo | undefined>();
  const [shown, setShown] = useState<ResultInfo | undefined>();
  const [sort, setSort] = useState<ResultSort | undefined>();
  const [filters, setFilters] = useState<Record<string, string>>({});
  const [filterError, setFilterError] = useState<string | undefined>();
  const [viewBusy, setViewBusy] = useState(false);
  /** The file the last export wrote (shown next to the export buttons). */
  const [exported, setExported] = useState<string | undefined>();
  const viewSeq = useRef(0);
  const [problems, setProblems] = useState<Problem[]>([]);
  const [logs, setLogs] = useState<LogLine[]>([]);
  const editorRef = useRef<monaco.editor.IStandaloneCodeEditor | undefined>(undefined);

  const log = useCallback((level: LogLine["level"], text: string) => setLogs((l) => [...l.slice(-999), { time: Date.now(), level, text }]), []);
  const update = useCallback((f: (l: Layout) => Layout) => setLayout((l) => f(l)), []);

  // A layout effect, not a plain effect: it stores in the same commit that draws the
  // layout, so a reload or close right after a drag keeps its last size.
  useLayoutEffect(() => {
    localStorage.setItem(LAYOUT_KEY, JSON.stringify(layout));
    document.documentElement.dataset.theme = layout.theme;
  }, [layout]);

  const refresh = useCallback(
    () => client.workspace().then((w) => (setFiles(w.files), setHost(w.host ? `${w.host}:${w.root}` : undefined)), (e: Error) => log("error", e.message)),
    [client, log],
  );

  const open = useCallback(
    async (path: string, activate = true) => {
      if (!opened.current.has(path)) {
        let text: string;
        try {
          text = await client.readFile(path);
        } catch (e) {
          log("error", (e as Error).message);
          update((l) => ({ ...l, openFiles: l.openFiles.filter((f) => f !== path), activeFile: l.activeFile === path ? l.openFiles.find((f) => f !== path) : l.activeFile }));
          return;
        }
        if (opened.current.has(path)) return;
        const model = monaco.editor.getModel(modelUri(path)) ?? monaco.editor.createModel(text, path.endsWith(".ts") ? "typescript" : undefined, modelUri(path));
        const entry: Open = { model, savedVersion: model.getAlternativeVersionId() };
        model.onDidChangeContent(() => {
          const isDirty = model.getAlternativeVersionId() !== entry.savedVersion;
          setDirty((d) => (d.has(path) === isDirty ? d : isDirty ? new Set([...d, path]) : new Set([...d].filter((x) => x !== path))));
        });
        opened.current.set(path, entry);
        setModelsVersion((v) => v + 1);
      }
      update((l) => ({ ...l, openFiles: l.openFiles.includes(path) ? l.openFiles : [...l.openFiles, path], activeFile: activate ? path : l.activeFile }));
    },
    [client, log, update],
  );

  // Start: the file list, the typings, and the files open before the reload.
  useEffect(() => {
    void refresh();
    loadBasinTypings().catch((e: Error) => log("warn", `TypeScript help for "basin" is off: ${e.message}`));
    const start = parseLayout(localStorage.getItem(LAYOUT_KEY));
    for (const f of start.openFiles) void open(f, f === start.activeFile);
  }, []);

  const close = (path: string) => {
    const o = opened.current.get(path);
    if (o && dirty.has(path) && !confirm(`${path} has unsaved changes. Close it anyway?`)) return;
    o?.model.dispose();
    opened.current.delete(path);
    setDirty((d) => new Set([...d].filter((x) => x !== path)));
    update((l) => {
      const openFiles = l.openFiles.filter((f) => f !== path);
      return { ...l, openFiles, activeFile: l.activeFile === path ? openFiles[openFiles.length - 1] : l.activeFile };
    });
  };

  const save = useCallback(async () => {
    const path = layout.activeFile;
    const o = path ? opened.current.get(path) : undefined;
    if (!path || !o) return;
    const version = o.model.getAlternativeVersionId();
    try {
      await client.writeFile(path, o.model.getValue());
      o.savedVersion = version;
      setDirty((d) => new Set([...d].filter((x) => x !== path || o.model.getAlternativeVersionId() !== version)));
      log("info", `saved ${path}`);
    } catch (e) {
      log("error", (e as Error).message);
    }
  }, [client, layout.activeFile, log]);

  const newFile = async () => {
    const name = prompt("New pipeline file (path in the workspace):", "pipeline.ts");
    if (!name) return;
    await client.writeFile(name, NEW_FILE).catch((e: Error) => log("error", e.message));
    await refresh();
    await open(name);
  };

  const clearMarkers = () => {
    for (const o of opened.current.values()) monaco.editor.setModelMarkers(o.model, "basin", []);
  };

  const runActive = useCallback(async () => {
    const path = layout.activeFile;
    const o = path ? opened.current.get(path) : undefined;
    if (!path || !o || runRef.current?.status === "running" || runRef.current?.status === "starting") return;
    clearMarkers();
    setProblems([]);
    const state: RunState = { runId: undefined, file: path, startedAt: Date.now(), status: "starting", progress: {} };
    setRun(state);
    runRef.current = state;
    try {
      const { runId } = await client.run(path, o.model.getValue());
      setRun((r) => (r && r.runId === undefined ? { ...r, runId } : r));
    } catch (e) {
      setRun((r) => r && { ...r, status: "failed", elapsedMs: Date.now() - r.startedAt });
      log("error", (e as Error).message);
    }
  }, [client, layout.activeFile, log]);

  const stop = () => {
    const id = runRef.current?.runId;
    if (id) void client.cancel(id);
  };

  const showProblem = useCallback(
    (p: Problem) => {
      update((l) => ({ ...l, bottomTab: "problems" }));
      if (!p.file) return;
      void open(p.file).then(() => {
        const ed = editorRef.current;
        setTimeout(() => {
          ed?.revealLineInCenter(p.line);
          ed?.setPosition({ lineNumber: p.line, column: p.column });
          ed?.focus();
        }, 0);
      });
    },
    [open, update],
  );

  // Results are released when replaced, so the engine's store holds only what is shown.
  const baseRef = useRef<ResultInfo | undefined>(undefined);
  const shownRef = useRef<ResultInfo | undefined>(undefined);
  baseRef.current = base;
  shownRef.current = shown;
  const releaseView = useCallback(() => {
    const v = shownRef.current;
    if (v && v.id !== baseRef.current?.id) void client.release(v.id).catch(() => {});
  }, [client]);
  const resultsRef = useRef<ResultInfo[]>([]);
  resultsRef.current = results;
  /** Shows one of the run's results, unsorted and unfiltered. */
  const selectResult = useCallback(
    (next: ResultInfo | undefined) => {
      releaseView();
      viewSeq.current++;
      baseRef.current = shownRef.current = next;
      setBase(next);
      setShown(next);
      setSort(undefined);
      setFilters({});
      setFilterError(undefined);
      setViewBusy(false);
    },
    [releaseView],
  );
  const replaceResults = useCallback(
    (next: ResultInfo[]) => {
      selectResult(undefined);
      for (const r of resultsRef.current) void client.release(r.id).catch(() => {});
      resultsRef.current = next;
      setResults(next);
      selectResult(next[0]);
    },
    [client, selectResult],
  );

  const exportShown = async (format: ExportFormat) => {
    const r = shownRef.current;
    if (!r) return;
    const path = prompt(`Export ${r.rows.toLocaleString("en-US")} rows as ${format === "csv" ? "CSV" : "Parquet"} to (path in the workspace):`, exportPathFor(runRef.current?.file, r, format));
    if (!path) return;
    try {
      const out = await client.exportResult(r.id, path, format);
      log("info", `exported ${out.rows.toLocaleString("en-US")} rows to ${out.path}`);
      setExported(out.path);
      void refresh();
    } catch (e) {
      log("error", (e as Error).message);
      setExported(undefined);
      update((l) => ({ ...l, bottomTab: "output" }));
    }
  };

  useEffect(() => {
    setConnection(client.state); // it may have opened before this subscription
    return client.onConnection((s) => {
      setConnection(s);
      if (s === "open") void refresh();
      if (s === "crashed") {
        // The engine process is gone, and its results with it.
        resultsRef.current = [];
        setResults([]);
        baseRef.current = shownRef.current = undefined;
        setBase(undefined);
        setShown(undefined);
        const cur = runRef.current;
        if (cur && (cur.status === "running" || cur.status === "starting")) setRun({ ...cur, status: "failed", elapsedMs: Date.now() - cur.startedAt });
        log("error", client.crashMessage ?? "the engine process stopped");
      }
    });
  }, [client, refresh]);

  useEffect(
    () =>
      client.onEvent((e: EngineEvent) => {
        const cur = runRef.current;
        switch (e.type) {
          case "runStarted":
            if (cur && (cur.runId === undefined || cur.runId === e.runId)) setRun({ ...cur, runId: e.runId, status: "running" });
            log("info", `run ${e.runId}: ${e.file}`);
            break;
          case "progress":
            if (cur?.runId === e.runId) setRun((r) => r && { ...r, progress: { ...r.progress, [e.progress.group]: e.progress } });
            break;
          case "runFinished":
            if (cur && cur.runId !== e.runId) {
              for (const r of [e.result, ...(e.shown ?? [])]) void client.release(r.id).catch(() => {});
              break;
            }
            setRun((r) => r && { ...r, status: "done", elapsedMs: e.elapsedMs, tasks: e.tasks });
            replaceResults([e.result, ...(e.shown ?? [])]);
            setExported(undefined);
            log("info", `run ${e.runId} finished in ${e.elapsedMs} ms: ${e.result.rows.toLocaleString("en-US")} rows, ${e.tasks} tasks`);
            update((l) => (l.bottomTab === "plot" ? l : { ...l, bottomTab: "results" }));
            break;
          case "runFailed": {
            if (cur && cur.runId !== e.runId) break;
            const cancelled = e.error.code === "BASIN_CANCELLED";
            setRun((r) => r && { ...r, status: cancelled ? "cancelled" : "failed", elapsedMs: e.elapsedMs });
            log(cancelled ? "info" : "error", `run ${e.runId} ${cancelled ? "stopped" : "failed"}: ${e.error.location ? `${e.error.location}: ` : ""}${e.error.message}`);
            if (cancelled) break;
            const loc = parseLocation(e.error.location);
            const file = loc ? workspaceFileOf(loc.file, [...filesRef.current, ...opened.current.keys()]) : undefined;
            const problem: Problem = { error: e.error, file: file ?? cur?.file, line: loc && file ? loc.line : 1, column: loc && file ? loc.column : 1 };
            setProblems([problem]);
            const target = problem.file ? opened.current.get(problem.file) : undefined;
            if (target) {
              const line = Math.min(problem.line, target.model.getLineCount());
              monaco.editor.setModelMarkers(target.model, "basin", [
                { severity: monaco.MarkerSeverity.Error, message: `${e.error.code}: ${e.error.message}`, startLineNumber: line, startColumn: problem.column, endLineNumber: line, endColumn: target.model.getLineMaxColumn(line) },
              ]);
            }
            update((l) => ({ ...l, bottomTab: "problems" }));
            break;
          }
          case "log":
            log(e.level, e.text);
            break;
        }
      }),
    [client, log, replaceResults, update],
  );
  const filesRef = useRef<string[]>([]);
  filesRef.current = files;

  const applyView = async (nextSort: ResultSort | undefined, nextFilters: Record<string, string>) => {
    if (!base) return;
    let parsed: ResultFilter[];
    try {
      parsed = Object.entries(nextFilters).flatMap(([c, t]) => {
        const f = parseFilter(c, base.schema.find((x) => x.name === c)?.type ?? "string", t);
        return f ? [f] : [];
      });
    } catch (e) {
      setFilterError((e as Error).message);
      return;
    }
    setFilterError(undefined);
    setSort(nextSort);
    setFilters(nextFilters);
    const seq = ++viewSeq.current;
    if (!nextSort && parsed.length === 0) {
      releaseView();
      shownRef.current = base;
      setShown(base);
      return;
    }
    setViewBusy(true);
    try {
      const v = await client.view(base.id, nextSort ? [nextSort] : [], parsed);
      if (seq !== viewSeq.current) return void client.release(v.id).catch(() => {});
      if (baseRef.current?.id !== base.id) return void client.release(v.id).catch(() => {}); // a newer run replaced it
      releaseView();
      shownRef.current = v;
      setShown(v);
    } catch (e) {
      setFilterError((e as Error).message);
    } finally {
      if (seq === viewSeq.current) setViewBusy(false);
    }
  };

  const onSort = (column: string) => {
    const next: ResultSort | undefined = sort?.column !== column ? { column, descending: false } : !sort.descending ? { column, descending: true } : undefined;
    void applyView(next, filters);
  };
  const onFilter = (column: string, text: string) => void applyView(sort, { ...filters, [column]: text });

  // Ctrl/Cmd+S and Ctrl/Cmd+Enter also work when the focus is outside the editor.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey)) return;
      if (e.key === "s") (e.preventDefault(), void save());
      else if (e.key === "Enter") (e.preventDefault(), void runActive());
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [save, runActive]);

  const activeModel = layout.activeFile ? opened.current.get(layout.activeFile)?.model : undefined;
  const gridStyle = useMemo(() => ({ gridTemplateColumns: `${layout.sidebarWidth}px 4px 1fr`, gridTemplateRows: `1fr` }), [layout.sidebarWidth]);

  return (
    <div className="app" style={gridStyle}>
      {connection === "crashed" && (
        <div className="engine-crashed" role="alertdialog" aria-label="The engine stopped" data-testid="engine-crashed">
          <div className="engine-crashed-box">
            <strong>The engine stopped</strong>
            <pre>{client.crashMessage}</pre>
            <p className="muted">Your files are safe: unsaved editor changes stay here.</p>
            {client.restartEngine && (
              <button className="btn primary" onClick={() => client.restartEngine?.()} data-testid="restart-engine">Restart engine</button>
            )}
          </div>
        </div>
      )}
      <FileTree files={files} host={host} active={layout.activeFile} dirty={dirty} onOpen={(p) => void open(p)} onNew={() => void newFile()} onRefresh={() => void refresh()} />
      <Splitter direction="vertical" size={layout.sidebarWidth} min={120} max={700} onResize={(n) => update((l) => ({ ...l, sidebarWidth: n }))} />
      <div className="main" style={{ gridTemplateRows: `auto 1fr 4px ${layout.panelHeight}px` }}>
        <div className="topbar">
          <div className="tabs" role="tablist">
            {layout.openFiles.map((f) => (
              <div key={f} className={`tab${f === layout.activeFile ? " active" : ""}`} onClick={() => update((l) => ({ ...l, activeFile: f }))} title={f} data-tab={f} role="tab">
                <span>{f.split("/").pop()}</span>
                {dirty.has(f) ? <span className="dirty-dot" title="unsaved changes">●</span> : null}
                <button className="tab-close" onClick={(e) => (e.stopPropagation(), close(f))} aria-label={`close ${f}`}>×</button>
              </div>
            ))}
          </div>
          <span className="grow" />
          <button className="icon-btn" title="Toggle light/dark theme" onClick={() => update((l) => ({ ...l, theme: l.theme === "dark" ? "light" : "dark" }))} data-testid="theme">{layout.theme === "dark" ? "☾" : "☀"}</button>
        </div>
        <div className="editor-area">
          {layout.activeFile ? null : <div className="welcome">Open a pipeline from the explorer, or create one with +. <br />Ctrl/Cmd+Enter runs it; Ctrl/Cmd+S saves.</div>}
          <EditorPane model={activeModel} theme={layout.theme} onSave={() => void save()} onRun={() => void runActive()} onReady={(ed) => (editorRef.current = ed)} />
        </div>
        <Splitter direction="horizontal" size={layout.panelHeight} min={80} max={2000} invert onResize={(n) => update((l) => ({ ...l, panelHeight: n }))} />
        <div className="panel">
          <RunBar run={run} canRun={!!activeModel && connection === "open"} connection={connection} onRun={() => void runActive()} onStop={stop} />
          <div className="panel-tabs" role="tablist">
            {TABS.map((t) => (
              <button key={t.id} className={`panel-tab${layout.bottomTab === t.id ? " active" : ""}`} onClick={() => update((l) => ({ ...l, bottomTab: t.id }))} data-panel={t.id}>
                {t.label}
                {t.id === "problems" && problems.length > 0 ? <span className="badge">{problems.length}</span> : null}
              </button>
            ))}
          </div>
          <div className="panel-body">
            {layout.bottomTab === "results" &&
              (shown && base ? (
                <div className="results-area">
                  <div className="result-bar">
                    <div className="result-tabs" role="tablist" data-testid="result-tabs">
                      {results.length > 1 &&
                        results.map((r) => (
                          <button key={r.id} className={`result-tab${r.id === base.id ? " active" : ""}`} onClick={() => r.id !== base.id && selectResult(r)} data-result-tab={resultLabel(r)} role="tab" title={`${r.rows.toLocaleString("en-US")} rows`}>
                            {resultLabel(r)}
                          </button>
                        ))}
                    </div>
                    <span className="grow" />
                    {exported && <span className="muted" data-testid="exported">saved {exported}</span>}
                    <button className="btn small" onClick={() => void exportShown("csv")} title="Export these rows (sorted and filtered as shown) as CSV into the workspace" data-testid="export-csv">Export CSV</button>
                    <button className="btn small" onClick={() => void exportShown("parquet")} title="Export these rows (sorted and filtered as shown) as Parquet into the workspace" data-testid="export-parquet">Export Parquet</button>
                  </div>
                  {base.array && <ArrayHeader array={base.array} />}
                  <div className="results-host">
                    {shown.kind === "bag" ? (
                      <BagView client={client} result={shown} onError={(m) => log("error", m)} />
                    ) : (
                      <ResultsTable client={client} result={shown} baseRows={base.rows} sort={sort} filters={filters} filterError={filterError} busy={viewBusy} onSort={onSort} onFilter={onFilter} onError={(m) => log("error", m)} />
                    )}
                  </div>
                </div>
              ) : (
                <div className="empty">Run a pipeline (Ctrl/Cmd+Enter) to see its result here.</div>
              ))}
            {layout.bottomTab === "plot" && <PlotPanel client={client} result={shown} dark={layout.theme === "dark"} />}
            {layout.bottomTab === "problems" && <ProblemsPanel problems={problems} onJump={showProblem} />}
            {layout.bottomTab === "output" && <OutputPanel lines={logs} />}
            {layout.bottomTab === "cluster" && <ClusterPanel client={client} />}
          </div>
        </div>
      </div>
    </div>
  );
}
