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
import type { EngineClient, ResultInfo, ResultSort, WireValue } from "../../engine/common/rpc.js";
import { formatCell, toTsv } from "../common/format.js";
import { PageCache } from "../common/page_cache.js";
import { revealTop, scrollHeightFor, scrollRatio } from "../common/virtual_scale.js";
import { copyText } from "./clipboard.js";
import { ProfileBadge } from "./ProfileBadge.js";
import { useProfiles, type ProfileState } from "./state/use_profiles.js";
import { textWidth } from "./text_width.js";

const ROW_HEIGHT = 24;
/** The sticky header: a title row (name, then type and profile: 42 px) and a filter row (24 px). */
const HEAD_HEIGHT = 66;
const FILTER_HEIGHT = 24;
/** Widest a column starts (it can be dragged wider). */
const MAX_START_WIDTH = 360;
/** The profile badge: its 48 px histogram, the null share ("12% ∅") and gaps. */
const BADGE_WIDTH = 48 + 44 + 8;

/**
 * A column's starting width: its name must be readable in full (the header's first
 * line), its type and profile badge must fit (the second line), and so must its first
 * values; capped, with the name's full text in the tooltip when it is longer still.
 */
function startWidth(name: string, type: string, values: readonly WireValue[]): number {
  const nameW = textWidth(name, "600 12px system-ui, sans-serif") + 12 /* sort mark */ + 16;
  const metaW = textWidth(type, "10px ui-monospace, monospace") + BADGE_WIDTH + 16;
  let valueW = 0;
  for (const v of values) valueW = Math.max(valueW, textWidth(formatCell(v), "12px ui-monospace, monospace") + 16);
  return Math.ceil(Math.min(MAX_START_WIDTH, Math.max(70, nameW, metaW, valueW)));
}
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
  /** A preview: no sorting and no filter row. */
  readOnly?: boolean;
  /** The columns' profiles (the summary panel's); absent: the table loads its own. */
  profiles?: Record<string, ProfileState>;
  /** Set to a column name to scroll it into view (the summary panel's links). */
  revealColumn?: { name: string; seq: number };
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
  const [sel, setSel] = useState<Selection | undefined>();
  const names = useMemo(() => result.schema.map((f) => f.name), [result]);

  // Widths from the names, types and the first values (once the first block is in).
  const firstValues = cache.has(0) ? Math.min(result.rows, 64) : 0;
  const columns = useMemo<ColumnDef<typeof features, Row>[]>(
    () =>
      result.schema.map((f, c) => ({
        id: f.name,
        header: f.name,
        size: startWidth(
          f.name,
          f.type,
          Array.from({ length: firstValues }, (_, r) => cache.cell(r, c) ?? null),
        ),
        minSize: 50,
      })),
    [result, firstValues > 0],
  );
  const table = useTable({ features, columns, data: [] as Row[], columnResizeMode: "onChange" });
  const headers = table.getHeaderGroups()[0]?.headers ?? [];
  const widths = headers.map((h) => h.getSize());
  const numWidth = 18 + 8 * String(result.rows).length;
  const totalWidth = widths.reduce((a, b) => a + b, numWidth);

  const headHeight = props.readOnly ? HEAD_HEIGHT - FILTER_HEIGHT : HEAD_HEIGHT;
  const virtualHeight = result.rows * ROW_HEIGHT + headHeight + ROW_HEIGHT;
  const heightRef = useRef(virtualHeight);
  heightRef.current = virtualHeight;
  // Of the content's own height, not el.scrollHeight: rows drawn at the bottom can reach past
  // the content and make that grow (Ctrl+End then stopped 216 px short of the last row).
  const ratio = (el: HTMLElement) =>
    scrollRatio(heightRef.current, scrollHeightFor(heightRef.current), el.clientHeight);

  const virtualizer = useVirtualizer({
    count: result.rows,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 8,
    paddingStart: headHeight,
    paddingEnd: ROW_HEIGHT,
    // Real scroll pixels map onto the (possibly much taller) virtual list.
    observeElementOffset: (instance, cb) => {
      const el = instance.scrollElement;
      if (!el) return;
      const handler = () =>
        cb(Math.min(el.scrollTop * ratio(el), Math.max(0, heightRef.current - el.clientHeight)), true);
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

  // Profiles come from the summary panel's hook when the App passes them, else (a preview) load here.
  const own = useProfiles(client, result, props.profiles === undefined);
  const profiles = props.profiles ?? own.byColumn;

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
    // A header row first, as spreadsheets expect.
    await copyText(toTsv([cols, ...rows]));
  }, [sel, names, client, result.id]);

  /** Scrolls so that cell (row, col) is in view. */
  const reveal = (row: number, col: number) => {
    const el = scroller.current;
    if (!el) return;
    const top = revealTop(headHeight + row * ROW_HEIGHT, ROW_HEIGHT, {
      scrollTop: el.scrollTop,
      clientHeight: el.clientHeight,
      ratio: ratio(el),
      head: headHeight,
    });
    if (top !== undefined) el.scrollTop = top;
    const left = numWidth + widths.slice(0, col).reduce((a, b) => a + b, 0);
    const right = left + (widths[col] ?? 0);
    if (left - numWidth < el.scrollLeft) el.scrollLeft = left - numWidth;
    else if (right > el.scrollLeft + el.clientWidth) el.scrollLeft = right - el.clientWidth;
  };

  // The summary panel asked for a column: bring it into view and select its cell in the current row.
  useEffect(() => {
    const want = props.revealColumn;
    if (!want) return;
    const c = names.indexOf(want.name);
    if (c < 0) return;
    const row = sel?.row2 ?? 0;
    setSel({ row, col: c, row2: row, col2: c });
    const el = scroller.current;
    if (el) el.scrollLeft = widths.slice(0, c).reduce((a, b) => a + b, 0);
  }, [props.revealColumn?.seq]);

  const onKeyDown = (e: KeyboardEvent) => {
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === "c") {
      e.preventDefault();
      void copy();
      return;
    }
    if (e.target instanceof HTMLInputElement) return; // a filter box
    // Arrows move the cell (Shift extends the selection), Page keys move a screenful,
    // Home/End go to the row's ends (with Ctrl/Cmd: the first/last row).
    const page = Math.max(1, Math.floor((scroller.current?.clientHeight ?? 240) / ROW_HEIGHT) - 3);
    const lastRow = result.rows - 1,
      lastCol = names.length - 1;
    if (lastRow < 0 || lastCol < 0) return;
    const at = sel ? { row: sel.row2, col: sel.col2 } : { row: 0, col: 0 };
    const ctrl = e.ctrlKey || e.metaKey;
    const moves: Record<string, () => { row: number; col: number }> = {
      ArrowDown: () => ({ ...at, row: ctrl ? lastRow : at.row + 1 }),
      ArrowUp: () => ({ ...at, row: ctrl ? 0 : at.row - 1 }),
      ArrowRight: () => ({ ...at, col: ctrl ? lastCol : at.col + 1 }),
      ArrowLeft: () => ({ ...at, col: ctrl ? 0 : at.col - 1 }),
      PageDown: () => ({ ...at, row: at.row + page }),
      PageUp: () => ({ ...at, row: at.row - page }),
      Home: () => (ctrl ? { row: 0, col: 0 } : { ...at, col: 0 }),
      End: () => (ctrl ? { row: lastRow, col: lastCol } : { ...at, col: lastCol }),
    };
    const move = moves[e.key];
    if (!move) return;
    e.preventDefault();
    const to = move();
    const row = Math.min(lastRow, Math.max(0, to.row)),
      col = Math.min(lastCol, Math.max(0, to.col));
    setSel(e.shiftKey && sel ? { ...sel, row2: row, col2: col } : { row, col, row2: row, col2: col });
    reveal(row, col);
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
                    className="th th-title"
                    style={{ width: widths[i] }}
                    title={`${f.name} (${f.type}) — click the name to sort`}
                    data-column={f.name}
                  >
                    <button
                      className="th-sort"
                      onClick={() => props.onSort(f.name)}
                      disabled={props.readOnly}
                      data-th-sort={f.name}
                    >
                      <span className="th-name">{f.name}</span>
                      <span className="th-sortmark">{s}</span>
                    </button>
                    <span className="th-meta">
                      <span className="th-type">{f.type}</span>
                      <ProfileBadge profile={profiles[f.name]} />
                    </span>
                    <div className="resizer" onMouseDown={h.getResizeHandler()} onTouchStart={h.getResizeHandler()} />
                  </div>
                );
              })}
            </div>
            <div className="tr filter-row" hidden={props.readOnly}>
              <div className="th rownum" style={{ width: numWidth }} title={FILTER_HELP}>
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
                      data-col={c}
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
      {result.rows === 0 && (
        <div className="results-none" data-testid="no-rows">
          {Object.values(props.filters).some((t) => t.trim() !== "")
            ? `No rows match the filter${Object.values(props.filters).filter((t) => t.trim() !== "").length > 1 ? "s" : ""} (of ${props.baseRows.toLocaleString("en-US")} rows). Clear a filter with Esc in its box.`
            : "The result has no rows."}
        </div>
      )}
      <div className="results-status">
        <span data-testid="row-count">
          {result.rows.toLocaleString("en-US")} rows
          {result.rows !== props.baseRows ? ` of ${props.baseRows.toLocaleString("en-US")}` : ""}
        </span>
        <span>{result.schema.length} columns</span>
        {props.busy && <span className="spinner-text">updating view…</span>}
        {props.filterError && (
          <span className="error-text" data-testid="filter-error">
            {props.filterError}
          </span>
        )}
        <span className="grow" />
        {sel && (
          <span>
            row {sel.row2 + 1} · {names[sel.col2]}
            {sel.row !== sel.row2 || sel.col !== sel.col2
              ? ` · ${Math.abs(sel.row2 - sel.row) + 1} × ${Math.abs(sel.col2 - sel.col) + 1} cells`
              : ""}{" "}
            — arrows move, Shift extends, Ctrl+C copies with the header
          </span>
        )}
      </div>
    </div>
  );
}

/** The filter row's syntax, as its tooltip says it. */
export const FILTER_HELP = [
  "Filter (Enter applies, Esc clears):",
  "  = v   != v   < v   <= v   > v   >= v   (also ≠ ≤ ≥)",
  "  5..10  or  between 5 and 10   (both ends included)",
  "  text   contains text, any case   ·   ^text  or  starts with text",
  "  null   ·   not null",
].join("\n");

function FilterInput(props: { column: string; value: string; onCommit(column: string, text: string): void }) {
  const [text, setText] = useState(props.value);
  useEffect(() => setText(props.value), [props.value]);
  return (
    <input
      className="filter-input"
      placeholder="filter…"
      title={FILTER_HELP}
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
