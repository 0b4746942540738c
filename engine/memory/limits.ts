// Memory limits of a cluster, resolved from its options and the machine, and
// applied to the process-wide native store before each run.
import { totalmem } from "node:os";
import { BasinError } from "../common/errors.js";
import { native } from "../native/addon.js";
import { parseBytes } from "./bytes.js";
import { defaultLocalDirectory, processSpillDirectory } from "./spill_dir.js";

export interface MemoryOptions {
  /** Host bytes of tables before the least recently used spill to disk: "4GB", bytes, or a fraction of memory (default 0.8). */
  memoryLimit?: string | number;
  /** Bytes of spill files before spilling fails with BASIN_SPILL (default: no limit but the disk's). */
  spillLimit?: string | number;
  /** Folder for spill files (default `<os.tmpdir()>/basin`); each process uses its own subfolder. */
  localDirectory?: string;
  /** How spill files are compressed: "lz4" (default: fast), "zstd" (smaller, slower) or "none". */
  spillCompression?: SpillCompression;
}

export type SpillCompression = "lz4" | "zstd" | "none";
export const SPILL_COMPRESSIONS: readonly SpillCompression[] = ["lz4", "zstd", "none"];

export interface MemorySettings {
  hostLimit: number;
  /** -1: no limit. */
  diskLimit: number;
  localDirectory: string;
  spillCompression: SpillCompression;
}

/** The memory the process may use: the machine's, or less under a cgroup limit. */
export function machineMemory(): number {
  const constrained = (process as { constrainedMemory?: () => number | undefined }).constrainedMemory?.();
  const total = totalmem();
  return constrained && constrained > 0 && constrained < total ? constrained : total;
}

/** Default host limit: 80% of the machine's memory, leaving room for JS heaps and kernels' scratch. */
export const DEFAULT_MEMORY_FRACTION = 0.8;

/** Below this no partition fits: a limit such as "1B" is a mistake, not a setting. */
const MIN_MEMORY_LIMIT = 64 * 1024;

/**
 * Validates options into settings (BASIN_PLAN on a bad size).
 *
 * @example
 * resolveMemory({ memoryLimit: "4GB" }).hostLimit // 4e9
 */
export function resolveMemory(o: MemoryOptions = {}): MemorySettings {
  const total = machineMemory();
  const hostLimit = parseBytes(o.memoryLimit ?? DEFAULT_MEMORY_FRACTION, "memoryLimit", total);
  if (hostLimit < MIN_MEMORY_LIMIT)
    throw new BasinError(
      "BASIN_PLAN",
      `memoryLimit (--memory-limit) of ${hostLimit} bytes is too small to hold even one partition; give at least 64KiB, usually a few GB or a fraction of memory like 0.5`,
    );
  return {
    hostLimit,
    diskLimit: o.spillLimit === undefined ? -1 : parseBytes(o.spillLimit, "spillLimit"),
    localDirectory: o.localDirectory ?? defaultLocalDirectory(),
    spillCompression: spillCompression(o.spillCompression),
  };
}

/**
 * The spill compressions this build has, best first ("none" always): lz4 and zstd
 * only where their libraries were found when the addon was built.
 *
 * @example
 * availableSpillCompressions() // ["lz4", "zstd", "none"]
 */
export function availableSpillCompressions(): SpillCompression[] {
  return native().buildInfo().spillCompression;
}

function spillCompression(v: unknown): SpillCompression {
  const available = availableSpillCompressions();
  if (v === undefined) return available[0];
  if (available.includes(v as SpillCompression)) return v as SpillCompression;
  if (SPILL_COMPRESSIONS.includes(v as SpillCompression))
    throw new BasinError(
      "BASIN_PLAN",
      `spill compression "${v}" is not in this build: lib${v}-dev was not found when Basin was built (apt-get install -y lib${v}-dev, then npm install again); use ${available.map((c) => `"${c}"`).join(" or ")}`,
    );
  throw new BasinError(
    "BASIN_PLAN",
    `spillCompression must be one of ${SPILL_COMPRESSIONS.map((c) => `"${c}"`).join(", ")}, got ${JSON.stringify(v)}`,
  );
}

/**
 * Sets the native store's limits and spill folder (process-wide: the store is shared
 * by every worker thread).
 *
 * @example
 * applyMemory(resolveMemory({ memoryLimit: "2GB" }));
 */
export function applyMemory(s: MemorySettings): void {
  native().configureMemory({
    hostLimit: s.hostLimit,
    diskLimit: s.diskLimit,
    directory: processSpillDirectory(s.localDirectory),
    compression: s.spillCompression,
  });
}
