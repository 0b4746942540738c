// The workbench's keyboard shortcuts outside the editor (Monaco has its own
// commands for them): a hook of its own so App only lays out panels.
import { useEffect } from "react";

/**
 * Ctrl/Cmd+S saves and Ctrl/Cmd+Enter runs, wherever the focus is.
 *
 * @example
 * useShortcuts({ save, run: runActive });
 */
export function useShortcuts({ save, run }: { save: () => Promise<void>; run: () => Promise<void> }): void {
  // Ctrl/Cmd+S and Ctrl/Cmd+Enter also work when the focus is outside the editor.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey)) return;
      if (e.key === "s") (e.preventDefault(), void save());
      else if (e.key === "Enter") (e.preventDefault(), void run());
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [save, run]);
}
