// The scheduler state machine, fed events by hand: assertions on the instructions it emits.
import { describe, expect, it } from "vitest";
import type { Instruction } from "../../engine/scheduler/events.js";
import { graphOrder } from "../../engine/scheduler/order.js";
import { ALLOWED_FAILURES, SchedulerState } from "../../engine/scheduler/state.js";
import type { Task, TaskGraph } from "../../engine/graph/tasks.js";

function task(key: string, deps: string[] = [], group = key.replace(/-\d+$/, "")): Task {
  return { key, group, deps: deps.map((d) => ({ key: d, index: 0 })), steps: [] };
}

/** Four scans, two partial pairs, one final: a small reduction tree. */
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
const sid = () => `s${n++}`;
const of = <T extends Instruction["type"]>(out: Instruction[], type: T) =>
  out.filter((i): i is Extract<Instruction, { type: T }> => i.type === type);

function started(graph: TaskGraph, workers: string[]): { s: SchedulerState; out: Instruction[] } {
  const s = new SchedulerState(graph);
  for (const w of workers) s.handle({ type: "workerAdded", worker: w, stimulusId: sid() });
  return { s, out: s.handle({ type: "start", stimulusId: sid() }) };
}

describe("SchedulerState", () => {
  it("orders depth-first so each branch can finish and free memory before the next starts", () => {
    const order = graphOrder(tree);
    expect(order.get("merge-0")).toBeLessThan(order.get("scan-2")!);
    expect(order.get("final-0")).toBe(6);
  });

  it("starts with progress for every group and one task per idle worker, highest priority first", () => {
    const { out } = started(tree, ["w0", "w1"]);
    expect(of(out, "progress").map((p) => [p.group, p.done, p.total])).toEqual([
      ["scan", 0, 4],
      ["merge", 0, 2],
      ["final", 0, 1],
    ]);
    expect(of(out, "execute").map((e) => [e.key, e.worker])).toEqual([
      ["scan-0", "w0"],
      ["scan-1", "w1"],
    ]);
  });

  it("runs a dependant on the idle worker that holds most of its input bytes", () => {
    const pair: TaskGraph = {
      tasks: [task("scan-0"), task("scan-1"), task("merge-0", ["scan-0", "scan-1"])],
      output: "merge-0",
    };
    const { s } = started(pair, ["w0", "w1"]);
    s.handle({ type: "taskFinished", key: "scan-1", worker: "w1", outputs: [11], nbytes: 100, stimulusId: sid() });
    const out = s.handle({
      type: "taskFinished",
      key: "scan-0",
      worker: "w0",
      outputs: [10],
      nbytes: 1,
      stimulusId: sid(),
    });
    expect(of(out, "execute")).toEqual([expect.objectContaining({ key: "merge-0", worker: "w1", inputs: [10, 11] })]);
  });

  it("releases inputs as soon as their last dependant finished, and reports group progress", () => {
    const { s } = started(tree, ["w0"]);
    s.handle({ type: "taskFinished", key: "scan-0", worker: "w0", outputs: [10], nbytes: 1, stimulusId: sid() });
    s.handle({ type: "taskFinished", key: "scan-1", worker: "w0", outputs: [11], nbytes: 1, stimulusId: sid() });
    const out = s.handle({
      type: "taskFinished",
      key: "merge-0",
      worker: "w0",
      outputs: [20],
      nbytes: 1,
      stimulusId: sid(),
    });
    expect(of(out, "release").map((r) => [r.key, r.outputs])).toEqual([
      ["scan-0", [10]],
      ["scan-1", [11]],
    ]);
    expect(of(out, "progress")).toEqual([expect.objectContaining({ group: "merge", done: 1, total: 2 })]);
    expect(of(out, "execute")).toEqual([expect.objectContaining({ key: "scan-2" })]);
  });

  it("hands the output to the caller when the last task finishes and releases the rest", () => {
    const { s } = started(tree, ["w0"]);
    const order = ["scan-0", "scan-1", "merge-0", "scan-2", "scan-3", "merge-1", "final-0"];
    let last: Instruction[] = [];
    order.forEach((key, i) => {
      last = s.handle({ type: "taskFinished", key, worker: "w0", outputs: [100 + i], nbytes: 1, stimulusId: sid() });
    });
    expect(of(last, "finished")).toEqual([expect.objectContaining({ outputs: [106] })]);
    expect(
      of(last, "release")
        .map((r) => r.key)
        .sort(),
    ).toEqual(["merge-0", "merge-1"]);
    expect(s.status).toBe("finished");
    expect(s.counts().memory).toBe(0);
  });

  it("requeues the task of a lost worker and gives up after repeated losses", () => {
    const { s } = started({ tasks: [task("scan-0")], output: "scan-0" }, ["w0"]);
    for (let i = 1; i < ALLOWED_FAILURES; i++) {
      s.handle({ type: "workerLost", worker: `w${i - 1}`, reason: "crashed", stimulusId: sid() });
      const out = s.handle({ type: "workerAdded", worker: `w${i}`, stimulusId: sid() });
      expect(of(out, "execute")).toEqual([expect.objectContaining({ key: "scan-0", worker: `w${i}` })]);
    }
    const out = s.handle({
      type: "workerLost",
      worker: `w${ALLOWED_FAILURES - 1}`,
      reason: "out of memory",
      stimulusId: sid(),
    });
    expect(of(out, "failed")[0].error).toMatchObject({
      code: "BASIN_WORKER",
      message: expect.stringContaining("out of memory"),
    });
    expect(s.status).toBe("failed");
  });

  it("fails the run on a task error, releases what it holds, and drops results that arrive later", () => {
    const { s } = started(tree, ["w0", "w1"]);
    s.handle({ type: "taskFinished", key: "scan-0", worker: "w0", outputs: [10], nbytes: 1, stimulusId: sid() });
    const err = { name: "BasinError", code: "BASIN_PARSE" as const, message: "bad", location: "p.ts:3:1" };
    let out = s.handle({ type: "taskErred", key: "scan-1", worker: "w1", error: err, stimulusId: sid() });
    expect(of(out, "failed")).toEqual([expect.objectContaining({ key: "scan-1", error: err })]);
    expect(of(out, "release").map((r) => r.outputs)).toEqual([[10]]);
    expect(of(out, "execute")).toEqual([]);
    out = s.handle({ type: "taskFinished", key: "scan-2", worker: "w0", outputs: [12], nbytes: 1, stimulusId: sid() });
    expect(of(out, "release").map((r) => r.outputs)).toEqual([[12]]);
    expect(of(out, "execute")).toEqual([]);
  });

  it("on failure keeps the inputs of a task still running until it ends, then releases them", () => {
    const { s } = started(tree, ["w0", "w1", "w2"]);
    // scan-0 and scan-1 finish: merge-0 starts on a worker and reads both.
    s.handle({ type: "taskFinished", key: "scan-0", worker: "w0", outputs: [10], nbytes: 1, stimulusId: sid() });
    let out = s.handle({
      type: "taskFinished",
      key: "scan-1",
      worker: "w1",
      outputs: [11],
      nbytes: 1,
      stimulusId: sid(),
    });
    const merge = of(out, "execute").find((e) => e.key === "merge-0")!;
    expect(merge).toBeDefined();
    const err = { name: "BasinError", code: "BASIN_SPILL" as const, message: "disk full" };
    out = s.handle({ type: "taskErred", key: "scan-2", worker: "w2", error: err, stimulusId: sid() });
    expect(of(out, "failed")).toHaveLength(1);
    // merge-0 is still running on its worker: its inputs stay.
    expect(of(out, "release")).toEqual([]);
    out = s.handle({
      type: "taskFinished",
      key: "merge-0",
      worker: merge.worker,
      outputs: [20],
      nbytes: 1,
      stimulusId: sid(),
    });
    expect(
      of(out, "release")
        .map((r) => r.outputs)
        .sort(),
    ).toEqual([[10], [11], [20]]);
  });

  it("cancels: nothing new starts, memory is released, one failed instruction with BASIN_CANCELLED", () => {
    const { s } = started(tree, ["w0", "w1"]);
    s.handle({ type: "taskFinished", key: "scan-0", worker: "w0", outputs: [10], nbytes: 1, stimulusId: sid() });
    const out = s.handle({ type: "cancel", reason: "user", stimulusId: "cancel-1" });
    expect(of(out, "failed")).toEqual([
      expect.objectContaining({ stimulusId: "cancel-1", error: expect.objectContaining({ code: "BASIN_CANCELLED" }) }),
    ]);
    expect(of(out, "release").length).toBe(1);
    expect(s.handle({ type: "cancel", reason: "again", stimulusId: sid() })).toEqual([]);
  });

  it("stamps every instruction with the stimulus that caused it", () => {
    const { s } = started(tree, ["w0"]);
    const out = s.handle({
      type: "taskFinished",
      key: "scan-0",
      worker: "w0",
      outputs: [1],
      nbytes: 1,
      stimulusId: "done-scan-0",
    });
    expect(out.length).toBeGreaterThan(0);
    expect(out.every((i) => i.stimulusId === "done-scan-0")).toBe(true);
  });
});
