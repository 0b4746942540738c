// The workbench layout that survives a reload: panel sizes, open files, active
// tab, theme. Stored as JSON in localStorage; bad or old entries fall back to defaults.

export type BottomTab = "results" | "plot" | "problems" | "output" | "cluster";

export interface Layout {
  sidebarWidth: number;
  /** Height of the bottom panel (results, plots, …) in px. */
  panelHeight: number;
  openFiles: string[];
  activeFile: string | undefined;
  bottomTab: BottomTab;
  theme: "dark" | "light";
  /** The results' column summary panel is open. */
  summary: boolean;
}

export const LAYOUT_KEY = "basin.layout.v1";

export const DEFAULT_LAYOUT: Layout = {
  sidebarWidth: 240,
  panelHeight: 320,
  openFiles: [],
  activeFile: undefined,
  bottomTab: "results",
  theme: "dark",
  summary: true,
};

const TABS: readonly BottomTab[] = ["results", "plot", "problems", "output", "cluster"];

function clamp(n: unknown, lo: number, hi: number, fallback: number): number {
  return typeof n === "number" && Number.isFinite(n) ? Math.min(hi, Math.max(lo, n)) : fallback;
}

/**
 * A layout from its stored text, each field checked.
 *
 * @example
 * parseLayout(localStorage.getItem(LAYOUT_KEY))
 */
export function parseLayout(text: string | null): Layout {
  let raw: Record<string, unknown> = {};
  try {
    const v: unknown = text ? JSON.parse(text) : {};
    if (v && typeof v === "object") raw = v as Record<string, unknown>;
  } catch {
    /* a corrupt entry is replaced on the next save */
  }
  const files = Array.isArray(raw.openFiles) ? raw.openFiles.filter((f): f is string => typeof f === "string") : [];
  return {
    sidebarWidth: clamp(raw.sidebarWidth, 120, 800, DEFAULT_LAYOUT.sidebarWidth),
    panelHeight: clamp(raw.panelHeight, 80, 2000, DEFAULT_LAYOUT.panelHeight),
    openFiles: files,
    activeFile: typeof raw.activeFile === "string" && files.includes(raw.activeFile) ? raw.activeFile : files[0],
    bottomTab: TABS.includes(raw.bottomTab as BottomTab) ? (raw.bottomTab as BottomTab) : DEFAULT_LAYOUT.bottomTab,
    theme: raw.theme === "light" ? "light" : "dark",
    summary: typeof raw.summary === "boolean" ? raw.summary : DEFAULT_LAYOUT.summary,
  };
}
