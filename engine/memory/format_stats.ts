import type { MemoryStats } from "../native/addon.js";
import { formatBytes } from "./bytes.js";

/**
 * Memory statistics as `basin run --stats` prints them.
 *
 * @example
 * process.stderr.write(formatMemoryStats(native().memoryStats()));
 */
export function formatMemoryStats(s: MemoryStats): string {
  const limit = (n: number) => (n < 0 ? "no limit" : `limit ${formatBytes(n)}`);
  return [
    "memory:",
    `  host    ${formatBytes(s.hostBytes)} now (${limit(s.hostLimit)}), ${s.hostTables} tables`,
    `  disk    ${formatBytes(s.diskBytes)} now (${limit(s.diskLimit)}), ${s.diskTables} tables in ${s.directory}`,
    `  device  ${formatBytes(s.deviceBytes)}`,
    `  spilled   ${s.spilledCount} tables, ${formatBytes(s.spilledBytes)} in ${s.spillSeconds.toFixed(2)} s; ${formatBytes(s.writtenBytes)} written (${s.compression}), ${s.reusedCount} evictions reused a kept file`,
    `  unspilled ${s.unspilledCount} tables, ${formatBytes(s.unspilledBytes)} in ${s.unspillSeconds.toFixed(2)} s`,
    "",
  ].join("\n");
}
