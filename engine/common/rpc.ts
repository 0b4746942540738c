// The one contract between the workbench (renderer) and the engine. Both
// transports — the desktop preload bridge and the browser's WebSocket — carry
// exactly these requests, responses and events as plain JSON.
import type { SerializedError } from "./errors.js";
import type { DType, Field } from "./types.js";

/** A cell as it crosses the wire: dates "YYYY-MM-DD", timestamps ISO 8601, int64 beyond 2^53 as a decimal string. */
export type WireValue = number | string | boolean | null;

/** A computed result the engine keeps for paging, by id. */
export interface ResultInfo {
  id: string;
  schema: Field[];
  rows: number;
  /** The run that made it, or the result it was sorted/filtered from. */
  source: string;
  /** What the pipeline's default export was: a frame (absent), or a bag whose items are the JSON texts of column "item". */
  kind?: "table" | "bag" | "array";
  /** An array result: its shape, dtype and chunking (the table holds its elements, last axis as columns). */
  array?: ArrayInfo;
  /** The name given to `show(frame, name)` in the pipeline; absent for the default export. */
  name?: string;
}

export interface ArrayInfo {
  shape: number[];
  dtype: string;
  /** Chunk sizes along each axis. */
  chunks: number[][];
  /** 2-D arrays: block means on a grid of at most 128 × 128 cells, row-major; null where a block has no finite value. */
  heatmap?: ArrayHeatmap;
}

export interface ArrayHeatmap {
  rows: number;
  cols: number;
  values: (number | null)[];
  min: number;
  max: number;
}

/** File formats a result can be exported to. */
export type ExportFormat = "csv" | "parquet";

/** What exportResult wrote. */
export interface ExportSummary {
  /** The file, relative to the workspace root. */
  path: string;
  rows: number;
  bytes: number;
}

/** Rows [offset, offset + values[0].length) of some columns of a result. */
export interface Page {
  resultId: string;
  offset: number;
  columns: string[];
  /** Column-major: values[c][r]. */
  values: WireValue[][];
}

export interface ResultSort {
  column: string;
  descending: boolean;
}

/** A comparison of a column with one value (null never matches, as in SQL). */
export type CompareOp = "eq" | "ne" | "lt" | "le" | "gt" | "ge";

/**
 * Keeps rows whose column matches: a substring or prefix of strings (`ignoreCase` to
 * match any case), a closed range (between), a comparison, or nulls / non-nulls only.
 */
export type ResultFilter =
  | { column: string; kind: "contains"; text: string; ignoreCase?: boolean }
  | { column: string; kind: "startsWith"; text: string; ignoreCase?: boolean }
  | { column: string; kind: "range"; min?: WireValue; max?: WireValue }
  | { column: string; kind: "compare"; op: CompareOp; value: WireValue }
  | { column: string; kind: "isNull" }
  | { column: string; kind: "notNull" };

/** Rows of a result drawn uniformly at random (without replacement), in the result's order. */
export interface ResultSample {
  resultId: string;
  columns: string[];
  /** Column-major: values[c][r]. */
  values: WireValue[][];
  /** Rows of the whole result (values hold all of them when it has no more than were asked for). */
  total: number;
}

/** A workspace file's text and its version (a hash of its bytes), for saves that must not overwrite a change on disk. */
export interface OpenedFile {
  text: string;
  version: string;
}

/** A run as the engine remembers it for its session (so a reloaded page shows it again). */
export interface SessionRun {
  runId: string;
  file: string;
  status: "running" | "done" | "failed" | "cancelled";
  /** Milliseconds since it started (running) or its duration (finished). */
  elapsedMs: number;
  tasks?: number;
  error?: SerializedError;
  progress: RunProgress[];
}

/** What a page's session left in the engine: the last run and the results it still holds. */
export interface SessionState {
  sessionId: string;
  /** The last finished run's results (its default export, then each show()). */
  results: ResultInfo[];
  /** Other results the session still holds (views, previews) that the page may release. */
  others: string[];
  run?: SessionRun;
}

/** What a column holds, computed on request (never blocking the first page). */
export interface ColumnProfile {
  column: string;
  type: DType;
  rows: number;
  nulls: number;
  min: WireValue;
  max: WireValue;
  /** Distinct non-null values. */
  distinct?: number;
  /** Numbers: the mean and the sample standard deviation (n − 1). */
  mean?: number | null;
  std?: number | null;
  /** Numbers, dates and timestamps: the median (dates and timestamps in wire form). */
  median?: WireValue;
  /** Numeric and date columns: equal-width bins centred on min … max (integers of a small range: one per value). */
  histogram?: { edges: number[]; counts: number[] };
  /** String and bool columns: the most frequent values. */
  top?: { value: WireValue; count: number }[];
}

export interface WorkspaceInfo {
  root: string;
  /** "user@host:port" when the workspace is on another host (a remote Basin engine over SSH). */
  host?: string;
  /** Paths relative to the root, "/" separated, directories end with "/". */
  files: string[];
}

/** Bytes per memory tier and spill activity since the engine started (limits: -1 = none). */
export interface MemoryStatus {
  host: { bytes: number; limit: number; tables: number };
  disk: { bytes: number; limit: number; tables: number; directory: string };
  /** Bytes Basin holds on its GPUs, in all; `gpus` per GPU (absent without GPU workers). */
  device: { bytes: number };
  gpus?: GpuMemoryStatus[];
  spilled: { tables: number; bytes: number; seconds: number };
  unspilled: { tables: number; bytes: number; seconds: number };
  /** Over the host limit even after spilling: new root tasks wait. */
  overLimit: boolean;
}

/** One GPU's memory as the dashboard shows it. */
export interface GpuMemoryStatus {
  device: number;
  bytes: number;
  limit: number;
  cachedColumns: number;
  /** Cached columns spilled to host (their device copies dropped). */
  spilledColumns: number;
  spilledBytes: number;
  /** Why the GPU is unusable in this process (its work runs on the CPU), or null. */
  broken: string | null;
  /** Copies to and from the device since the engine started, and chains of steps the GPU ran. */
  uploads?: number;
  uploadBytes?: number;
  downloads?: number;
  downloadBytes?: number;
  chains?: number;
  /** Outputs the GPU kept (the store's device tier) since the engine started, and those copied to host for room. */
  keptOutputs?: number;
  keptSpills?: number;
  /**
   * nvidia-smi's latest reading of the whole device (every process's work, not only Basin's):
   * percent of its last sample period a kernel ran (null: the board reports [N/A]), device
   * memory in use and in all. Absent without a reading; GpuAvailability.utilisation says why.
   */
  reading?: { utilisation: number | null; memoryUsed: number | null; memoryTotal: number | null; at: number };
}

/** What a task stream bar stands for: a task's work, moving partitions, or the store's spills and read-backs. */
export type TaskKind = "compute" | "transfer" | "spill" | "disk read";

/** One bar of the task stream: a span of time on a worker (ms on the engine's clock, see TaskStream.now). */
export interface TaskSpan {
  worker: string;
  /** The task's group ("scanCsv→filter"), or what the store did ("spill 12 MiB"). */
  group: string;
  kind: TaskKind;
  start: number;
  end: number;
}

/** Task spans the local cluster recorded after the caller's cursor. */
export interface TaskStream {
  /** The engine's clock now (ms since the epoch), so that the page places bars on its time axis. */
  now: number;
  /** Pass as `since` next time to get only newer spans. */
  next: number;
  spans: TaskSpan[];
}

/** Where a cluster's GPUs stand: how many its workers use, and why none when there are none. */
export interface GpuAvailability {
  workers: number;
  /** Why there is no GPU worker ("this Basin was built without CUDA", "no CUDA device: …"); empty with GPU workers. */
  why: string;
  /** With GPU workers: why their utilisation is not shown (nvidia-smi missing, failed, no reading yet); "" while readings arrive. */
  utilisation?: string;
}

/** A run the engine remembers for the dashboard's history. */
export interface RunRecord {
  runId: string;
  file: string;
  status: "running" | "done" | "failed" | "cancelled";
  /** ms since the epoch. */
  startedAt: number;
  elapsedMs: number;
  tasks: number;
  /** Each result: its name (absent for the default export), rows, and the optimized plan as explain() prints it. */
  results: { name?: string; rows?: number; explain: string }[];
  error?: string;
}

/** A 2-D histogram of two columns over every row of a result, made on the workers (a binned scatter plot). */
export interface Bins2d {
  resultId: string;
  x: string;
  y: string;
  /** The cells' outer edges (dates as days, timestamps as µs): cells are centred on min … max, so these reach half a cell beyond. */
  xRange: [number, number];
  yRange: [number, number];
  /** The columns' min and max over all rows. */
  xExtent: [number, number];
  yExtent: [number, number];
  xBins: number;
  yBins: number;
  /** Row-major by y then x: counts[yBin * xBins + xBin]. */
  counts: number[];
  /** Rows with both x and y (in the view, when zoomed; the others are not drawn), and rows of the result. */
  counted: number;
  total: number;
  /** A zoomed view: only rows with x and y in these ranges were counted, into cells that tile them. */
  view?: Bins2dView;
}

/** The ranges of a zoomed binned scatter (engine units: dates as days, timestamps as µs). */
export interface Bins2dView {
  x: [number, number];
  y: [number, number];
}

export interface ClusterStatus {
  /** "dask": runs go to a Dask scheduler (results are still kept, paged and viewed by this engine). */
  kind: "local" | "dask";
  /** Dask workers also report their memory (bytes in use, limit) and tasks executing or ready. */
  workers: {
    name: string;
    kind: "cpu" | "gpu";
    busy: boolean;
    memory?: number;
    memoryLimit?: number;
    tasks?: number;
  }[];
  /** The engine's own store (results). */
  store: { tables: number; bytes: number; peakBytes: number };
  memory?: MemoryStatus;
  /** With kind "dask": the scheduler and its own dashboard (as the scheduler sees its address). */
  dask?: { scheduler: string; dashboard: string };
  /** With a Dask cluster in SLURM jobs: its live jobs (the scheduler's first); its workers are named basin-<job id>. */
  slurm?: { jobs: SlurmJobStatus[] };
  /** The local cluster's task stream after the `since` cursor of cluster(since). */
  stream?: TaskStream;
  /** The local cluster's GPU workers, or why it has none. */
  gpu?: GpuAvailability;
}

/** One SLURM job of the cluster, as squeue last reported it. */
export interface SlurmJobStatus {
  id: string;
  /** PENDING, RUNNING, ... */
  state: string;
  /** It runs the Dask scheduler too. */
  scheduler: boolean;
}

/** Progress of one group of tasks of a run. */
export interface RunProgress {
  group: string;
  done: number;
  total: number;
}

export type EngineEvent =
  | { type: "runStarted"; runId: string; file: string }
  | { type: "progress"; runId: string; progress: RunProgress }
  /** `result` is the default export; `shown` the frames passed to `show()`, in call order. */
  | { type: "runFinished"; runId: string; result: ResultInfo; shown?: ResultInfo[]; elapsedMs: number; tasks: number }
  | { type: "runFailed"; runId: string; error: SerializedError; elapsedMs: number }
  /** An export (exportResult) under way: parts of the result written so far, of all (`group` "write"). */
  | { type: "exportProgress"; path: string; progress: RunProgress }
  | { type: "log"; level: "info" | "warn" | "error"; text: string };

/**
 * The engine as the workbench sees it. Every method is one request; long work
 * (runs) reports through events and is cancellable.
 *
 * @example
 * const { runId } = await client.run("pipelines/taxi.ts");
 * // … an event { type: "runFinished", result } arrives …
 * const page = await client.page(result.id, 0, 100);
 */
export interface EngineClient {
  workspace(): Promise<WorkspaceInfo>;
  readFile(path: string): Promise<string>;
  /** Creates a new file; fails with BASIN_IO when one is already there (nothing is overwritten). */
  writeFile(path: string, text: string): Promise<void>;
  /** A file's text with its version, for saveFile (UTF-8 text up to 16 MB, else BASIN_IO). */
  openFile(path: string): Promise<OpenedFile>;
  /**
   * Writes a file unless it changed on disk since `version` was read (then fails with
   * BASIN_CONFLICT; leave `version` out to overwrite); resolves to the new version.
   */
  saveFile(path: string, text: string, version?: string): Promise<{ version: string }>;
  /**
   * Binds this connection to a page's session (an id the page keeps across reloads):
   * the results and runs it makes belong to that session, come back on the next
   * attach, and are released once no page has been attached for a grace period.
   */
  attach(sessionId: string): Promise<SessionState>;
  /** A data file of the workspace (CSV, Parquet, NDJSON, Arrow) as a result: its first `rows` rows. */
  preview(path: string, rows?: number): Promise<ResultInfo>;
  /** Up to `n` rows of some columns drawn uniformly at random, in the result's order (for plots). */
  sample(resultId: string, n: number, columns: string[]): Promise<ResultSample>;
  /** Runs a pipeline file of the workspace; `source` runs unsaved editor text in its place. */
  run(path: string, source?: string): Promise<{ runId: string }>;
  cancel(runId: string): Promise<void>;
  page(resultId: string, offset: number, limit: number, columns?: string[]): Promise<Page>;
  /** A new result: `resultId` sorted (stable) and filtered by the engine. */
  view(resultId: string, sort: ResultSort[], filters: ResultFilter[]): Promise<ResultInfo>;
  profile(resultId: string, column: string): Promise<ColumnProfile>;
  /** Distinct non-null values of a column (exact), for the profiles that leave it out (many-valued numbers). */
  countDistinct(resultId: string, column: string): Promise<number>;
  /** A 2-D histogram of x and y over every row (a binned scatter plot), made on the workers; `view` zooms into ranges. */
  bins2d(resultId: string, x: string, y: string, xBins: number, yBins: number, view?: Bins2dView): Promise<Bins2d>;
  /** The last runs (newest first) with the plans they ran, as explain() prints them. */
  runHistory(): Promise<RunRecord[]>;
  release(resultId: string): Promise<void>;
  /** Workers, memory and jobs; with `since` (0 at first, then the last answer's stream.next), the task spans recorded after it. */
  cluster(since?: number): Promise<ClusterStatus>;
  /** Writes a result (or view) to a workspace file, atomically (temp file + rename). */
  exportResult(resultId: string, path: string, format: ExportFormat): Promise<ExportSummary>;
}

export type EngineMethod = keyof EngineClient;

/** Wire messages. */
export interface RpcRequest {
  id: number;
  method: EngineMethod;
  params: unknown[];
}

export type RpcResponse = { id: number; result: unknown } | { id: number; error: SerializedError };

export interface RpcEventMessage {
  event: EngineEvent;
}

/**
 * Desktop only: the engine runs in its own process, and the Electron main process
 * tells the window's port when it stops or is running again.
 */
export type EngineProcessState = { state: "running" } | { state: "crashed"; message: string };

export interface EngineProcessMessage {
  engineProcess: EngineProcessState;
}

/** Desktop only: the window asks the main process to start a stopped engine again. */
export interface EngineRestartRequest {
  control: "restartEngine";
}
