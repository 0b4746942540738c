// A data file of the workspace (CSV, Parquet, …) opened from the explorer: its first
// rows in the results grid, in place of the editor (such a file is not run).
import type { EngineClient } from "../../engine/common/rpc.js";
import { ResultsTable } from "./ResultsTable.js";
import type { Preview } from "./state/use_workspace.js";

export function PreviewPane(props: { client: EngineClient; path: string; preview: Preview; onError(m: string): void }) {
  const { preview } = props;
  return (
    <div className="preview-pane" data-testid="preview">
      <div className="preview-bar">
        <strong>{props.path}</strong>
        <span className="muted">
          {preview === "loading"
            ? "reading…"
            : "result" in preview
              ? `preview: the first ${preview.result.rows.toLocaleString("en-US")} rows, ${preview.result.schema.length} columns — read it in a pipeline (readCsv / readParquet) to work with all of it`
              : ""}
        </span>
      </div>
      {preview !== "loading" && "error" in preview && (
        <div className="empty error-text" data-testid="preview-error">
          {preview.error}
        </div>
      )}
      {preview !== "loading" && "result" in preview && (
        <div className="preview-host">
          <ResultsTable
            client={props.client}
            result={preview.result}
            baseRows={preview.result.rows}
            sort={undefined}
            filters={{}}
            filterError={undefined}
            busy={false}
            readOnly
            onSort={() => {}}
            onFilter={() => {}}
            onError={props.onError}
          />
        </div>
      )}
    </div>
  );
}
