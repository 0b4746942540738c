// Runs sharing a cluster's workers: each worker runs one task at a time and takes the
// tasks given to it in the order they came, whichever run gave them.
import { describe, expect, it } from "vitest";
import { WorkerTurns, type Turn } from "../../engine/cluster/worker_turns.js";

function turns() {
  const started: string[] = [];
  const t = new WorkerTurns<string>((worker, turn) => started.push(`${worker}:${turn.run}/${turn.key}`));
  const give = (worker: string, run: string, key: string) => t.give(worker, { run, key, inputs: [] });
  return { t, started, give };
}
const keys = (ts: readonly (Turn<string> | undefined)[]) => ts.map((x) => x && `${x.run}/${x.key}`);

describe("WorkerTurns", () => {
  it("starts a task on a free worker at once, and one given to a busy worker when that one's task ends", () => {
    const { t, started, give } = turns();
    give("w0", "a", "scan-0");
    give("w0", "b", "view-0");
    give("w1", "b", "view-1");
    expect(started).toEqual(["w0:a/scan-0", "w1:b/view-1"]);
    expect(keys([t.ended("w0")])).toEqual(["a/scan-0"]);
    expect(started).toEqual(["w0:a/scan-0", "w1:b/view-1", "w0:b/view-0"]);
    expect(t.busy().sort()).toEqual(["w0", "w1"]);
    expect(keys([t.ended("w0"), t.ended("w1"), t.ended("w1")])).toEqual(["b/view-0", "b/view-1", undefined]);
    expect(t.busy()).toEqual([]);
  });

  it("takes each worker's waiting tasks in the order they came, so runs alternate", () => {
    const { t, started, give } = turns();
    give("w0", "long", "t0");
    give("w0", "short", "s0");
    t.ended("w0");
    give("w0", "long", "t1"); // the long run's next task, given when its first ended
    give("w0", "short", "s1");
    t.ended("w0");
    t.ended("w0");
    t.ended("w0");
    expect(started).toEqual(["w0:long/t0", "w0:short/s0", "w0:long/t1", "w0:short/s1"]);
  });

  it("withdraws only the failed run's waiting tasks, never the one a worker is on", () => {
    const { t, started, give } = turns();
    give("w0", "a", "x0");
    give("w0", "a", "x1");
    give("w0", "b", "y0");
    give("w1", "a", "x2");
    expect(t.withdraw("a").map((w) => `${w.worker}:${w.turn.key}`)).toEqual(["w0:x1"]);
    expect(t.on("w0")?.key).toBe("x0");
    t.ended("w0");
    expect(started.at(-1)).toBe("w0:b/y0");
    expect(t.withdraw("a")).toEqual([]);
  });

  it("gives back a lost worker's task and those waiting for it, and starts none of them", () => {
    const { t, started, give } = turns();
    give("w0", "a", "x0");
    give("w0", "b", "y0");
    const { current, waiting } = t.lost("w0");
    expect(keys([current, ...waiting])).toEqual(["a/x0", "b/y0"]);
    expect(t.ended("w0")).toBeUndefined();
    expect(started).toEqual(["w0:a/x0"]);
    give("w0", "b", "y0"); // its replacement is free
    expect(started).toEqual(["w0:a/x0", "w0:b/y0"]);
  });
});
