/**
 * Where one Basin run's time went, for the benchmark's log: the longest task spans of
 * the cluster's task stream during the run, and what the GPUs did (chains, time inside
 * them, bytes and time of their copies). A slow GPU question's line then says whether
 * its time is in the device chain, in its copies, or outside the GPU altogether.
 */
import type * as api from "../engine/api/index.js";
import type { GpuStats } from "../engine/native/addon.js";

/** The GPU figures a trace compares before and after a run. */
const GPU_FIELDS = [
  "chains",
  "chainMicros",
  "uploads",
  "uploadBytes",
  "uploadMicros",
  "downloads",
  "downloadBytes",
  "downloadMicros",
  "evictedBytes",
  "resultTables",
  "resultBytes",
  "resultSpilledBytes",
] as const satisfies readonly (keyof GpuStats)[];
type GpuTotals = Record<(typeof GPU_FIELDS)[number], number>;

function sumGpus(gpus: readonly GpuStats[]): GpuTotals {
  const t = Object.fromEntries(GPU_FIELDS.map((f) => [f, 0])) as GpuTotals;
  for (const g of gpus) for (const f of GPU_FIELDS) t[f] += g[f];
  return t;
}

/** The GPU time of each chain phase between two readings, longest first (the first four). */
function phaseDeltas(before: readonly GpuStats[], after: readonly GpuStats[]): [string, number][] {
  const sum = (gpus: readonly GpuStats[]): Map<string, number> => {
    const m = new Map<string, number>();
    for (const g of gpus) for (const [p, us] of Object.entries(g.phases ?? {})) m.set(p, (m.get(p) ?? 0) + us);
    return m;
  };
  const b = sum(before);
  return [...sum(after)]
    .map(([p, us]): [string, number] => [p, us - (b.get(p) ?? 0)])
    .filter(([, us]) => us > 0)
    .sort((x, y) => y[1] - x[1])
    .slice(0, 4);
}

const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(bytes < 1e7 ? 1 : 0)} MB`;
const ms = (micros: number): string => `${(micros / 1000).toFixed(1)} ms`;

/**
 * One line for a run from the task spans it made and the GPU totals before and after.
 *
 * @example
 * describeRun([{ worker: "gpu-0", group: "stored→aggregate", kind: "compute", start: 0, end: 980 }], before, after)
 * // "tasks: 1 busy 980 ms within 980 ms, longest gpu-0 stored→aggregate 980 ms; gpu: 1 chain 975.0 ms, up 0.0 MB in 0.0 ms, down 912 MB in 95.0 ms"
 */
export function describeRun(
  spans: readonly { worker: string; group: string; end: number; start: number }[],
  before: readonly GpuStats[],
  after: readonly GpuStats[],
): string {
  const longest = [...spans]
    .sort((a, b) => b.end - b.start - (a.end - a.start))
    .slice(0, 3)
    .map((s) => `${s.worker} ${s.group} ${Math.round(s.end - s.start)} ms`);
  const busy = spans.reduce((t, s) => t + (s.end - s.start), 0);
  const window = spans.length ? Math.max(...spans.map((s) => s.end)) - Math.min(...spans.map((s) => s.start)) : 0;
  const parts = [
    `tasks: ${spans.length} busy ${Math.round(busy)} ms within ${Math.round(window)} ms` +
      (longest.length ? `, longest ${longest.join(", ")}` : ""),
  ];
  const a = sumGpus(after),
    b = sumGpus(before);
  const d = Object.fromEntries(GPU_FIELDS.map((f) => [f, a[f] - b[f]])) as GpuTotals;
  const phases = phaseDeltas(before, after);
  if (d.chains > 0)
    parts.push(
      `gpu: ${d.chains} chain${d.chains === 1 ? "" : "s"} ${ms(d.chainMicros)}, ` +
        `up ${mb(d.uploadBytes)} in ${ms(d.uploadMicros)}, down ${mb(d.downloadBytes)} in ${ms(d.downloadMicros)}` +
        (d.evictedBytes > 0 ? `, spilled ${mb(d.evictedBytes)} of cached columns` : "") +
        (d.resultTables > 0
          ? `, kept ${d.resultTables} output${d.resultTables === 1 ? "" : "s"} (${mb(d.resultBytes)}) on the GPU`
          : "") +
        (d.resultSpilledBytes > 0 ? `, spilled ${mb(d.resultSpilledBytes)} of kept outputs to host` : "") +
        (phases.length > 0 ? `; phases ${phases.map(([p, us]) => `${p} ${ms(us)}`).join(", ")}` : ""),
    );
  return parts.join("; ");
}

/**
 * Traces runs on a local cluster: `start()` before the timer, `end()` after it (both
 * untimed), giving the run's {@link describeRun} line.
 */
export function clusterTracer(cluster: () => api.LocalCluster | undefined): RunTracer {
  let cursor = 0;
  let before: GpuStats[] = [];
  return {
    async start() {
      const c = cluster();
      if (!c) return;
      cursor = c.taskStream.read(Number.MAX_SAFE_INTEGER).next;
      before = (await c.memoryTotals()).gpus;
    },
    async end() {
      const c = cluster();
      if (!c) return "";
      const spans = c.taskStream.read(cursor).spans;
      return describeRun(spans, before, (await c.memoryTotals()).gpus);
    },
  };
}

/** Says where a contender's run went: start() and end() run outside the timed span. */
export interface RunTracer {
  start(): Promise<void>;
  end(): Promise<string>;
}
