// The layout that survives a reload (panel sizes, open files, active file, bottom
// tab, theme): read from localStorage once and stored again on every change. Its
// own hook because the workspace, the run and the results all move it (open a
// file, jump to Problems) while App only draws it.
import { useCallback, useLayoutEffect, useState } from "react";
import { LAYOUT_KEY, parseLayout, type Layout } from "../../common/layout.js";

/** Changes the layout, given the latest one. */
export type UpdateLayout = (f: (l: Layout) => Layout) => void;

export interface LayoutState {
  layout: Layout;
  /** The same function on every render. */
  update: UpdateLayout;
}

/**
 * The persisted workbench layout and the function that changes it.
 *
 * @example
 * const { layout, update } = useLayout();
 * <Splitter size={layout.sidebarWidth} onResize={(n) => update((l) => ({ ...l, sidebarWidth: n }))} … />
 */
export function useLayout(): LayoutState {
  const [layout, setLayout] = useState<Layout>(() => parseLayout(localStorage.getItem(LAYOUT_KEY)));
  const update = useCallback((f: (l: Layout) => Layout) => setLayout((l) => f(l)), []);

  // A layout effect, not a plain effect: it stores in the same commit that draws the
  // layout, so a reload or close right after a drag keeps its last size.
  useLayoutEffect(() => {
    localStorage.setItem(LAYOUT_KEY, JSON.stringify(layout));
    document.documentElement.dataset.theme = layout.theme;
  }, [layout]);

  return { layout, update };
}
