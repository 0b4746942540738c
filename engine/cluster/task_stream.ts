// The local cluster's task stream (the dashboard's bars, as in Dask's): every task's
// span on its worker, typed by what it does, plus the time the store spent spilling
// and reading spilled tables back while it ran. A bounded log read by cursor, so a
// dashboard polling each second receives each span once.
import type { TaskKind, TaskSpan, TaskStream } from "../common/rpc.js";
import type { Step } from "../graph/tasks.js";
import type { SpillCounters } from "../memory/status.js";

/** Steps that read files. */
const READS = new Set<Step["kind"]>(["scanCsv", "scanParquet", "scanJson", "scanArrow", "bagRead"]);
/** Steps that only move or cut partitions (a transfer between workers, in a cluster that shares memory). */
const MOVES = new Set<Step["kind"]>(["concat", "parts", "split", "hashPartition", "rangePartition", "stored"]);

/**
 * What a task's bar is: "disk read" when it reads a file, "transfer" when it only
 * moves partitions, else "compute".
 *
 * @example
 * taskKind([{ kind: "concat", inputs: [0, 1] }]) // "transfer"
 */
export function taskKind(steps: readonly Step[]): TaskKind {
  if (steps.some((s) => READS.has(s.kind))) return "disk read";
  if (steps.length > 0 && steps.every((s) => MOVES.has(s.kind))) return "transfer";
  return "compute";
}

const MIB = 1024 * 1024;
const mib = (bytes: number) => `${(bytes / MIB).toFixed(bytes < 10 * MIB ? 1 : 0)} MiB`;

/**
 * @example
 * const log = new TaskStreamLog();
 * log.started("w0", "scan-0", counters());
 * log.finished("w0", "scan-0", "scanCsv", "disk read", 12, counters());
 * log.read(0) // { now, next: 1, spans: [{ worker: "w0", kind: "disk read", … }] }
 */
export class TaskStreamLog {
  private spans: TaskSpan[] = [];
  /** The cursor of spans[0]. */
  private first = 0;
  private readonly open = new Map<string, { at: number; counters: SpillCounters }>();

  constructor(private readonly capacity = 20_000) {}

  /** A task was sent to `worker`. */
  started(worker: string, key: string, counters: SpillCounters): void {
    this.open.set(`${worker}\u0000${key}`, { at: Date.now(), counters });
  }

  /**
   * A task came back; `ms` is how long the worker worked on it (its bar ends now and
   * starts `ms` earlier, not when it was sent). Spills and read-backs of the store
   * while it ran become bars of their own on the same worker, just before its end.
   */
  finished(
    worker: string,
    key: string,
    group: string,
    kind: TaskKind,
    ms: number | undefined,
    counters: SpillCounters,
  ): void {
    const id = `${worker}\u0000${key}`;
    const begun = this.open.get(id);
    this.open.delete(id);
    const end = Date.now();
    const sent = begun?.at ?? end;
    const start = ms === undefined ? sent : Math.max(sent, end - ms);
    this.push({ worker, group, kind, start, end });
    if (!begun) return;
    const spilled = counters.spilledBytes - begun.counters.spilledBytes;
    const spillMs = 1000 * (counters.spillSeconds - begun.counters.spillSeconds);
    if (spilled > 0) this.push({ worker, group: `spill ${mib(spilled)}`, kind: "spill", start: end - spillMs, end });
    const readBack = counters.unspilledBytes - begun.counters.unspilledBytes;
    const readMs = 1000 * (counters.unspillSeconds - begun.counters.unspillSeconds);
    if (readBack > 0)
      this.push({ worker, group: `read back ${mib(readBack)}`, kind: "disk read", start: end - readMs, end });
  }

  /** A worker was lost or ended: its open task has no end. */
  dropWorker(worker: string): void {
    for (const id of [...this.open.keys()]) if (id.startsWith(`${worker}\u0000`)) this.open.delete(id);
  }

  /** Spans recorded at or after cursor `since`, at most the newest `max` (older ones beyond the capacity are gone). */
  read(since: number, max = 5000): TaskStream {
    const from = Math.max(0, since - this.first, this.spans.length - max);
    return { now: Date.now(), next: this.first + this.spans.length, spans: this.spans.slice(from) };
  }

  private push(span: TaskSpan): void {
    this.spans.push(span);
    if (this.spans.length > this.capacity) {
      const drop = this.spans.length - this.capacity;
      this.spans = this.spans.slice(drop);
      this.first += drop;
    }
  }
}
