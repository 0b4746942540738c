// Typed bindings to the native addon (native/). Every function here is the whole
// contract between TypeScript and C++: arguments are validated before they arrive.
import { createRequire } from "node:module";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { DType } from "../common/types.js";
import type { ArrayDType, Generator } from "../common/array_plan.js";
import type { ChunkExpr } from "../graph/array_steps.js";
import type {
  AggMode,
  CsvOptions,
  CsvScanOptions,
  JoinSpec,
  NativeAgg,
  NativeExpr,
  NativeWindow,
  SortKey,
} from "../graph/kernel_args.js";
import type { Step } from "../graph/tasks.js";

/** A table in the native store, addressed by a handle with a reference count. */
export type Handle = number;

export interface StoreStats {
  handles: number;
  buffers: number;
  bytes: number;
  peakBytes: number;
}

/**
 * Strings in bulk: UTF-8 bytes and byte offsets (one JS string per value would
 * cost 50x more to hand over); `decodeStrings` makes JS strings when they are read.
 */
export interface JsStrings {
  offsets: Float64Array;
  chars: Uint8Array;
  /** All bytes below 0x80: byte offsets are character offsets. */
  ascii: boolean;
  /**
   * Bytes that are not text (a delayed call's serialized value): stored as they are.
   * Other strings must be UTF-8; tableFromJs checks them.
   */
  binary?: boolean;
}

/** One page of a Parquet column chunk as its header describes it; `body` is a view of the chunk. */
export interface NativeParquetPage {
  /** parquet.thrift PageType: 0 DATA_PAGE, 1 INDEX_PAGE, 2 DICTIONARY_PAGE, 3 DATA_PAGE_V2. */
  type: number;
  body: Uint8Array;
  /** uncompressed_page_size. */
  raw: number;
  /** Values incl. nulls (data pages), entries (dictionary pages). */
  values: number;
  /** The values' encoding (parquet.thrift Encoding), -1 when the header has none. */
  encoding: number;
  /** V2: the repetition and definition level bytes in front of the values. */
  levelBytes: number;
  /** Whether the page's values are compressed with the chunk's codec. */
  compressed: boolean;
}

/**
 * A column in JS memory. int64/timestamp: BigInt64Array; date: Int32Array (days);
 * strings: (string | null)[] or JsStrings going in, JsStrings coming out of tableToJs.
 */
export interface JsColumn {
  type: DType;
  values: BigInt64Array | Float64Array | Uint8Array | Int32Array | (string | null)[] | JsStrings;
  validity: Uint8Array | null;
}

export interface JsTable {
  rows: number;
  names: string[];
  columns: JsColumn[];
}

/** String values as takeTableToJs hands them over: the store's int64 offsets, not yet doubles. */
export interface TakenStrings {
  offsets64: BigInt64Array;
  chars: Uint8Array;
  ascii: boolean;
}

/** A table as takeTableToJs gives it: like JsTable, but string values are TakenStrings. */
export interface TakenTable {
  rows: number;
  names: string[];
  columns: {
    type: DType;
    values: Exclude<JsColumn["values"], JsStrings> | TakenStrings;
    validity: Uint8Array | null;
  }[];
}

export interface CsvBlock {
  start: number;
  end: number;
  /** 1-based line number of the block's first line in the file. */
  line: number;
}

export interface CsvScanResult {
  handle: Handle;
  rows: number;
  skipped: number;
}

/** Limits of the store's memory tiers; -1 = no limit. */
export interface MemoryConfig {
  hostLimit: number;
  diskLimit: number;
  /** Spill down to this fraction of the limit once over it (default 0.8). */
  target?: number;
  /** This process's own spill folder (engine/memory/spill_dir.ts makes it). */
  directory: string;
  /** How spill files are compressed (default: the best this build has, BuildInfo.spillCompression[0]). */
  compression?: "lz4" | "zstd" | "none";
}

/** Bytes per tier and spill activity since the process started. */
export interface MemoryStats {
  /** Every live native buffer (tables and kernels' scratch). */
  hostBytes: number;
  hostLimit: number;
  hostTables: number;
  diskBytes: number;
  diskTables: number;
  diskLimit: number;
  deviceBytes: number;
  spilledCount: number;
  spilledBytes: number;
  unspilledCount: number;
  unspilledBytes: number;
  /** Bytes written to spill files (after compression). */
  writtenBytes: number;
  /** Evictions that wrote nothing: the table kept its file from an earlier spill. */
  reusedCount: number;
  /** Freed memory kept for the next large buffers (not in hostBytes); given back when the engine is idle. */
  pooledBytes: number;
  compression: "lz4" | "zstd" | "none";
  spillSeconds: number;
  unspillSeconds: number;
  /** Over the host limit even after spilling (all that is left is in use): the scheduler pauses root tasks. */
  overLimit: boolean;
  directory: string;
}

export type MemoryTier = "device" | "host" | "disk";

/** One event of a spill-policy script (spillPolicyRun). */
export type SpillPolicyEvent =
  | { op: "add"; id: number; bytes: number; tier?: MemoryTier }
  | { op: "remove" | "touch" | "pin" | "unpin" | "dropCopy"; id: number }
  /** A table on disk was read back to `tier` (default host); with `keep` its file stays, so evicting it again writes nothing. */
  | { op: "unspill"; id: number; tier?: MemoryTier; keep?: boolean }
  /** A tier holds `used` (default: its tables' bytes) and `need` more bytes are coming; `busy` are being read. */
  | { op: "pressure"; tier?: MemoryTier; used?: number; need?: number; busy?: number[] }
  /** An allocation of `need` bytes failed: free that much. */
  | { op: "allocFailed"; tier?: MemoryTier; need: number; busy?: number[] };

export interface SpillPlanResult {
  /** `reuse`: the table kept its file from an earlier spill, so the move writes nothing. */
  moves: { id: number; from: MemoryTier; to: MemoryTier; bytes: number; reuse?: true }[];
  nextTierFull: boolean;
  stillOver: boolean;
}

export interface BuildInfo {
  cuda: boolean;
  gpus: number;
  napiVersion: number;
  /** Spill compressions this build has, best first: lz4 and zstd where their libraries were found at build time; "none" always. */
  spillCompression: ("lz4" | "zstd" | "none")[];
}

/** One GPU as the CUDA runtime sees it. */
export interface GpuDevice {
  index: number;
  name: string;
  totalMemory: number;
  /** "9.0" for an H100. */
  computeCapability: string;
  multiprocessors: number;
  /** Peak memory bandwidth from the memory clock and bus width. */
  bandwidthGBs: number;
  pciBusId: string;
}

export interface GpuInfo {
  /** The addon was built with CUDA (nvcc was found at install). */
  compiled: boolean;
  /** e.g. 13000 for CUDA 13.0; 0 without a driver. */
  driverVersion: number;
  runtimeVersion: number;
  /** Why there are no devices, when there are none. */
  note: string;
  devices: GpuDevice[];
}

export interface GpuConfig {
  /** Bytes Basin may hold on the GPU; default 80% of its memory. */
  memoryLimit?: number;
  /** Reserved up front and sub-allocated; default the memory limit. */
  poolSize?: number;
  /** CUDA's stream-ordered allocator instead of Basin's pool. */
  asyncAllocator?: boolean;
  /** Copies of 8 MiB and more through pinned staging buffers (default true); false: straight from pageable memory. */
  stagedCopies?: boolean;
  /**
   * A GPU operation's output stays on the GPU when all its columns are there (the
   * store's device tier; default true): it comes to the host when read there, or
   * when spilled. false: every output comes to the host at once.
   */
  keepResults?: boolean;
}

/** Per-GPU memory and transfer counters (engine events and `basin run --stats`). */
/** The CUDA faults the addon can inject (`gpuFault`, for the GPU suite). */
export type GpuFault = "bad-launch" | "oom" | "illegal-address";

export interface GpuStats {
  device: number;
  used: number;
  limit: number;
  poolSize: number;
  cachedBytes: number;
  cachedColumns: number;
  /** Cached columns spilled (dropped from the device; their host copies stay). */
  evictions: number;
  evictedBytes: number;
  uploads: number;
  uploadBytes: number;
  downloads: number;
  downloadBytes: number;
  cacheHits: number;
  /** Chains of steps run. */
  chains: number;
  /** CUDA errors that left the GPU unusable in this process (its work then runs on the CPU). */
  failures: number;
  /** Microseconds inside chains, and inside their copies to and from the device (where a chain's time goes). */
  chainMicros: number;
  uploadMicros: number;
  downloadMicros: number;
  /** Outputs kept on the GPU (the store's device tier), and their bytes. */
  resultTables: number;
  resultBytes: number;
  /** Kept outputs copied to the host because the GPU needed the room. */
  resultSpills: number;
  resultSpilledBytes: number;
  /** GPU microseconds of the chains' phases ("group ids", "aggregates", "join match", ...): where a chain's time goes. */
  phases: Record<string, number>;
  /** Why the GPU is unusable in this process, or null. */
  broken: string | null;
}

/** Where an ordered part sink is (engine/io/part_sink.ts). */
export interface SinkStatus {
  parts: number;
  bytes: number;
  pendingBytes: number;
  error: string | null;
}

export interface NativeAddon {
  buildInfo(): BuildInfo;
  gpuInfo(): GpuInfo;
  /** Settings of one GPU (frees what Basin holds there). */
  gpuConfigure(device: number, config: GpuConfig): void;
  /** Makes GPU `device` ready now (CUDA context, stream, memory pool): a cluster's first query does not pay for it. */
  gpuWarm(device: number): void;
  /** How many leading steps of `steps` GPU `device` can run over table h (filter, project, aggregate); 0 once it is unusable. */
  gpuPrefix(device: number, h: Handle, steps: readonly Step[]): number;
  /** Uploads every column of table h into GPU `device`'s cache, off the JS thread (a persisted partition's home). */
  gpuKeep(device: number, h: Handle): Promise<void>;
  /** Runs steps (a prefix gpuPrefix accepted) on GPU `device`; the result is on the host. */
  gpuRun(device: number, h: Handle, steps: readonly Step[]): Handle;
  /** Whether GPU `device` can match this join's rows (one fixed-width key; inner, left, semi, anti). */
  gpuJoinable(device: number, left: Handle, right: Handle, spec: JoinSpec): boolean;
  /** hashJoin with the rows matched on GPU `device`; the same output. */
  gpuJoin(device: number, left: Handle, right: Handle, spec: JoinSpec): Handle;
  /** Whether GPU `device` can order this sort's rows (up to 8 keys of any type, under 2^31 rows). */
  gpuSortable(device: number, h: Handle, keys: SortKey[]): boolean;
  /** sortTable with the permutation computed on GPU `device`; the same output. */
  gpuSort(device: number, h: Handle, keys: SortKey[]): Handle;
  gpuStats(): GpuStats[];
  /** Test hooks: "bad-launch", "oom", "illegal-address" each throw BASIN_CUDA. */
  gpuFault(device: number, kind: GpuFault): void;
  storeStats(): StoreStats;
  /** Gives memory the C library keeps after frees back to the system (glibc); whether any was. */
  releaseFreeMemory(): boolean;
  /** Tags tables made by this thread with `owner` (a worker's id; 0 = none). */
  setThreadOwner(owner: number): void;
  /** The table was handed over: it no longer belongs to the thread that made it. */
  claim(h: Handle): void;
  /** Frees every unclaimed table of a dead thread; returns how many. */
  releaseOwnedBy(owner: number): number;
  retain(h: Handle): void;
  release(h: Handle): void;
  tableInfo(h: Handle): { rows: number; names: string[]; types: DType[]; nullCounts: number[] };
  tableToJs(h: Handle): JsTable;
  /**
   * The table as JS arrays that must only be read, releasing `h`: no buffer is copied;
   * those no other table holds move to JS when `h` was the last reference, the rest are
   * shared with the tables that hold them. `takeTable` (engine/run/take.ts) makes it a JsTable.
   */
  takeTableToJs(h: Handle): TakenTable;
  tableFromJs(t: JsTable): Handle;
  concat(hs: Handle[]): Handle;
  slice(h: Handle, offset: number, length: number): Handle;
  /** The columns of tables of equal row counts side by side (shared, not copied); the inputs stay theirs. */
  beside(hs: Handle[]): Handle;

  /** Sets memory limits and the spill folder, process-wide. */
  configureMemory(c: MemoryConfig): void;
  memoryStats(): MemoryStats;
  /** Handed to user code (or read by a running task): never spilled until unpinned. */
  pin(h: Handle): void;
  unpin(h: Handle): void;
  /** Reads a spilled table back into memory on a pool thread (the JS thread never waits on the disk); pin it first. */
  readBack(h: Handle): Promise<void>;
  /** The table's row count; never reads a spilled table back (tableInfo does). */
  tableRows(h: Handle): number;
  /** The table's bytes in memory (as stored; spilled or not, never read back). */
  tableBytes(h: Handle): number;
  /** Whether the handle still names a table (not released; handles are never reused). */
  tableExists(h: Handle): boolean;
  /** Whether the table is off the host now (on disk, or its only copy on a GPU): reading it takes a read back. */
  isSpilled(h: Handle): boolean;
  /** Spills least recently used unpinned tables until `bytes` are freed, on this thread, now. */
  memorySpill(bytes: number): void;
  /** Writes a table to `path` off the JS thread (an uncompressed spill file: how tables travel between processes); resolves to its bytes. */
  tableSave(h: Handle, path: string): Promise<number>;
  /** Copies tables whose only copy is on a GPU (the device tier) to the host, off the JS thread; the caller holds them meanwhile. */
  tablesToHost(handles: Handle[]): Promise<void>;
  /** The GPU holding the table's only copy (the device tier), or -1. */
  tableDevice(h: Handle): number;
  /**
   * Test hooks for the store's device tier without a GPU: a stand-in tier (device 90)
   * holding tables in host memory apart from the store; `mode` says what reading one
   * back does (see native/src/bind/device_tier_api.cc).
   */
  deviceTierStandIn(on: boolean): void;
  deviceTierStandInPut(h: Handle, mode: "ok" | "spilled" | "lost" | "fail-once", deviceBytes?: number): Handle;
  deviceTierStandInCounts(): { downloads: number; drops: number };
  /** Reads a file `tableSave` wrote into this process's store, off the JS thread. */
  tableLoad(path: string): Promise<Handle>;
  /** Replays events through a fresh spill policy (the pure state machine the store uses); planned moves are carried out. */
  spillPolicyRun(
    config: { limits?: Partial<Record<MemoryTier, number>>; target?: number },
    events: SpillPolicyEvent[],
  ): { steps: (SpillPlanResult | null)[]; tiers: Record<MemoryTier, number>; where: Record<string, MemoryTier> };

  /** Splits a file into blocks of about `blocksize` bytes that start on row boundaries (quotes respected). */
  csvSplit(path: string, blocksize: number, opts: CsvOptions): CsvBlock[];
  /** Reads the header and infers column types over a sample of the file's start. */
  /** The header and the types the first `sampleBytes` suggest; `seen`: whether the sample held a value of the column (else its type is a guess). */
  csvInfer(
    path: string,
    opts: CsvOptions & { sampleBytes: number },
  ): { names: string[]; types: DType[]; seen: boolean[] };
  /** Why a Parquet page body contradicts its header (see native/src/io/parquet_pages.h), or null. */
  parquetPageDamage(
    body: Uint8Array,
    page: {
      codec: number;
      raw: number;
      levels: number;
      values?: { count: number; encoding: number; physical: number; optional: boolean; dictionary: number };
    },
  ): string | null;
  /**
   * Decodes flat Parquet column chunks (their pages walked by engine/io/parquet_pages.ts)
   * into one stored table of `rows` rows (see native/src/io/parquet_decode.h).
   */
  parquetDecode(spec: {
    path: string;
    rows: number;
    columns: {
      name: string;
      type: DType;
      physical: number;
      optional: boolean;
      unsigned: boolean;
      timeMul: number;
      timeDiv: number;
      codec: number;
      pages: (NativeParquetPage & { group: number })[];
    }[];
    /** Keeps only the rows this (over the columns, by index) holds for. */
    predicate?: NativeExpr;
    /** Only these columns (indices), named `outputNames`; the others are read for the predicate alone. */
    outputs?: number[];
    outputNames?: string[];
  }): Handle;
  /** Whether parquetDecode reads pages compressed with `codec` (parquet.thrift CompressionCodec). */
  parquetCodecSupported(codec: number): boolean;
  /**
   * Opens an ordered part sink over the open file `fd`, writing from byte `offset`:
   * parts sent by any thread are written in part order. The sink owns `fd` and closes
   * it once sinkClose is called and no thread is still writing.
   */
  sinkOpen(fd: number, offset: number): number;
  /** Parts written in order so far, bytes written, bytes of parts waiting for their turn, the write error. */
  sinkStatus(sink: number): SinkStatus;
  /** Forgets the sink (parts sent to it later fail); its last status. */
  sinkClose(sink: number): SinkStatus;
  /** The table's rows as CSV lines (as engine/io/write.ts csvLines), part `part` of the sink; BASIN_IO when a write fails. */
  csvWritePart(sink: number, h: Handle, part: number): void;
  /** The table as a new CSV file (O_EXCL), with a header line when `header`; the bytes written. */
  csvWriteFile(h: Handle, path: string, header: boolean): number;
  /** The table's rows as CSV lines (no header). */
  csvFormat(h: Handle): Uint8Array;
  /**
   * The table as Parquet row groups (native/src/io/parquet_write.h), part `part` of the
   * sink; the part's footer is kept as its trailer (sinkTrailers).
   */
  parquetWritePart(
    sink: number,
    h: Handle,
    part: number,
    compression: "snappy" | "zstd" | "uncompressed",
    rowGroupSize: number,
  ): void;
  /**
   * The table as Arrow IPC record batches of at most `rowsPerBatch` rows (native/src/io/arrow_write.h),
   * part `part` of the sink; the trailer holds each batch's block (offset in the part, metadata and
   * body lengths: three little-endian int64).
   */
  arrowWritePart(sink: number, h: Handle, part: number, rowsPerBatch: number): void;
  /** The table as a new Arrow IPC file (O_EXCL), record batches of `rowsPerBatch` rows; the bytes written. */
  arrowWriteFile(h: Handle, path: string, rowsPerBatch: number): number;
  /** Where each part written so far starts in the file, and its trailer (a Parquet part's footer, Arrow blocks). */
  sinkTrailers(sink: number): { start: number; trailer: Uint8Array }[];
  /** Appends `bytes` as part `part` of the sink (whole). */
  sinkAppend(sink: number, part: number, bytes: Uint8Array): void;
  /** The table as a new Parquet file (O_EXCL); the bytes written. */
  parquetWriteFile(
    h: Handle,
    path: string,
    compression: "snappy" | "zstd" | "uncompressed",
    rowGroupSize: number,
  ): number;
  /** Whether this build writes Parquet with zstd. */
  parquetZstd(): boolean;
  /** Parses bytes [start, end) of a file; the header row is skipped when start is 0 and header is true. */
  csvScan(path: string, start: number, end: number, opts: CsvScanOptions): CsvScanResult;

  /** Evaluates expressions over a table into a new table with columns `names`. */
  evalExprs(h: Handle, exprs: NativeExpr[], names: string[]): Handle;
  /** Keeps the rows where `predicate` is true (null counts as false). */
  filter(h: Handle, predicate: NativeExpr): Handle;
  /** Why a regular expression does not compile in the kernels' dialect (ECMAScript), or null when it does. */
  checkRegex(pattern: string): string | null;

  /**
   * Hash group-by. Output: key columns, then one column per agg ("full"/"final"), or
   * the aggs' state columns ("partial"/"merge"). Keys [] means one group (a reduction).
   */
  groupByAgg(h: Handle, keys: number[], aggs: NativeAgg[], mode: AggMode): Handle;
  /**
   * groupByAgg of the rows `predicate` keeps, projected by each of `projections` in turn:
   * filter, project and aggregate steps as one (a filter that keeps most rows cuts none).
   */
  filterAggregate(
    h: Handle,
    predicate: NativeExpr,
    projections: { exprs: NativeExpr[]; names: string[] }[],
    keys: number[],
    aggs: NativeAgg[],
    mode: AggMode,
  ): Handle;
  /** Splits rows by the hash of `keys` into `parts` tables; equal keys (nulls too) land together. */
  hashPartition(h: Handle, keys: number[], parts: number): Handle[];

  /**
   * Hash join of two tables (builds a hash table on the right side). Null keys never
   * match; rows with them still appear unmatched in left/right/outer/anti joins. Order:
   * left rows in input order (one left row's matches in right order), then for
   * right/outer the unmatched right rows in right order.
   */
  hashJoin(left: Handle, right: Handle, spec: JoinSpec): Handle;
  /**
   * hashJoin with the right side in parts (concatenated); its hash table is built once
   * per process and reused by every call with the same right tables while they live.
   */
  broadcastJoin(left: Handle, right: Handle[], spec: JoinSpec): Handle;
  /** Frees the reused hash tables of right sides the store has let go; returns how many are kept. */
  purgeBroadcastBuilds(): number;

  /** Stable sort of a table by keys (column indices). */
  sortTable(h: Handle, keys: SortKey[]): Handle;
  /** The stable sorting permutation alone: row numbers of `h` in sorted order (no column gathered). */
  sortIndices(h: Handle, keys: SortKey[]): BigInt64Array;
  /**
   * From a table, `parts - 1` boundary rows (key columns only, in key order) at evenly
   * spaced quantiles of its rows sorted by `keys`; fewer when there are fewer distinct
   * rows. The input need not be sorted.
   */
  sortBoundaries(h: Handle, keys: SortKey[], parts: number): Handle;
  /**
   * Splits rows into bounds.rows + 1 tables by comparing key columns with the boundary
   * rows (as sortBoundaries makes them, key columns only): part i gets rows r with
   * bound[i-1] < r <= bound[i] in sort order (ties with a boundary go to the lower part,
   * so equal keys always land together); order within a part is preserved.
   */
  rangePartition(h: Handle, keys: SortKey[], bounds: Handle): Handle[];

  /**
   * The table's columns followed by one column per window, computed in row order: with
   * `keys` within groups of those columns; otherwise over the rows of `before`, the
   * table and `after` (carries from windowScan, column i for window i), outputting the
   * table's rows only. Null semantics: native/src/ops/window.h.
   */
  windowEval(h: Handle, specs: NativeWindow[], keys: number[], before: Handle | null, after: Handle | null): Handle;
  /**
   * A partition's carry: per window i a column of its last (`fromEnd`) or first `rows`
   * input values; cumulative windows hold the partition's aggregate in the last row.
   */
  windowCarry(h: Handle, specs: NativeWindow[], rows: number, fromEnd: boolean): Handle;
  /** From the carries of partitions in order, the carry before (`fromEnd`) or after each partition. */
  windowScan(carries: Handle[], specs: NativeWindow[], rows: number, fromEnd: boolean): Handle[];
  /** The table with an int64 column `name` appended: start, start + 1, ... */
  rowIndex(h: Handle, start: number, name: string): Handle;
  /** The first row of each distinct combination of `keys` (null equals null), in order of first appearance. */
  distinctRows(h: Handle, keys: number[]): Handle;
  /**
   * Per group of `keys` (one group when []): the k rows with the largest (descending) or
   * smallest non-null values of `column`, ties in row order; groups in order of first
   * appearance, each group's rows best first.
   */
  topKRows(h: Handle, keys: number[], column: number, k: number, descending: boolean): Handle;
  /**
   * The table plus "__sample_key" (float64 uniform in [0, 1), a function of seed, part
   * and row) and "__sample_pos" (int64 part * 2^40 + row: frame order across parts).
   */
  sampleKeys(h: Handle, seed: number, part: number): Handle;

  /** Economy QR (Householder) of a row-major m×n matrix: q is m×k, r is k×n, k = min(m, n). */
  linalgQr(a: Float64Array, m: number, n: number): { q: Float64Array; r: Float64Array };
  /** Economy SVD (one-sided Jacobi) of a row-major m×n matrix: u m×k, s descending (k), vt k×n, k = min(m, n). */
  linalgSvd(a: Float64Array, m: number, n: number): { u: Float64Array; s: Float64Array; vt: Float64Array };
  /** X (n×k) with A X = B by LU with partial pivoting; a number is the column where A is singular. */
  linalgSolve(a: Float64Array, n: number, b: Float64Array, k: number): Float64Array | number;

  /** An array chunk (one float64 column "v", C order) of `shape` from an elementwise expression over input chunks (broadcast by their shapes). */
  arrayMap(expr: ChunkExpr, inputs: Handle[], shape: number[]): Handle;
  /** The chunk at `offset` (of `shape`) of a generated array of shape `full`; random values depend on (seed, position) only. */
  arrayGenerate(gen: Generator, dtype: ArrayDType, shape: number[], offset: number[], full: number[]): Handle;
  /** A chunk of `shape` with its axes permuted. */
  arrayTranspose(h: Handle, shape: number[], axes: number[]): Handle;
  /** Σ_p inputs[2p] (m × ks[p]) @ inputs[2p+1] (ks[p] × n), narrowed to `dtype`. */
  arrayMatmul(m: number, n: number, ks: number[], inputs: Handle[], dtype: ArrayDType): Handle;
}

function addonPath(): string {
  // BASIN_ADDON points at another build (a developer's second build folder, a GPU build).
  if (process.env.BASIN_ADDON) return process.env.BASIN_ADDON;
  const here = dirname(fileURLToPath(import.meta.url));
  // engine/native/ in the source tree, dist/engine/native/ when compiled.
  for (const up of ["../..", "../../.."]) {
    const p = join(here, up, "native/build/Release/basin.node");
    if (existsSync(p)) return p;
  }
  throw new Error("the native addon is not built: run `npm install` (or `npm run build:native`) in the Basin folder");
}

const utf8 = new TextDecoder();

/**
 * JS strings from bulk bytes: one decode and slices when ASCII.
 *
 * @example
 * const names = decodeStrings(col.values as JsStrings, col.validity);
 */
export function decodeStrings(raw: JsStrings, validity: Uint8Array | null): (string | null)[] {
  const n = raw.offsets.length - 1;
  const out = new Array<string | null>(n);
  const o = raw.offsets;
  if (raw.ascii) {
    const all = utf8.decode(raw.chars);
    for (let i = 0; i < n; i++) out[i] = validity && !validity[i] ? null : all.slice(o[i], o[i + 1]);
  } else {
    for (let i = 0; i < n; i++)
      out[i] = validity && !validity[i] ? null : utf8.decode(raw.chars.subarray(o[i], o[i + 1]));
  }
  return out;
}

let loaded: NativeAddon | undefined;

/**
 * The native addon, loaded once per thread.
 *
 * @example
 * const { storeStats } = native();
 * console.log(storeStats().bytes);
 */
export function native(): NativeAddon {
  loaded ??= createRequire(import.meta.url)(addonPath()) as NativeAddon;
  return loaded;
}
