// "Copy as code": the table's filters and sort as Basin pipeline lines, copied and
// shown, so what was explored by clicking becomes part of the pipeline.
import { useState } from "react";
import type { ResultFilter, ResultSort } from "../../engine/common/rpc.js";
import type { Field } from "../../engine/common/types.js";
import { parseFilter } from "../common/filter_syntax.js";
import { viewCode } from "../common/view_code.js";
import { copyText } from "./clipboard.js";

export function ViewCodeButton(props: {
  schema: readonly Field[];
  sort: ResultSort | undefined;
  filters: Record<string, string>;
}) {
  const [shown, setShown] = useState<string | undefined>();
  const make = (): string => {
    const parsed: ResultFilter[] = [];
    for (const [c, t] of Object.entries(props.filters)) {
      try {
        const f = parseFilter(c, props.schema.find((x) => x.name === c)?.type ?? "string", t);
        if (f) parsed.push(f);
      } catch {
        /* a filter the table refused is not part of the view */
      }
    }
    return viewCode(parsed, props.sort, props.schema);
  };
  const onClick = async () => {
    if (shown !== undefined) return setShown(undefined);
    const code = make();
    const text = code === "" ? "// The table is neither filtered nor sorted: no lines to add." : code;
    if (code !== "") await copyText(code);
    setShown(text);
  };
  return (
    <span className="view-code">
      <button
        className="btn small"
        onClick={() => void onClick()}
        title="Copy the table's filters and sort as Basin pipeline lines"
        data-testid="copy-code"
      >
        Copy as code
      </button>
      {shown !== undefined && (
        <div
          className="view-code-pop"
          role="dialog"
          aria-label="the view as code"
          onKeyDown={(e) => {
            if (e.key !== "Escape") return;
            e.stopPropagation();
            setShown(undefined);
          }}
        >
          <div className="muted">Copied. Chain these after the frame in your pipeline (col comes from "basin"):</div>
          <pre data-testid="view-code">{shown}</pre>
          <button className="btn small" onClick={() => setShown(undefined)} autoFocus>
            Close
          </button>
        </div>
      )}
    </span>
  );
}
