// Dates and timestamps on the workbench's axes and histograms: seconds since the
// epoch as text (UTC, as results give them), as precise as the ticks need.
import type { DType } from "../../engine/common/types.js";

/**
 * A histogram bin edge of a date or timestamp column (profiles bin dates as days and
 * timestamps as µs since the epoch) in seconds since the epoch, as time axes count.
 *
 * @example
 * binEdgeSeconds(19723, "date") // 1704067200 (2024-01-01)
 */
export function binEdgeSeconds(edge: number, type: "date" | "timestamp"): number {
  return type === "date" ? edge * 86_400 : edge / 1e6;
}

/** A date or timestamp axis value (seconds since the epoch) as text. */
export function timeLabel(seconds: number, type: DType): string {
  const iso = new Date(seconds * 1000).toISOString();
  return type === "date" ? iso.slice(0, 10) : iso.slice(0, 19).replace("T", " ");
}

/**
 * A time axis's tick labels, as precise as its ticks: the day alone when every tick is
 * a midnight (or the column holds dates), to the minute when every one is a whole minute.
 *
 * @example
 * timeTicks([1704067200, 1704153600], "timestamp") // ["2024-01-01", "2024-01-02"]
 */
export function timeTicks(splits: readonly number[], type: DType): string[] {
  const length =
    type === "date" || splits.every((v) => v % 86_400 === 0) ? 10 : splits.every((v) => v % 60 === 0) ? 16 : 19;
  return splits.map((v) => new Date(v * 1000).toISOString().slice(0, length).replace("T", " "));
}
