// The result grid: virtualized rows (react-virtual) fetched block by block with
// page() as they scroll into view, columns (react-table) sized and resizable,
// headers that sort in the engine, a filter row, per-column profiles that load
// after the first rows, and cell selection with Ctrl/Cmd+C.
import {
  columnResizingFeature,
  columnSizingFeature,
  tableFeatures,
  useTable,
  type ColumnDef,
} from "@tanstack/react-table";
import { useVirtualizer } from "@tanstack/react-virtual";
import { useCallback, useEffect, useMemo, useReducer, useRef, useState, type KeyboardEvent } from "react";
import type { ColumnProfile, EngineClient, ResultInfo, ResultSort, WireValue } from "../../engine/common/rpc.js";
import { formatCell, toTsv } from "../common/format.js";
import { PageCache } from "../common/page_cache.js";
import { scrollHeightFor, scrollRatio } from "../common/virtual_scale.js";
import { ProfileBadge } from "./ProfileBadge.js";

const ROW_HEIGHT = 24;
/** The sticky header: a title row (30 px) and a filter row (24 px). */
const HEAD_HEIGHT = 54;
const features = tableFeatures({ columnSizingFeature, columnResizingFeature });
type Row = Record<string, never>;

export interface ResultsTableProps {
  client: EngineClient;
  result: ResultInfo;
  /** Rows of the result before filters (for the status line). */
  baseRows: number;
  sort: ResultSort | undefined;
  filters: Record<string, string>;
  filterError: string | undefined;
  busy: boolean;
  onSort(column: string): void;
  onFilter(column: string, text: string): void;
  onError(message: string): void;
}

interface Selection {
  row: number;
  col: number;
  row2: number;
  col2: number;
}

export function ResultsTable(props: ResultsTableProps) {
  const { client, result } = props;
  const scroller = useRef<HTMLDivElement>(null);
  const [, repaint] = useReducer((n: number) => n + 1, 0);
  const cache = useMemo(() => new PageCache(result.rows, { blockRows: 256, maxBlocks: 80 }), [result]);
  const [profiles, setProfiles] = useState<Record<string, ColumnProfile | "loading" | undefined>>({});
  const [sel, setSel] = useState<Selection | undefined>();
  const names = useMemo(() => result.schema.map((f) => f.name), [result]);

  const columns = useMemo<ColumnDef<typeof features, Row>[]>(
    () =>
      result.schema.map((f) => ({
        id: f.name,
        header: f.name,
        size: Math.min(320, Math.max(110, f.name.length * 9 + 60)),
        minSize: 60,
      })),
    [result],
  );
  const table = useTable({ features, columns, data: [] as Row[], columnResizeMode: "onChange" });
  const headers = table.getHeaderGroups()[0]?.headers ?? [];
  const widths = headers.map((h) => h.getSize());
  const numWidth = 18 + 8 * String(result.rows).length;
  const totalWidth = widths.reduce((a, b) => a + b, numWidth);

  const virtualHeight = result.rows * ROW_HEIGHT + HEAD_HEIGHT + ROW_HEIGHT;
  const heightRef = useRef(virtualHeight);
  heightRef.current = virtualHeight;
  const ratio = (el: HTMLElement) => scrollRatio(heightRef.current, el.scrollHeight, el.clientHeight);

  const virtualizer = useVirtualizer({
    count: result.rows,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 8,
    paddingStart: HEAD_HEIGHT,
    paddingEnd: ROW_HEIGHT,
    // Real scroll pixels map onto the (possibly much taller) virtual list.
    observeElementOffset: (instance, cb) => {
      const el = instance.scrollElement;
      if (!el) return;
      const handler = () => cb(el.scrollTop * ratio(el), true);
      handler();
      el.addEventListener("scroll", handler, { passive: true });
      return () => el.removeEventListener("scroll", handler);
    },
    scrollToFn: (offset, _opts, instance) => {
      const el = instance.scrollElement;
      el?.scrollTo({ top: offset / ratio(el) });
    },
  });

  // A new result starts at the top with a clean selection.
  useEffect(() => {
    setSel(undefined);
    scroller.current?.scrollTo({ top: 0 });
  }, [result.id]);

  const items = virtualizer.getVirtualItems();
  const first = items[0]?.index ?? 0;
  const last = items[items.length - 1]?.index ?? -1;

  // Fetch the blocks the viewport needs (debounced so a scrollbar drag through millions of rows does not ask for all of them).
  useEffect(() => {
    let stale = false;
    const timer = setTimeout(() => {
      for (const want of cache.missing(first, last)) {
        cache.loading(want.offset);
        client.page(result.id, want.offset, want.limit).then(
          (p) => {
            cache.put(p.offset, p.values);
            if (!stale) repaint();
          },
          (e: Error) => {
            cache.failed(want.offset);
            if (!stale) props.onError(e.message);
          },
        );
      }
    }, 30);
    return () => {
      stale = true;
      clearTimeout(timer);
    };
  }, [cache, first, last, client, result.id]);

  // Profiles load one column at a time once the first rows are in, never ahead of them.
  useEffect(() => {
    let stale = false;
    setProfiles({});
    void (async () => {
      await new Promise((r) => setTimeout(r, 250));
      for (const f of result.schema) {
        if (stale) return;
        setProfiles((p) => ({ ...p, [f.name]: "loading" }));
        try {
          const prof = await client.profile(result.id, f.name);
          if (!stale) setProfiles((p) => ({ ...p, [f.name]: prof }));
        } catch {
          if (!stale) setProfiles((p) => ({ ...p, [f.name]: undefined }));
          return; // the result was released (a newer run): stop quietly
        }
      }
    })();
    return () => {
      stale = true;
    };
  }, [client, result]);

  const copy = useCallback(async () => {
    if (!sel) return;
    const r0 = Math.min(sel.row, sel.row2),
      r1 = Math.max(sel.row, sel.row2);
    const c0 = Math.min(sel.col, sel.col2),
      c1 = Math.max(sel.col, sel.col2);
    const rows: WireValue[][] = [];
    const cols = names.slice(c0, c1 + 1);
    for (let off = r0; off <= r1; off += 10_000) {
      const p = await client.page(result.id, off, Math.min(10_000, r1 + 1 - off), cols);
      for (let i = 0; i < (p.values[0]?.length ?? 0); i++) rows.push(p.values.map((c) => c[i]));
    }
    const text = toTsv(rows);
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // Without clipboard permission (plain http), fall back to a hidden textarea.
      const ta = document.createElement("textarea");
      ta.value = text;
      document.body.append(ta);
      ta.select();
      document.execCommand("copy");
      ta.remove();
    }
  }, [sel, names, client, result.id]);

  const onKeyDown = (e: KeyboardEvent) => {
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "c") {
      e.preventDefault();
      void copy();
    }
  };

  const offset = virtualizer.scrollOffset ?? 0;
  const realTop = scroller.current?.scrollTop ?? 0;
  const inSel = (r: number, c: number) =>
    sel !== undefined &&
    r >= Math.min(sel.row, sel.row2) &&
    r <= Math.max(sel.row, sel.row2) &&
    c >= Math.min(sel.col, sel.col2) &&
    c <= Math.max(sel.col, sel.col2);

  return (
    <div className="results" tabIndex={0} onKeyDown={onKeyDown} data-testid="results">
      <div className="results-scroller" ref={scroller}>
        <div style={{ height: scrollHeightFor(virtualHeight), width: totalWidth, position: "relative" }}>
          <div className="results-head" style={{ width: totalWidth }}>
            <div className="tr">
              <div className="th rownum" style={{ width: numWidth }}>
                #
              </div>
              {headers.map((h, i) => {
                const f = result.schema[i];
                const s = props.sort?.column === f.name ? (props.sort.descending ? "▼" : "▲") : "";
                return (
                  <div
                    key={h.id}
                    className="th"
                    style={{ width: widths[i] }}
                    title={`${f.name}: ${f.type} — click to sort`}
                    data-column={f.name}
                  >
                    <button className="th-sort" onClick={() => props.onSort(f.name)}>
                      <span className="th-name">{f.name}</span>
                      <span className="th-sortmark">{s}</span>
                    </button>
                    <span className="th-type">{f.type}</span>
                    <ProfileBadge profile={profiles[f.name]} />
                    <div className="resizer" onMouseDown={h.getResizeHandler()} onTouchStart={h.getResizeHandler()} />
                  </div>
                );
              })}
            </div>
            <div className="tr filter-row">
              <div
                className="th rownum"
                style={{ width: numWidth }}
                title="filter: 5..10, >= 5, < 2024-01-01, = NYC, null"
              >
                ⌕
              </div>
              {result.schema.map((f, i) => (
                <div key={f.name} className="th" style={{ width: widths[i] }}>
                  <FilterInput column={f.name} value={props.filters[f.name] ?? ""} onCommit={props.onFilter} />
                </div>
              ))}
            </div>
          </div>
          {items.map((it) => {
            const top = it.start - offset + realTop;
            const loaded = cache.has(it.index);
            return (
              <div
                key={it.key}
                className={`tr row${it.index % 2 ? " odd" : ""}`}
                style={{ transform: `translateY(${top}px)`, width: totalWidth }}
                data-row={it.index}
              >
                <div className="td rownum" style={{ width: numWidth }}>
                  {it.index + 1}
                </div>
                {names.map((_, c) => {
                  const v = cache.cell(it.index, c);
                  return (
                    <div
                      key={c}
                      className={`td${v === null ? " null" : ""}${typeof v === "number" ? " num" : ""}${inSel(it.index, c) ? " selected" : ""}`}
                      style={{ width: widths[c] }}
                      onMouseDown={(e) =>
                        setSel(
                          e.shiftKey && sel
                            ? { ...sel, row2: it.index, col2: c }
                            : { row: it.index, col: c, row2: it.index, col2: c },
                        )
                      }
                    >
                      {loaded ? formatCell(v) : <span className="loading-cell" />}
                    </div>
                  );
                })}
              </div>
            );
          })}
        </div>
      </div>
      <div className="results-status">
        <span data-testid="row-count">
          {result.rows.toLocaleString("en-US")} rows
          {result.rows !== props.baseRows ? ` of ${props.baseRows.toLocaleString("en-US")}` : ""}
        </span>
        <span>{result.schema.length} columns</span>
        {props.busy && <span className="spinner-text">updating view…</span>}
        {props.filterError && <span className="error-text">{props.filterError}</span>}
        <span className="grow" />
        {sel && (
          <span>
            row {Math.min(sel.row, sel.row2) + 1} · {names[Math.min(sel.col, sel.col2)]} — Ctrl+C copies
          </span>
        )}
      </div>
    </div>
  );
}

function FilterInput(props: { column: string; value: string; onCommit(column: string, text: string): void }) {
  const [text, setText] = useState(props.value);
  useEffect(() => setText(props.value), [props.value]);
  return (
    <input
      className="filter-input"
      placeholder="filter"
      value={text}
      aria-label={`filter ${props.column}`}
      onChange={(e) => setText(e.target.value)}
      onKeyDown={(e) => {
        if (e.key === "Enter") props.onCommit(props.column, text);
        if (e.key === "Escape") {
          setText("");
          props.onCommit(props.column, "");
        }
      }}
      onBlur={() => text !== props.value && props.onCommit(props.column, text)}
    />
  );
}
