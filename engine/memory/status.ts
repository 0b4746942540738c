import type { GpuMemoryStatus, MemoryStatus } from "../common/rpc.js";
import type { GpuStats, MemoryStats } from "../native/addon.js";

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
    device: { bytes: gpus.reduce((n, g) => n + g.used, s.deviceBytes) },
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
