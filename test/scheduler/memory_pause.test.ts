// The scheduler respects memory: over the limit it starts no new root tasks while
// others run, resumes when memory is freed, and never stalls a run.
import { describe, expect, it } from "vitest";
import type { Instruction } from "../../engine/scheduler/events.js";
import { SchedulerState } from "../../engine/scheduler/state.js";
import type { Task, TaskGraph } from "../../engine/graph/tasks.js";

const task = (key: string, deps: string[] = []): Task => ({
  key,
  group: key.replace(/-\d+$/, ""),
  deps: deps.map((d) => ({ key: d, index: 0 })),
  steps: [],
});
/** Four scans, two merges of pairs, a final. */
const tree: TaskGraph = {
  tasks: [
    task("scan-0"),
    task("scan-1"),
    task("scan-2"),
    task("scan-3"),
    task("merge-0", ["scan-0", "scan-1"]),
    task("merge-1", ["scan-2", "scan-3"]),
    task("final-0", ["merge-0", "merge-1"]),
  ],
  output: "final-0",
};
let n = 0;
const sid = () => `m${n++}`;
const executed = (out: Instruction[]) => out.flatMap((i) => (i.type === "execute" ? [`${i.key}@${i.worker}`] : []));
const done = (key: string, worker: string, ref: number) => ({
  type: "taskFinished" as const,
  key,
  worker,
  outputs: [ref],
  nbytes: 1,
  stimulusId: sid(),
});

function started(workers: string[]) {
  const s = new SchedulerState(tree);
  for (const w of workers) s.handle({ type: "workerAdded", worker: w, stimulusId: sid() });
  return { s, out: s.handle({ type: "start", stimulusId: sid() }) };
}

describe("SchedulerState under memory pressure", () => {
  it("holds back root tasks while over the limit and others run, and resumes when memory is freed", () => {
    const { s, out } = started(["w0", "w1"]);
    expect(executed(out)).toEqual(["scan-0@w0", "scan-1@w1"]);
    expect(s.handle({ type: "memory", overLimit: true, stimulusId: sid() })).toEqual([]);
    // w0 frees up, but only root tasks are ready and w1 still runs: nothing starts
    expect(executed(s.handle(done("scan-0", "w0", 10)))).toEqual([]);
    // merge-0 is not a root task: it starts although memory is over
    expect(executed(s.handle(done("scan-1", "w1", 11)))).toEqual(["merge-0@w0"]);
    expect(s.counts().ready).toBe(2);
    // memory freed: the waiting scans start on the idle worker
    expect(executed(s.handle({ type: "memory", overLimit: false, stimulusId: sid() }))).toEqual(["scan-2@w1"]);
  });

  it("starts one root task when nothing runs, so a run over the limit still progresses", () => {
    const { s } = started(["w0", "w1"]);
    s.handle({ type: "memory", overLimit: true, stimulusId: sid() });
    s.handle(done("scan-0", "w0", 10));
    const out = s.handle(done("scan-1", "w1", 11));
    expect(executed(out)).toEqual(["merge-0@w0"]);
    const next = s.handle(done("merge-0", "w0", 20));
    expect(executed(next)).toEqual(["scan-2@w1"]); // nothing else runs: one root task may start
    expect(s.counts().processing).toBe(1);
  });
});
