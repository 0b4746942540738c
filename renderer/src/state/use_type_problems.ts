// TypeScript's own errors in the open files (Monaco's squiggles) as problems, so
// the Problems panel lists them next to the engine's, kept up to date as you type.
import { useEffect, useState, type RefObject } from "react";
import { monaco } from "../monaco_setup.js";
import type { Problem } from "../ProblemsPanel.js";
import type { Open } from "./use_workspace.js";

/**
 * The TypeScript errors of the open files, refreshed whenever Monaco's markers change.
 *
 * @example
 * const typeProblems = useTypeProblems(opened);
 * <ProblemsPanel problems={[...problems, ...typeProblems]} … />
 */
export function useTypeProblems(opened: RefObject<Map<string, Open>>): Problem[] {
  const [problems, setProblems] = useState<Problem[]>([]);
  useEffect(() => {
    const collect = () => {
      const byUri = new Map([...opened.current].map(([path, o]) => [o.model.uri.toString(), path]));
      const next: Problem[] = [];
      for (const m of monaco.editor.getModelMarkers({ owner: "typescript" })) {
        const file = byUri.get(m.resource.toString());
        if (!file || m.severity !== monaco.MarkerSeverity.Error) continue;
        const code = typeof m.code === "object" ? m.code?.value : m.code;
        next.push({
          error: { name: "TypeScript", code: "BASIN_SYNTAX", message: m.message },
          source: code ? `TypeScript ${code}` : "TypeScript",
          file,
          line: m.startLineNumber,
          column: m.startColumn,
        });
      }
      setProblems((old) => (JSON.stringify(old) === JSON.stringify(next) ? old : next));
    };
    collect();
    const sub = monaco.editor.onDidChangeMarkers(collect);
    return () => sub.dispose();
  }, [opened]);
  return problems;
}
