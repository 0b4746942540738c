import type { GpuMemoryStatus, MemoryStatus } from "../common/rpc.js";
import type { GpuStats, MemoryStats, StoreStats } from "../native/addon.js";

/** The store's spill and read-back counters, as the task stream samples them around each task. */
export type SpillCounters = Pick<MemoryStats, "spillSeconds" | "spilledBytes" | "unspillSeconds" | "unspilledBytes">;

/**
 * `a` + `sign` × `b`, counter by counter: a sum, or (sign -1) what happened between two samples.
 *
 * @example
 * const during = addSpill(spillCounters(after), spillCounters(before), -1);
 */
export function addSpill(a: SpillCounters, b: SpillCounters, sign: 1 | -1 = 1): SpillCounters {
  return {
    spillSeconds: a.spillSeconds + sign * b.spillSeconds,
    spilledBytes: a.spilledBytes + sign * b.spilledBytes,
    unspillSeconds: a.unspillSeconds + sign * b.unspillSeconds,
    unspilledBytes: a.unspilledBytes + sign * b.unspilledBytes,
  };
}

/** The spill counters of a store's memory statistics. */
export function spillCounters(m: MemoryStats): SpillCounters {
  return addSpill(m, { spillSeconds: 0, spilledBytes: 0, unspillSeconds: 0, unspilledBytes: 0 });
}

/** The engine's store statistics with its worker processes' stores added. */
export function addStoreStats(engine: StoreStats, workers: StoreStats[]): StoreStats {
  return workers.reduce(
    (a, w) => ({
      handles: a.handles + w.handles,
      buffers: a.buffers + w.buffers,
      bytes: a.bytes + w.bytes,
      peakBytes: a.peakBytes + w.peakBytes,
    }),
    engine,
  );
}

/**
 * The engine's memory statistics with its worker processes' added: bytes, tables and
 * spill activity sum; the limits and spill folder are the engine's (the cluster's).
 *
 * @example
 * addMemoryStats(native().memoryStats(), workers.map((w) => w.memory)).hostBytes
 */
export function addMemoryStats(engine: MemoryStats, workers: MemoryStats[]): MemoryStats {
  const sum = (k: keyof MemoryStats) => workers.reduce((n, w) => n + (w[k] as number), engine[k] as number);
  return {
    ...engine,
    hostBytes: sum("hostBytes"),
    hostTables: sum("hostTables"),
    diskBytes: sum("diskBytes"),
    diskTables: sum("diskTables"),
    deviceBytes: sum("deviceBytes"),
    spilledCount: sum("spilledCount"),
    spilledBytes: sum("spilledBytes"),
    unspilledCount: sum("unspilledCount"),
    unspilledBytes: sum("unspilledBytes"),
    writtenBytes: sum("writtenBytes"),
    reusedCount: sum("reusedCount"),
    pooledBytes: sum("pooledBytes"),
    spillSeconds: sum("spillSeconds"),
    unspillSeconds: sum("unspillSeconds"),
    overLimit: engine.overLimit || workers.some((w) => w.overLimit),
  };
}

/**
 * The store's memory statistics in the shape the workbench reads (ClusterStatus.memory),
 * each GPU with nvidia-smi's latest reading of it where `reading` has one.
 *
 * @example
 * const status = memoryStatus(native().memoryStats(), native().gpuStats()); status.disk.bytes
 */
export function memoryStatus(
  s: MemoryStats,
  gpus: GpuStats[] = [],
  reading: (device: number) => GpuMemoryStatus["reading"] = () => undefined,
): MemoryStatus {
  return {
    host: { bytes: s.hostBytes, limit: s.hostLimit, tables: s.hostTables },
    disk: { bytes: s.diskBytes, limit: s.diskLimit, tables: s.diskTables, directory: s.directory },
    // What the GPUs hold, the store's device tier (its deviceBytes) included.
    device: { bytes: gpus.length > 0 ? gpus.reduce((n, g) => n + g.used, 0) : s.deviceBytes },
    ...(gpus.length > 0
      ? {
          gpus: gpus.map((g) => {
            const r = reading(g.device);
            return {
              device: g.device,
              bytes: g.used,
              limit: g.limit,
              cachedColumns: g.cachedColumns,
              spilledColumns: g.evictions,
              spilledBytes: g.evictedBytes,
              broken: g.broken,
              uploads: g.uploads,
              uploadBytes: g.uploadBytes,
              downloads: g.downloads,
              downloadBytes: g.downloadBytes,
              chains: g.chains,
              keptOutputs: g.resultTables,
              keptSpills: g.resultSpills,
              ...(r ? { reading: r } : {}),
            };
          }),
        }
      : {}),
    spilled: { tables: s.spilledCount, bytes: s.spilledBytes, seconds: s.spillSeconds },
    unspilled: { tables: s.unspilledCount, bytes: s.unspilledBytes, seconds: s.unspillSeconds },
    overLimit: s.overLimit,
  };
}
