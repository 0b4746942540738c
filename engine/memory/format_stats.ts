import type { GpuStats, MemoryStats } from "../native/addon.js";
import { formatBytes } from "./bytes.js";

/**
 * Memory statistics as `basin run --stats` prints them.
 *
 * @example
 * process.stderr.write(formatMemoryStats(native().memoryStats(), native().gpuStats()));
 */
export function formatMemoryStats(s: MemoryStats, gpus: GpuStats[] = []): string {
  const limit = (n: number) => (n < 0 ? "no limit" : `limit ${formatBytes(n)}`);
  return [
    "memory:",
    `  host    ${formatBytes(s.hostBytes)} now (${limit(s.hostLimit)}), ${s.hostTables} tables`,
    `  disk    ${formatBytes(s.diskBytes)} now (${limit(s.diskLimit)}), ${s.diskTables} tables in ${s.directory}`,
    ...(gpus.length === 0
      ? [`  device  ${formatBytes(s.deviceBytes)}`]
      : gpus.map(
          (g) =>
            `  gpu ${g.device}   ${formatBytes(g.used)} now (limit ${formatBytes(g.limit)}), ${g.cachedColumns} cached columns; ` +
            `${g.chains} chains in ${(g.chainMicros / 1e6).toFixed(2)} s, up ${formatBytes(g.uploadBytes)} ` +
            `in ${(g.uploadMicros / 1e6).toFixed(2)} s, down ${formatBytes(g.downloadBytes)} in ${(g.downloadMicros / 1e6).toFixed(2)} s, ` +
            `spilled to host ${g.evictions} columns (${formatBytes(g.evictedBytes)}); ` +
            `kept ${g.resultTables} outputs on the GPU (${formatBytes(g.resultBytes)}), ${g.resultSpills} copied to host for room` +
            (g.broken ? `; unusable: ${g.broken}` : ""),
        )),
    `  spilled   ${s.spilledCount} tables, ${formatBytes(s.spilledBytes)} in ${s.spillSeconds.toFixed(2)} s; ${formatBytes(s.writtenBytes)} written (${s.compression}), ${s.reusedCount} evictions reused a kept file`,
    `  unspilled ${s.unspilledCount} tables, ${formatBytes(s.unspilledBytes)} in ${s.unspillSeconds.toFixed(2)} s`,
    // The whole process's high-water mark: Node, a V8 heap per worker, the store, mapped files.
    `  process   peak RSS ${formatBytes(process.resourceUsage().maxRSS * 1024)}`,
    "",
  ].join("\n");
}
