// Errors of failed runs; clicking one jumps to its line in the editor.
import type { SerializedError } from "../../engine/common/errors.js";

export interface Problem {
  error: SerializedError;
  /** The workspace file the location names, when it is one. */
  file: string | undefined;
  line: number;
  column: number;
  /** Who found it, when not the engine ("TypeScript 2322"). */
  source?: string;
}

export function ProblemsPanel(props: { problems: Problem[]; onJump(p: Problem): void }) {
  if (props.problems.length === 0) return <div className="empty">No problems.</div>;
  return (
    <div className="problems" data-testid="problems">
      {props.problems.map((p, i) => (
        <div
          key={i}
          className={`problem${p.source ? " problem-types" : ""}`}
          onClick={() => props.onJump(p)}
          data-problem-line={p.line}
        >
          <span className="problem-icon">✕</span>
          <span className="problem-msg">{p.error.message}</span>
          <span className="problem-code">{p.source ?? p.error.code}</span>
          <span className="problem-loc">{p.file ? `${p.file}:${p.line}:${p.column}` : (p.error.location ?? "")}</span>
        </div>
      ))}
    </div>
  );
}
