// Runs on one local cluster share its workers, one task at a time on each (the
// lowering's memory budget per task holds). Each run's scheduler state sees a worker
// that another run's task holds as taken, and a freed worker is offered to the other
// runs first (local.ts): runs take turns, so a short run (a result view, a profile)
// starts as soon as any worker ends its task, not after a long run ends. A task given
// to a worker that is busy all the same (a run assigned it before hearing it was taken)
// waits here, and each worker takes the tasks waiting for it in the order they came.
import type { Ref } from "../scheduler/events.js";

/** A task of run `run` given to a worker. */
export interface Turn<R> {
  run: R;
  key: string;
  inputs: Ref[];
}

/**
 * @example
 * const turns = new WorkerTurns<string>((worker, t) => send(worker, t));
 * turns.give("cpu-0", { run: "a", key: "scan-0", inputs: [] }); // sent now
 * turns.give("cpu-0", { run: "b", key: "agg-0", inputs: [] }); // waits
 * turns.ended("cpu-0"); // returns a's turn and sends b's
 */
export class WorkerTurns<R> {
  private readonly current = new Map<string, Turn<R>>();
  private readonly waiting = new Map<string, Turn<R>[]>();

  /** `start` sends a turn's task to its worker (called when the worker is free for it). */
  constructor(private readonly start: (worker: string, turn: Turn<R>) => void) {}

  /** Gives a worker a task: started now when the worker is free, else after those given before it. */
  give(worker: string, turn: Turn<R>): void {
    if (this.current.has(worker)) {
      const queue = this.waiting.get(worker) ?? [];
      queue.push(turn);
      this.waiting.set(worker, queue);
      return;
    }
    this.begin(worker, turn);
  }

  /** The worker ended its task: returns that turn, and starts the next one waiting for the worker. */
  ended(worker: string): Turn<R> | undefined {
    const done = this.current.get(worker);
    this.current.delete(worker);
    const queue = this.waiting.get(worker);
    const next = queue?.shift();
    if (queue?.length === 0) this.waiting.delete(worker);
    if (next) this.begin(worker, next);
    return done;
  }

  /** The worker died: its task and those waiting for it, none of which will run now. */
  lost(worker: string): { current?: Turn<R>; waiting: Turn<R>[] } {
    const current = this.current.get(worker);
    const waiting = this.waiting.get(worker) ?? [];
    this.current.delete(worker);
    this.waiting.delete(worker);
    return { current, waiting };
  }

  /** Takes back a run's waiting tasks (the run failed): they never start. */
  withdraw(run: R): { worker: string; turn: Turn<R> }[] {
    const out: { worker: string; turn: Turn<R> }[] = [];
    for (const [worker, queue] of this.waiting) {
      const keep = queue.filter((t) => {
        if (t.run !== run) return true;
        out.push({ worker, turn: t });
        return false;
      });
      if (keep.length > 0) this.waiting.set(worker, keep);
      else this.waiting.delete(worker);
    }
    return out;
  }

  /** The turn `worker` is on now, if any. */
  on(worker: string): Turn<R> | undefined {
    return this.current.get(worker);
  }

  /** Workers running a task now. */
  busy(): string[] {
    return [...this.current.keys()];
  }

  private begin(worker: string, turn: Turn<R>): void {
    this.current.set(worker, turn);
    this.start(worker, turn);
  }
}
