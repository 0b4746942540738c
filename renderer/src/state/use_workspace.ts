// The workspace as the editor sees it: the file list (and a remote engine's host),
// one Monaco model per open file with its unsaved state, and open, close, save and
// new file. Its own hook because the run and its problems reach into the open
// files (their text, their markers) while App only draws the tabs and the tree.
import { useCallback, useEffect, useRef, useState, type RefObject } from "react";
import { LAYOUT_KEY, parseLayout } from "../../common/layout.js";
import { BasinError } from "../../../engine/common/errors.js";
import type { ResultInfo } from "../../../engine/common/rpc.js";
import type { WorkbenchClient } from "../../common/rpc_client.js";
import { loadBasinTypings, modelUri, monaco } from "../monaco_setup.js";
import type { UpdateLayout } from "./use_layout.js";
import type { Log } from "./use_log.js";

const NEW_FILE = `import { fromColumns, col } from "basin";

export default fromColumns({ x: [1, 2, 3], y: [10, 20, 30] })
  .withColumns({ z: col("x").mul(col("y")) });
`;

/** An open file: its editor model, the model version last saved, and the file's version on disk then. */
export interface Open {
  model: monaco.editor.ITextModel;
  savedVersion: number;
  /** The engine's version of the file when it was read or last saved (saveFile refuses to overwrite a newer one). */
  diskVersion: string;
}

/** Data files open as a preview of their rows, not as text. */
export function isDataFile(path: string): boolean {
  return /\.(csv|tsv|parquet|ndjson|jsonl|arrow|ipc|feather)$/i.test(path);
}

/** Files the Run button runs. */
export function isPipelineFile(path: string | undefined): boolean {
  return !!path && /\.(ts|mts|js|mjs)$/i.test(path);
}

/** An open data file: its preview result, or why there is none. */
export type Preview = { result: ResultInfo } | { error: string } | "loading";

export interface Workspace {
  files: string[];
  /** Where a remote engine's workspace is ("user@host:port:/folder"); undefined for a local one. */
  host: string | undefined;
  /** The open files with unsaved changes. */
  dirty: Set<string>;
  /** Each open file's model, by workspace path. */
  opened: RefObject<Map<string, Open>>;
  /** The file list of the latest render, for event handlers. */
  filesRef: RefObject<string[]>;
  /** The editor, once EditorPane has made it. */
  editorRef: RefObject<monaco.editor.IStandaloneCodeEditor | undefined>;
  /** The active file's model, once it is open. */
  activeModel: monaco.editor.ITextModel | undefined;
  /** The open data files' previews, by path. */
  previews: Map<string, Preview>;
  /** Lists the workspace's files again. */
  refresh: () => Promise<void>;
  /** Reads a file into a model (once) and adds its tab; `activate` (default) makes it the active one. */
  open: (path: string, activate?: boolean) => Promise<void>;
  /** Closes a tab (asking first when it has unsaved changes) and disposes its model. */
  close: (path: string) => void;
  /** Writes the active file. */
  save: () => Promise<void>;
  /** Asks for a path, writes a small pipeline there and opens it. */
  newFile: () => Promise<void>;
}

/**
 * The workspace's files and the open ones' editor models. On start it lists the
 * files, loads the `basin` typings and reopens the files open before the reload.
 *
 * @example
 * const { files, dirty, activeModel, open, save } = useWorkspace(client, { activeFile: layout.activeFile, log, update });
 * <FileTree files={files} dirty={dirty} onOpen={(p) => void open(p)} … />
 * <EditorPane model={activeModel} onSave={() => void save()} … />
 */
export function useWorkspace(
  client: WorkbenchClient,
  {
    activeFile,
    log,
    update,
    onEdit,
  }: {
    activeFile: string | undefined;
    log: Log;
    update: UpdateLayout;
    /** Lines of an open file changed (1-based, inclusive). */
    onEdit?: RefObject<((path: string, changes: { startLine: number; endLine: number }[]) => void) | undefined>;
  },
): Workspace {
  const [files, setFiles] = useState<string[]>([]);
  const [host, setHost] = useState<string | undefined>();
  const opened = useRef(new Map<string, Open>());
  const [dirty, setDirty] = useState<Set<string>>(new Set());
  const [, setModelsVersion] = useState(0);
  const [previews, setPreviews] = useState<Map<string, Preview>>(new Map());
  const previewsRef = useRef(previews);
  previewsRef.current = previews;
  const setPreview = (path: string, p: Preview | undefined) =>
    setPreviews((m) => {
      const next = new Map(m);
      if (p === undefined) next.delete(path);
      else next.set(path, p);
      return next;
    });
  const editorRef = useRef<monaco.editor.IStandaloneCodeEditor | undefined>(undefined);
  const filesRef = useRef<string[]>([]);
  filesRef.current = files;

  const refresh = useCallback(
    () =>
      client.workspace().then(
        (w) => (setFiles(w.files), setHost(w.host ? `${w.host}:${w.root}` : undefined)),
        (e: Error) => log("error", e.message),
      ),
    [client, log],
  );

  const open = useCallback(
    async (path: string, activate = true) => {
      if (isDataFile(path)) {
        if (!previewsRef.current.has(path)) {
          setPreview(path, "loading");
          client.preview(path).then(
            (result) => setPreview(path, { result }),
            (e: Error) => setPreview(path, { error: e.message }),
          );
        }
      } else if (!opened.current.has(path)) {
        let text: string;
        let diskVersion: string;
        try {
          ({ text, version: diskVersion } = await client.openFile(path));
        } catch (e) {
          log("error", (e as Error).message);
          update((l) => ({
            ...l,
            openFiles: l.openFiles.filter((f) => f !== path),
            activeFile: l.activeFile === path ? l.openFiles.find((f) => f !== path) : l.activeFile,
          }));
          return;
        }
        if (opened.current.has(path)) return;
        const model =
          monaco.editor.getModel(modelUri(path)) ??
          monaco.editor.createModel(text, path.endsWith(".ts") ? "typescript" : undefined, modelUri(path));
        const entry: Open = { model, savedVersion: model.getAlternativeVersionId(), diskVersion };
        model.onDidChangeContent((ev) => {
          onEdit?.current?.(
            path,
            ev.changes.map((c) => ({
              startLine: c.range.startLineNumber,
              endLine:
                c.range.startLineNumber +
                Math.max(0, c.text.split("\n").length - 1, c.range.endLineNumber - c.range.startLineNumber),
            })),
          );
          const isDirty = model.getAlternativeVersionId() !== entry.savedVersion;
          setDirty((d) =>
            d.has(path) === isDirty ? d : isDirty ? new Set([...d, path]) : new Set([...d].filter((x) => x !== path)),
          );
        });
        opened.current.set(path, entry);
        setModelsVersion((v) => v + 1);
      }
      update((l) => ({
        ...l,
        openFiles: l.openFiles.includes(path) ? l.openFiles : [...l.openFiles, path],
        activeFile: activate ? path : l.activeFile,
      }));
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

  // Leaving the page (reload, close, another address) with unsaved edits asks first.
  const dirtyRef = useRef(dirty);
  dirtyRef.current = dirty;
  useEffect(() => {
    const onLeave = (e: BeforeUnloadEvent) => {
      if (dirtyRef.current.size === 0) return;
      e.preventDefault();
      e.returnValue = `${[...dirtyRef.current].join(", ")} ha${dirtyRef.current.size > 1 ? "ve" : "s"} unsaved changes`;
    };
    window.addEventListener("beforeunload", onLeave);
    return () => window.removeEventListener("beforeunload", onLeave);
  }, []);

  const close = (path: string) => {
    const p = previewsRef.current.get(path);
    if (p && p !== "loading" && "result" in p) void client.release(p.result.id).catch(() => {});
    if (p) setPreview(path, undefined);
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
    const path = activeFile;
    const o = path ? opened.current.get(path) : undefined;
    if (!path || !o) return;
    // Nothing changed since the last save (or the open): no write, so the file's bytes stay as they are.
    if (o.model.getAlternativeVersionId() === o.savedVersion) return log("info", `${path} has no changes to save`);
    const version = o.model.getAlternativeVersionId();
    const text = o.model.getValue();
    const saved = (v: { version: string }) => {
      o.savedVersion = version;
      o.diskVersion = v.version;
      setDirty((d) => new Set([...d].filter((x) => x !== path || o.model.getAlternativeVersionId() !== version)));
      log("info", `saved ${path}`);
    };
    try {
      saved(await client.saveFile(path, text, o.diskVersion));
    } catch (e) {
      if (!(e instanceof BasinError && e.code === "BASIN_CONFLICT")) return log("error", (e as Error).message);
      // Changed on disk since it was opened: ask instead of overwriting.
      if (
        confirm(
          `${e.detail}\n\nOK: overwrite the file on disk with this editor's text.\nCancel: keep both as they are.`,
        )
      ) {
        try {
          saved(await client.saveFile(path, text));
        } catch (e2) {
          log("error", (e2 as Error).message);
        }
      } else {
        log("warn", `${path} was not saved: it changed on disk (close and reopen it to see that version)`);
      }
    }
  }, [client, activeFile, log]);

  const newFile = async () => {
    const name = prompt("New pipeline file (path in the workspace):", "pipeline.ts");
    if (!name) return;
    try {
      await client.writeFile(name, NEW_FILE);
    } catch (e) {
      return log("error", (e as Error).message);
    }
    await refresh();
    await open(name);
  };

  const activeModel = activeFile ? opened.current.get(activeFile)?.model : undefined;

  return {
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
  };
}
