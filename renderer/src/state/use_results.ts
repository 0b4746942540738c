// What a finished run left to look at: its results (the default export, then each
// show()), the one selected, the sorted and filtered view of it that is shown, and
// its export. Its own hook because it is the one place that releases results in
// the engine: each is released when replaced, so the store holds only what is shown.
import { useCallback, useEffect, useRef, useState } from "react";
import type { ExportFormat, ResultFilter, ResultInfo, ResultSort } from "../../../engine/common/rpc.js";
import { parseFilter } from "../../common/filter_syntax.js";
import { exportPathFor } from "../../common/result_tabs.js";
import type { WorkbenchClient } from "../../common/rpc_client.js";
import type { UpdateLayout } from "./use_layout.js";
import type { Log } from "./use_log.js";

const VIEW_KEY = "basin.view.v1";

/** The shown result's id and its sort and filters, as kept in sessionStorage. */
interface StoredView {
  base: string;
  sort: ResultSort | undefined;
  filters: Record<string, string>;
}

function storedView(): StoredView | undefined {
  try {
    const v = JSON.parse(sessionStorage.getItem(VIEW_KEY) ?? "null") as StoredView | null;
    return v && typeof v.base === "string" && typeof v.filters === "object" && v.filters !== null ? v : undefined;
  } catch {
    return undefined;
  }
}

export interface Results {
  /** The run's results: its default export, then each show(). */
  results: ResultInfo[];
  /** The selected result, as the run made it. */
  base: ResultInfo | undefined;
  /** What the table shows: `base`, or a sorted and filtered view of it. */
  shown: ResultInfo | undefined;
  sort: ResultSort | undefined;
  /** The filter row's text, by column. */
  filters: Record<string, string>;
  filterError: string | undefined;
  /** A view is being made in the engine. */
  viewBusy: boolean;
  /** The file the last export wrote (shown next to the export buttons). */
  exported: string | undefined;
  setExported: (path: string | undefined) => void;
  /** Shows one of the run's results, unsorted and unfiltered. */
  selectResult: (next: ResultInfo | undefined) => void;
  /** Releases the results shown so far and shows the first of `next`. */
  replaceResults: (next: ResultInfo[]) => void;
  /** Drops every result without releasing it: the engine process is gone, and its results with it. */
  forgetResults: () => void;
  /**
   * Shows the results the page's session kept (after a reload), with the sort and
   * filters the page had; on the first attach, releases what an earlier page left (`others`).
   */
  restoreResults: (results: ResultInfo[], others: string[], first: boolean) => void;
  /** Asks for a path (suggested next to `runFile`) and exports the shown rows there. */
  exportShown: (format: ExportFormat, runFile: string | undefined) => Promise<void>;
  /** Cycles a column's sort: ascending, descending, none. */
  onSort: (column: string) => void;
  onFilter: (column: string, text: string) => void;
}

/**
 * The run's results, the one shown and how (sort, filters), and their export.
 *
 * @example
 * const { shown, base, sort, filters, replaceResults, onSort } = useResults(client, { log, refresh, update });
 * replaceResults([e.result, ...(e.shown ?? [])]); // when a run finishes
 * <ResultsTable result={shown} baseRows={base.rows} sort={sort} filters={filters} onSort={onSort} … />
 */
export function useResults(
  client: WorkbenchClient,
  { log, refresh, update }: { log: Log; refresh: () => Promise<void>; update: UpdateLayout },
): Results {
  const [results, setResults] = useState<ResultInfo[]>([]);
  const [base, setBase] = useState<ResultInfo | undefined>();
  const [shown, setShown] = useState<ResultInfo | undefined>();
  const [sort, setSort] = useState<ResultSort | undefined>();
  const [filters, setFilters] = useState<Record<string, string>>({});
  const [filterError, setFilterError] = useState<string | undefined>();
  const [viewBusy, setViewBusy] = useState(false);
  const [exported, setExported] = useState<string | undefined>();
  const viewSeq = useRef(0);

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
  const forgetResults = useCallback(() => {
    resultsRef.current = [];
    setResults([]);
    baseRef.current = shownRef.current = undefined;
    setBase(undefined);
    setShown(undefined);
  }, []);

  const restoreResults = useCallback(
    (next: ResultInfo[], others: string[], first: boolean) => {
      if (first) for (const id of others) void client.release(id).catch(() => {});
      const same = next.length === resultsRef.current.length && next.every((r, i) => r.id === resultsRef.current[i].id);
      if (same) return;
      if (next.length === 0) {
        // The engine no longer has them (it restarted): nothing to release.
        if (resultsRef.current.length > 0) forgetResults();
        return;
      }
      resultsRef.current = next;
      setResults(next);
      const view = storedView();
      const base = next.find((r) => r.id === view?.base) ?? next[0];
      selectResult(base);
      if (view && base.id === view.base && (view.sort || Object.keys(view.filters).length > 0))
        pendingView.current = { base: base.id, sort: view.sort, filters: view.filters };
    },
    [client, selectResult, forgetResults],
  );
  // The table's sort and filters survive a reload too (re-applied to the restored result).
  const pendingView = useRef<StoredView | undefined>(undefined);
  useEffect(() => {
    if (base) sessionStorage.setItem(VIEW_KEY, JSON.stringify({ base: base.id, sort, filters } satisfies StoredView));
  }, [base, sort, filters]);

  const exportShown = async (format: ExportFormat, runFile: string | undefined) => {
    const r = shownRef.current;
    if (!r) return;
    const path = prompt(
      `Export ${r.rows.toLocaleString("en-US")} rows as ${format === "csv" ? "CSV" : "Parquet"} to (path in the workspace):`,
      exportPathFor(runFile, r, format),
    );
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
    const next: ResultSort | undefined =
      sort?.column !== column
        ? { column, descending: false }
        : !sort.descending
          ? { column, descending: true }
          : undefined;
    void applyView(next, filters);
  };
  const onFilter = (column: string, text: string) => void applyView(sort, { ...filters, [column]: text });
  useEffect(() => {
    const p = pendingView.current;
    if (!p || base?.id !== p.base) return;
    pendingView.current = undefined;
    void applyView(p.sort, p.filters);
  }, [base]);

  return {
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
  };
}
