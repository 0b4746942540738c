// The workbench: explorer, editor tabs, run bar, and the bottom panel (results,
// plot, problems, output, cluster). Talks to the engine only through EngineClient.
// Its state lives in hooks by concern (state/): App composes them and lays out the panels.
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { ResultInfo, SessionRun } from "../../engine/common/rpc.js";
import type { BottomTab } from "../common/layout.js";
import { resultLabel } from "../common/result_tabs.js";
import type { WorkbenchClient } from "../common/rpc_client.js";
import { ClusterPanel } from "./ClusterPanel.js";
import { ErrorBoundary } from "./ErrorBoundary.js";
import { PreviewPane } from "./PreviewPane.js";
import { EditorPane } from "./EditorPane.js";
import { FileTree } from "./FileTree.js";
import { OutputPanel } from "./OutputPanel.js";
import { PlotPanel } from "./PlotPanel.js";
import { ProblemsPanel } from "./ProblemsPanel.js";
import { ResultsTable } from "./ResultsTable.js";
import { SummaryPanel } from "./SummaryPanel.js";
import { ViewCodeButton } from "./ViewCodeButton.js";
import { useProfiles } from "./state/use_profiles.js";
import { BagView } from "./BagView.js";
import { ArrayHeader } from "./ArrayHeader.js";
import { RunBar } from "./RunBar.js";
import { Splitter } from "./Splitter.js";
import { useConnection } from "./state/use_connection.js";
import { useLayout } from "./state/use_layout.js";
import { useLog } from "./state/use_log.js";
import { useResults } from "./state/use_results.js";
import { useRun } from "./state/use_run.js";
import { useSession } from "./state/use_session.js";
import { useShortcuts } from "./state/use_shortcuts.js";
import { useTypeProblems } from "./state/use_type_problems.js";
import { isDataFile, isPipelineFile, useWorkspace } from "./state/use_workspace.js";

/** The editor keeps at least this height; the bottom panel gives way on a short window. */
const MIN_EDITOR = 180;
/** The file tabs' bar above the editor, and the splitter. */
const CHROME = 36 + 4;

/** The window's height, followed. */
function useWindowHeight(): number {
  const [h, setH] = useState(window.innerHeight);
  useEffect(() => {
    const on = () => setH(window.innerHeight);
    window.addEventListener("resize", on);
    return () => window.removeEventListener("resize", on);
  }, []);
  return h;
}

const TABS: { id: BottomTab; label: string }[] = [
  { id: "results", label: "Results" },
  { id: "plot", label: "Plot" },
  { id: "problems", label: "Problems" },
  { id: "output", label: "Output" },
  { id: "cluster", label: "Cluster" },
];

export function App({ client }: { client: WorkbenchClient }) {
  const { logs, log } = useLog();
  const { layout, update } = useLayout();
  // The session attaches first, so that what the page asks for next belongs to it.
  const restore = useRef<{
    results?: (r: ResultInfo[], o: string[], f: boolean) => void;
    run?: (r: SessionRun | undefined) => void;
  }>({});
  useSession(client, {
    log,
    restoreResults: (r, o, f) => restore.current.results?.(r, o, f),
    restoreRun: (r) => restore.current.run?.(r),
  });
  const onEdit = useRef<((path: string, changes: { startLine: number; endLine: number }[]) => void) | undefined>(
    undefined,
  );
  const {
    files,
    host,
    dirty,
    opened,
    filesRef,
    editorRef,
    activeModel,
    previews,
    refresh,
    open,
    close,
    save,
    newFile,
  } = useWorkspace(client, { activeFile: layout.activeFile, log, update, onEdit });
  const {
    results,
    base,
    shown,
    sort,
    filters,
    filterError,
    viewBusy,
    exported,
    setExported,
    selectResult,
    replaceResults,
    forgetResults,
    restoreResults,
    exportShown,
    onSort,
    onFilter,
  } = useResults(client, { log, refresh, update });
  const { run, runRef, problems, runActive, stop, showProblem, failRun, restoreRun, dropEdited } = useRun(client, {
    activeFile: layout.activeFile,
    log,
    update,
    opened,
    filesRef,
    open,
    editorRef,
    replaceResults,
    setExported,
  });
  restore.current = { results: restoreResults, run: restoreRun };
  onEdit.current = dropEdited;
  const profiles = useProfiles(client, shown?.kind === "bag" ? undefined : shown);
  const [revealColumn, setRevealColumn] = useState<{ name: string; seq: number } | undefined>();
  const revealInTable = useCallback((name: string) => setRevealColumn((r) => ({ name, seq: (r?.seq ?? 0) + 1 })), []);
  const typeProblems = useTypeProblems(opened);
  const allProblems = useMemo(() => [...problems, ...typeProblems], [problems, typeProblems]);
  const connection = useConnection(client, { refresh, log, forgetResults, failRun });
  useShortcuts({ save, run: runActive });
  const windowHeight = useWindowHeight();
  const panelHeight = Math.max(80, Math.min(layout.panelHeight, windowHeight - CHROME - MIN_EDITOR));
  const activePreview =
    layout.activeFile && isDataFile(layout.activeFile) ? previews.get(layout.activeFile) : undefined;

  const gridStyle = useMemo(
    () => ({ gridTemplateColumns: `${layout.sidebarWidth}px 4px 1fr`, gridTemplateRows: `1fr` }),
    [layout.sidebarWidth],
  );

  return (
    <div className="app" style={gridStyle}>
      {connection === "crashed" && (
        <div className="engine-crashed" role="alertdialog" aria-label="The engine stopped" data-testid="engine-crashed">
          <div className="engine-crashed-box">
            <strong>The engine stopped</strong>
            <pre>{client.crashMessage}</pre>
            <p className="muted">Your files are safe: unsaved editor changes stay here.</p>
            {client.restartEngine && (
              <button className="btn primary" onClick={() => client.restartEngine?.()} data-testid="restart-engine">
                Restart engine
              </button>
            )}
          </div>
        </div>
      )}
      <ErrorBoundary name="The explorer" resetKey={files}>
        <FileTree
          files={files}
          host={host}
          active={layout.activeFile}
          dirty={dirty}
          onOpen={(p) => void open(p)}
          onNew={() => void newFile()}
          onRefresh={() => void refresh()}
        />
      </ErrorBoundary>
      <Splitter
        direction="vertical"
        size={layout.sidebarWidth}
        min={120}
        max={700}
        onResize={(n) => update((l) => ({ ...l, sidebarWidth: n }))}
      />
      <div className="main" style={{ gridTemplateRows: `auto minmax(0, 1fr) 4px ${panelHeight}px` }}>
        <div className="topbar">
          <div className="tabs" role="tablist">
            {layout.openFiles.map((f) => (
              <div
                key={f}
                className={`tab${f === layout.activeFile ? " active" : ""}`}
                onClick={() => update((l) => ({ ...l, activeFile: f }))}
                title={f}
                data-tab={f}
                role="tab"
              >
                <span>{f.split("/").pop()}</span>
                {dirty.has(f) ? (
                  <span className="dirty-dot" title="unsaved changes">
                    ●
                  </span>
                ) : null}
                <button
                  className="tab-close"
                  onClick={(e) => (e.stopPropagation(), close(f))}
                  aria-label={`close ${f}`}
                >
                  ×
                </button>
              </div>
            ))}
          </div>
          <span className="grow" />
          <button
            className="icon-btn"
            title="Toggle light/dark theme"
            onClick={() => update((l) => ({ ...l, theme: l.theme === "dark" ? "light" : "dark" }))}
            data-testid="theme"
          >
            {layout.theme === "dark" ? "☾" : "☀"}
          </button>
        </div>
        <div className="editor-area">
          {layout.activeFile ? null : (
            <div className="welcome">
              Open a pipeline from the explorer, or create one with +. <br />
              Ctrl/Cmd+Enter runs it; Ctrl/Cmd+S saves.
            </div>
          )}
          <ErrorBoundary name="The editor">
            <EditorPane
              model={activeModel}
              theme={layout.theme}
              onSave={() => void save()}
              onRun={() => void runActive()}
              onReady={(ed) => (editorRef.current = ed)}
            />
          </ErrorBoundary>
          {activePreview && layout.activeFile && (
            <ErrorBoundary name="The file preview" resetKey={activePreview}>
              <PreviewPane
                client={client}
                path={layout.activeFile}
                preview={activePreview}
                onError={(m) => log("error", m)}
              />
            </ErrorBoundary>
          )}
        </div>
        <Splitter
          direction="horizontal"
          size={panelHeight}
          min={80}
          max={2000}
          invert
          onResize={(n) => update((l) => ({ ...l, panelHeight: n }))}
        />
        <div className="panel">
          <ErrorBoundary name="The run bar">
            <RunBar
              run={run}
              canRun={!!activeModel && isPipelineFile(layout.activeFile) && connection === "open"}
              connection={connection}
              onRun={() => void runActive()}
              onStop={stop}
            />
          </ErrorBoundary>
          <div className="panel-tabs" role="tablist">
            {TABS.map((t) => (
              <button
                key={t.id}
                className={`panel-tab${layout.bottomTab === t.id ? " active" : ""}`}
                onClick={() => update((l) => ({ ...l, bottomTab: t.id }))}
                data-panel={t.id}
              >
                {t.label}
                {t.id === "problems" && allProblems.length > 0 ? (
                  <span className="badge">{allProblems.length}</span>
                ) : null}
              </button>
            ))}
          </div>
          <div className="panel-body">
            <ErrorBoundary name={`The ${layout.bottomTab} panel`} resetKey={`${layout.bottomTab}:${shown?.id ?? ""}`}>
              {layout.bottomTab === "results" &&
                (shown && base ? (
                  <div className="results-area">
                    <div className="result-bar">
                      <div className="result-tabs" role="tablist" data-testid="result-tabs">
                        {results.length > 1 &&
                          results.map((r) => (
                            <button
                              key={r.id}
                              className={`result-tab${r.id === base.id ? " active" : ""}`}
                              onClick={() => r.id !== base.id && selectResult(r)}
                              data-result-tab={resultLabel(r)}
                              role="tab"
                              title={`${r.rows.toLocaleString("en-US")} rows`}
                            >
                              {resultLabel(r)}
                            </button>
                          ))}
                      </div>
                      <span className="grow" />
                      <ViewCodeButton schema={base.schema} sort={sort} filters={filters} />
                      <button
                        className={`btn small${layout.summary ? " active" : ""}`}
                        onClick={() => update((l) => ({ ...l, summary: !l.summary }))}
                        title="Show or hide the column summary (types, missing, distinct, statistics, histograms)"
                        aria-pressed={layout.summary}
                        data-testid="summary-toggle"
                      >
                        Summary
                      </button>
                      {exported && (
                        <span className="muted" data-testid="exported">
                          saved {exported}
                        </span>
                      )}
                      <button
                        className="btn small"
                        onClick={() => void exportShown("csv", runRef.current?.file)}
                        title="Export these rows (sorted and filtered as shown) as CSV into the workspace"
                        data-testid="export-csv"
                      >
                        Export CSV
                      </button>
                      <button
                        className="btn small"
                        onClick={() => void exportShown("parquet", runRef.current?.file)}
                        title="Export these rows (sorted and filtered as shown) as Parquet into the workspace"
                        data-testid="export-parquet"
                      >
                        Export Parquet
                      </button>
                    </div>
                    {base.array && <ArrayHeader array={base.array} />}
                    <div className="results-host">
                      {layout.summary && shown.kind !== "bag" && !base.array && (
                        <ErrorBoundary name="The summary" resetKey={shown.id}>
                          <SummaryPanel
                            result={shown}
                            profiles={profiles.byColumn}
                            counting={profiles.counting}
                            onPick={revealInTable}
                          />
                        </ErrorBoundary>
                      )}
                      <div className="results-grid">
                        {shown.kind === "bag" ? (
                          <BagView client={client} result={shown} onError={(m) => log("error", m)} />
                        ) : (
                          <ResultsTable
                            client={client}
                            result={shown}
                            baseRows={base.rows}
                            sort={sort}
                            filters={filters}
                            filterError={filterError}
                            busy={viewBusy}
                            onSort={onSort}
                            onFilter={onFilter}
                            onError={(m) => log("error", m)}
                            profiles={profiles.byColumn}
                            revealColumn={revealColumn}
                          />
                        )}
                      </div>
                    </div>
                  </div>
                ) : (
                  <div className="empty">Run a pipeline (Ctrl/Cmd+Enter) to see its result here.</div>
                ))}
              {layout.bottomTab === "plot" && (
                <PlotPanel client={client} result={shown} dark={layout.theme === "dark"} />
              )}
              {layout.bottomTab === "problems" && <ProblemsPanel problems={allProblems} onJump={showProblem} />}
              {layout.bottomTab === "output" && <OutputPanel lines={logs} />}
              {layout.bottomTab === "cluster" && (
                <ClusterPanel
                  client={client}
                  progress={run ? Object.values(run.progress) : undefined}
                  runFile={run?.file}
                />
              )}
            </ErrorBoundary>
          </div>
        </div>
      </div>
    </div>
  );
}
