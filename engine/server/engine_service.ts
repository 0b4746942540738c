// The engine side of the workbench contract (engine/common/rpc.ts): runs
// pipeline files of a workspace on a cluster, keeps their results for paging, and
// reports progress as events. Transports (WebSocket, Electron) wrap one of these.
import { existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { Cluster } from "../cluster/cluster.js";
import { defaultCluster, localPart } from "../cluster/default.js";
import type { ArrayResult } from "../run/run_plan.js";
import { BasinError } from "../common/errors.js";
import type {
  ArrayInfo,
  ClusterStatus,
  ColumnProfile,
  EngineClient,
  EngineEvent,
  ExportFormat,
  ExportSummary,
  Page,
  ResultFilter,
  ResultInfo,
  ResultSort,
  WorkspaceInfo,
} from "../common/rpc.js";
import type { ArrayNode } from "../common/array_plan.js";
import { arrayHeatmap, arrayTable } from "./array_result.js";
import { native } from "../native/addon.js";
import { runPipeline } from "../session/run_pipeline.js";
import { ResultStore } from "./results.js";
import { Workspace } from "./workspace.js";

export interface EngineServiceOptions {
  /** The folder the workbench opens. */
  root: string;
  /**
   * Where runs go (default: the process's local cluster). Results stay in this
   * process either way: they are paged, viewed and exported here, and arrays run on
   * the local cluster (a Dask cluster runs frames only).
   */
  cluster?: Cluster;
  emit: (e: EngineEvent) => void;
}

/**
 * @example
 * const engine = new EngineService({ root: ".", emit: (e) => console.log(e) });
 * await engine.run("examples/taxi.ts");
 */
export class EngineService implements EngineClient {
  readonly workspaceFolder: Workspace;
  private readonly results: ResultStore;
  private readonly runs = new Map<string, AbortController>();
  private counter = 0;

  constructor(private readonly options: EngineServiceOptions) {
    this.workspaceFolder = new Workspace(options.root);
    // Results stay here, and their views run here, wherever runs go.
    this.results = new ResultStore({ cluster: localPart(options.cluster) });
  }

  async workspace(): Promise<WorkspaceInfo> {
    return this.workspaceFolder.list();
  }

  async readFile(path: string): Promise<string> {
    return this.workspaceFolder.read(path);
  }

  async writeFile(path: string, text: string): Promise<void> {
    if (typeof text !== "string") throw new BasinError("BASIN_IO", "writeFile needs the file's text");
    this.workspaceFolder.write(path, text);
  }

  /** Starts a run and returns at once; its outcome arrives as runFinished or runFailed. */
  async run(path: string, source?: string): Promise<{ runId: string }> {
    const file = this.workspaceFolder.path(path);
    const runId = `run-${++this.counter}`;
    const ac = new AbortController();
    this.runs.set(runId, ac);
    this.options.emit({ type: "runStarted", runId, file: path });
    const t0 = performance.now();
    const elapsedMs = () => Math.round(performance.now() - t0);
    void (async () => {
      try {
        // The default export first, then each show() in call order; a failure frees what was kept.
        const kept: ResultInfo[] = [];
        let tasks = 0;
        try {
          await runPipeline(
            file,
            {
              cluster: this.options.cluster,
              source: typeof source === "string" ? source : undefined,
              isolate: true,
              signal: ac.signal,
              onProgress: (progress) => this.options.emit({ type: "progress", runId, progress }),
            },
            (r) => {
              if (r.kind === "array") kept.push(this.keepArray(r.node, r.array, runId));
              else if (r.kind === "frame") {
                tasks += r.parts.tasks;
                if (r.parts.skippedLines > 0)
                  this.options.emit({
                    type: "log",
                    level: "warn",
                    text: `${path}${r.name === undefined ? "" : ` (${r.name})`}: skipped ${r.parts.skippedLines} malformed line(s)`,
                  });
                // Kept as the result's parts: a result larger than the memory limit stays spillable.
                kept.push(
                  this.results.keep(r.parts.refs, runId, {
                    name: r.name,
                    kind: r.plan.root.kind === "fromBag" && r.plan.root.raw ? "bag" : undefined,
                  }),
                );
              }
            },
          );
        } catch (e) {
          for (const r of kept) this.results.release(r.id);
          throw e;
        }
        const [result, ...shown] = kept;
        this.options.emit({
          type: "runFinished",
          runId,
          result,
          ...(shown.length > 0 ? { shown } : {}),
          elapsedMs: elapsedMs(),
          tasks,
        });
      } catch (e) {
        this.options.emit({ type: "runFailed", runId, error: BasinError.from(e).toJSON(), elapsedMs: elapsedMs() });
      } finally {
        this.runs.delete(runId);
      }
    })();
    return { runId };
  }

  /** Keeps a computed array default export's elements as a table result of kind "array". */
  private keepArray(node: ArrayNode, r: ArrayResult, runId: string): ResultInfo {
    const ref = native().tableFromJs(arrayTable(r));
    const heatmap = arrayHeatmap(r);
    const array: ArrayInfo = {
      shape: r.shape,
      dtype: r.dtype,
      chunks: node.kind === "mask" ? [[r.shape[0]]] : node.chunks.map((c) => [...c]),
      ...(heatmap ? { heatmap } : {}),
    };
    return this.results.keep(ref, runId, { kind: "array", array });
  }

  async cancel(runId: string): Promise<void> {
    this.runs.get(runId)?.abort("cancelled");
  }

  async page(resultId: string, offset: number, limit: number, columns?: string[]): Promise<Page> {
    return this.results.page(resultId, offset, limit, columns);
  }

  view(resultId: string, sort: ResultSort[], filters: ResultFilter[]): Promise<ResultInfo> {
    return this.results.view(resultId, sort ?? [], filters ?? []);
  }

  profile(resultId: string, column: string): Promise<ColumnProfile> {
    return this.results.profile(resultId, column);
  }

  async release(resultId: string): Promise<void> {
    this.results.release(resultId);
  }

  /** Writes a result into the workspace as CSV or Parquet (the path is checked to stay inside it). */
  async exportResult(resultId: string, path: string, format: ExportFormat): Promise<ExportSummary> {
    const file = this.workspaceFolder.path(path);
    // Like saving a file, exporting into a new subfolder creates it.
    if (!existsSync(dirname(file))) mkdirSync(dirname(file), { recursive: true });
    const out = await this.results.export(resultId, file, format);
    this.options.emit({ type: "log", level: "info", text: `exported ${out.rows} rows to ${path} (${format})` });
    return { path, rows: out.rows, bytes: out.bytes };
  }

  cluster(): Promise<ClusterStatus> {
    return (this.options.cluster ?? defaultCluster()).clusterStatus();
  }

  /** Cancels every run and frees every result. */
  async close(): Promise<void> {
    for (const ac of this.runs.values()) ac.abort("closing");
    while (this.runs.size > 0) await new Promise((r) => setTimeout(r, 10));
    this.results.clear();
  }
}
