// The dashboard's task stream as it is drawn: spans accumulated from the engine's
// cursor-based answers (kept for a bounded time), placed on one lane per worker in a
// time window that ends at the engine's "now". Pure, so it is tested without a browser.
import type { TaskKind, TaskSpan, TaskStream } from "../../engine/common/rpc.js";

/** How long spans are kept after they end (ms). */
export const KEEP_MS = 5 * 60_000;

/** The colour of each kind of bar (the legend's too). */
export const KIND_COLOURS: Record<TaskKind, string> = {
  compute: "#4f9cf5",
  transfer: "#e0605a",
  spill: "#b074e0",
  "disk read": "#e5a93e",
};

/**
 * Adds a poll's spans to those kept, dropping those that ended more than KEEP_MS before its `now`.
 *
 * @example
 * kept = mergeSpans(kept, await client.cluster(next).then((s) => s.stream!));
 */
export function mergeSpans(kept: readonly TaskSpan[], stream: TaskStream): TaskSpan[] {
  const horizon = stream.now - KEEP_MS;
  return [...kept, ...stream.spans].filter((s) => s.end >= horizon);
}

export interface Bar {
  lane: number;
  /** Fractions of the window's width, clipped to [0, 1]. */
  x0: number;
  x1: number;
  span: TaskSpan;
}

/**
 * The bars of a window of `windowMs` ending at `now`, one lane per worker in `workers`
 * order (workers only seen in spans get lanes after them).
 *
 * @example
 * const { lanes, bars } = layoutLanes(spans, ["cpu-0", "cpu-1"], now, 30_000);
 */
export function layoutLanes(
  spans: readonly TaskSpan[],
  workers: readonly string[],
  now: number,
  windowMs: number,
): { lanes: string[]; bars: Bar[] } {
  const lanes = [...workers];
  const start = now - windowMs;
  const bars: Bar[] = [];
  for (const span of spans) {
    if (span.end < start || span.start > now) continue;
    let lane = lanes.indexOf(span.worker);
    if (lane < 0) lane = lanes.push(span.worker) - 1;
    bars.push({
      lane,
      x0: Math.max(0, (span.start - start) / windowMs),
      x1: Math.min(1, (span.end - start) / windowMs),
      span,
    });
  }
  return { lanes, bars };
}

/** The longest and shortest windows the stream shows (ms). */
export const MAX_WINDOW_MS = 30_000;
export const MIN_WINDOW_MS = 2_000;

/**
 * The window that fits the recent activity: from the earliest span that ended in the
 * last MAX_WINDOW_MS to `now` (5% more), at least MIN_WINDOW_MS; so a run of a second
 * fills the stream rather than a sliver of it.
 *
 * @example
 * fitWindow([{ start: 9_000, end: 9_500, … }], 10_000) // 2_000
 */
export function fitWindow(spans: readonly TaskSpan[], now: number): number {
  let first = now;
  for (const s of spans) if (s.end >= now - MAX_WINDOW_MS) first = Math.min(first, s.start);
  return Math.min(MAX_WINDOW_MS, Math.max(MIN_WINDOW_MS, (now - first) * 1.05));
}
