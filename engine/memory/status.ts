import type { MemoryStatus } from "../common/rpc.js";
import type { MemoryStats } from "../native/addon.js";

/**
 * The store's memory statistics in the shape the workbench reads (ClusterStatus.memory).
 *
 * @example
 * const status = memoryStatus(native().memoryStats()); status.disk.bytes
 */
export function memoryStatus(s: MemoryStats): MemoryStatus {
  return {
    host: { bytes: s.hostBytes, limit: s.hostLimit, tables: s.hostTables },
    disk: { bytes: s.diskBytes, limit: s.diskLimit, tables: s.diskTables, directory: s.directory },
    device: { bytes: s.deviceBytes },
    spilled: { tables: s.spilledCount, bytes: s.spilledBytes, seconds: s.spillSeconds },
    unspilled: { tables: s.unspilledCount, bytes: s.unspilledBytes, seconds: s.unspillSeconds },
    overLimit: s.overLimit,
  };
}
