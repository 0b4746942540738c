// Running the active file: the run as the engine reports it (its id, status and
// progress per group of tasks), Run and Stop, and a failed run's problem with its
// marker in the editor. Its own hook because it is the one listener to the
// engine's events: a finished run hands its results to useResults, every engine
// log line goes to the Output log.
import { useCallback, useEffect, useRef, useState, type RefObject } from "react";
import type { SerializedError } from "../../../engine/common/errors.js";
import type { EngineEvent, ResultInfo, SessionRun } from "../../../engine/common/rpc.js";
import { parseLocation, workspaceFileOf } from "../../common/location.js";
import type { WorkbenchClient } from "../../common/rpc_client.js";
import { monaco } from "../monaco_setup.js";
import type { Problem } from "../ProblemsPanel.js";
import type { RunState } from "../RunBar.js";
import type { UpdateLayout } from "./use_layout.js";
import type { Log } from "./use_log.js";
import { isPipelineFile, type Open } from "./use_workspace.js";

export interface Run {
  /** The last run started here; undefined before the first. */
  run: RunState | undefined;
  /** The run of the latest render, or the one just started, for event handlers. */
  runRef: RefObject<RunState | undefined>;
  /** The last failed run's error, located in a workspace file when it names one. */
  problems: Problem[];
  /** Runs the active file's editor text, unless a run is already going. */
  runActive: () => Promise<void>;
  /** Cancels the run going. */
  stop: () => void;
  /** Opens the Problems tab and puts the cursor on the problem's line. */
  showProblem: (p: Problem) => void;
  /** Fails a run still going: the engine stopped, or cannot be reached (the session's run, once back, replaces it). */
  failRun: () => void;
  /** Shows the session's run (going or finished) after a reload. */
  restoreRun: (run: SessionRun | undefined) => void;
  /** Lines of an open file were edited: the problems on them are dropped. */
  dropEdited: (path: string, changes: readonly { startLine: number; endLine: number }[]) => void;
}

/** What the run takes from the workspace and the results. */
export interface RunDeps {
  activeFile: string | undefined;
  log: Log;
  update: UpdateLayout;
  opened: RefObject<Map<string, Open>>;
  filesRef: RefObject<string[]>;
  open: (path: string, activate?: boolean) => Promise<void>;
  editorRef: RefObject<monaco.editor.IStandaloneCodeEditor | undefined>;
  replaceResults: (next: ResultInfo[]) => void;
  setExported: (path: string | undefined) => void;
}

/**
 * The active file's run: starting and stopping it, following its events, and the
 * problem it failed with.
 *
 * @example
 * const { run, problems, runActive, stop, showProblem } = useRun(client, { activeFile: layout.activeFile, log, update, opened, filesRef, open, editorRef, replaceResults, setExported });
 * <RunBar run={run} onRun={() => void runActive()} onStop={stop} … />
 * <ProblemsPanel problems={problems} onJump={showProblem} />
 */
export function useRun(
  client: WorkbenchClient,
  { activeFile, log, update, opened, filesRef, open, editorRef, replaceResults, setExported }: RunDeps,
): Run {
  const [run, setRun] = useState<RunState | undefined>();
  const runRef = useRef<RunState | undefined>(undefined);
  /**
   * The run for the next render and, at once, for the handlers before it: an engine's
   * events can come faster than renders (runStarted and runFinished of a short run
   * together, while the page is busy), and a handler reading the last render's run
   * would take this page's result for another's and let it go.
   */
  const put = useCallback((next: RunState | undefined) => {
    runRef.current = next;
    setRun(next);
  }, []);
  /** The run changed by `f`, if there is one. */
  const change = useCallback((f: (r: RunState) => RunState) => runRef.current && put(f(runRef.current)), [put]);
  const [problems, setProblems] = useState<Problem[]>([]);

  const clearMarkers = () => {
    for (const o of opened.current.values()) monaco.editor.setModelMarkers(o.model, "basin", []);
  };

  const runActive = useCallback(async () => {
    const path = activeFile;
    const o = path ? opened.current.get(path) : undefined;
    if (
      !path ||
      !o ||
      !isPipelineFile(path) ||
      runRef.current?.status === "running" ||
      runRef.current?.status === "starting"
    )
      return;
    clearMarkers();
    setProblems([]);
    put({ runId: undefined, file: path, startedAt: Date.now(), status: "starting", progress: {} });
    try {
      const { runId } = await client.run(path, o.model.getValue());
      change((r) => (r.runId === undefined ? { ...r, runId } : r));
    } catch (e) {
      change((r) => ({ ...r, status: "failed", elapsedMs: Date.now() - r.startedAt }));
      log("error", (e as Error).message);
    }
  }, [client, activeFile, log, put, change]);

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

  /** A failed run's error as the problem in Problems and a marker on its line. */
  const showFailure = (error: SerializedError, runFile: string | undefined) => {
    const loc = parseLocation(error.location);
    const file = loc ? workspaceFileOf(loc.file, [...filesRef.current, ...opened.current.keys()]) : undefined;
    const problem: Problem = {
      error,
      file: file ?? runFile,
      line: loc && file ? loc.line : 1,
      column: loc && file ? loc.column : 1,
    };
    setProblems([problem]);
    const target = problem.file ? opened.current.get(problem.file) : undefined;
    if (target) {
      const line = Math.min(problem.line, target.model.getLineCount());
      monaco.editor.setModelMarkers(target.model, "basin", [
        {
          severity: monaco.MarkerSeverity.Error,
          message: `${error.code}: ${error.message}`,
          startLineNumber: line,
          startColumn: problem.column,
          endLineNumber: line,
          endColumn: target.model.getLineMaxColumn(line),
        },
      ]);
    }
  };
  const showFailureRef = useRef(showFailure);
  showFailureRef.current = showFailure;

  /** The session's run as the engine remembers it, after a reload. */
  const restoreRun = useCallback(
    (r: SessionRun | undefined) => {
      if (!r) return;
      const cur = runRef.current;
      if (cur?.runId === r.runId && cur.status !== "running" && cur.status !== "starting" && !cur.givenUp) return;
      if (cur && cur.runId !== r.runId && cur.runId !== undefined) return; // this page started another since
      const state: RunState = {
        runId: r.runId,
        file: r.file,
        startedAt: Date.now() - r.elapsedMs,
        status: r.status,
        progress: Object.fromEntries(r.progress.map((p) => [p.group, p])),
        ...(r.status === "running" ? {} : { elapsedMs: r.elapsedMs }),
        ...(r.tasks !== undefined ? { tasks: r.tasks } : {}),
      };
      put(state);
      if (r.status === "failed" && r.error) {
        const error = r.error;
        // Once its file is open again (the workspace reopens the tabs at start).
        setTimeout(() => showFailureRef.current(error, r.file), 500);
      }
    },
    [put],
  );

  const failRun = useCallback(() => {
    const cur = runRef.current;
    if (cur && (cur.status === "running" || cur.status === "starting"))
      put({ ...cur, status: "failed", elapsedMs: Date.now() - cur.startedAt, givenUp: true });
  }, [put]);

  useEffect(
    () =>
      client.onEvent((e: EngineEvent) => {
        const cur = runRef.current;
        switch (e.type) {
          case "runStarted":
            if (cur && (cur.runId === undefined || cur.runId === e.runId))
              put({ ...cur, runId: e.runId, status: "running" });
            log("info", `run ${e.runId}: ${e.file}`);
            break;
          case "progress":
            if (cur?.runId === e.runId) put({ ...cur, progress: { ...cur.progress, [e.progress.group]: e.progress } });
            break;
          case "runFinished":
            if (cur && cur.runId !== e.runId) {
              for (const r of [e.result, ...(e.shown ?? [])]) void client.release(r.id).catch(() => {});
              break;
            }
            change((r) => ({ ...r, status: "done", elapsedMs: e.elapsedMs, tasks: e.tasks }));
            replaceResults([e.result, ...(e.shown ?? [])]);
            setExported(undefined);
            log(
              "info",
              `run ${e.runId} finished in ${e.elapsedMs} ms: ${e.result.rows.toLocaleString("en-US")} rows, ${e.tasks} tasks`,
            );
            update((l) => (l.bottomTab === "plot" ? l : { ...l, bottomTab: "results" }));
            break;
          case "runFailed": {
            if (cur && cur.runId !== e.runId) break;
            const cancelled = e.error.code === "BASIN_CANCELLED";
            change((r) => ({ ...r, status: cancelled ? "cancelled" : "failed", elapsedMs: e.elapsedMs }));
            log(
              cancelled ? "info" : "error",
              `run ${e.runId} ${cancelled ? "stopped" : "failed"}: ${e.error.location ? `${e.error.location}: ` : ""}${e.error.message}`,
            );
            if (cancelled) break;
            showFailure(e.error, cur?.file);
            update((l) => ({ ...l, bottomTab: "problems" }));
            break;
          }
          case "log":
            log(e.level, e.text);
            break;
        }
      }),
    [client, log, replaceResults, update, put, change],
  );

  // A problem is dropped once its line is edited (it may be fixed; the next run says).
  const dropEdited = useCallback((path: string, changes: readonly { startLine: number; endLine: number }[]) => {
    setProblems((ps) => {
      const left = ps.filter(
        (p) => p.file !== path || !changes.some((c) => p.line >= c.startLine && p.line <= c.endLine),
      );
      if (left.length !== ps.length) {
        const o = opened.current.get(path);
        if (o) monaco.editor.setModelMarkers(o.model, "basin", []);
      }
      return left.length === ps.length ? ps : left;
    });
  }, []);

  return { run, runRef, problems, runActive, stop, showProblem, failRun, restoreRun, dropEdited };
}
