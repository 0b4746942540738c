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

  it("gives nothing to a worker another run holds until it is free again, even after its own task there ends", () => {
    const s = new SchedulerState(tree);
    for (const w of ["w0", "w1"]) s.handle({ type: "workerAdded", worker: w, stimulusId: sid() });
    s.handle({ type: "workerTaken", worker: "w1", stimulusId: sid() });
    let out = s.handle({ type: "start", stimulusId: sid() });
    expect(of(out, "execute").map((x) => x.worker)).toEqual(["w0"]);
    // Its task on w0 ends while another run's task has begun there: w0 stays taken.
    s.handle({ type: "workerTaken", worker: "w0", stimulusId: sid() });
    out = s.handle({ type: "taskFinished", key: "scan-0", worker: "w0", outputs: [1], nbytes: 1, stimulusId: sid() });
    expect(of(out, "execute")).toEqual([]);
    out = s.handle({ type: "workerAdded", worker: "w1", stimulusId: sid() });
    expect(of(out, "execute")).toEqual([expect.objectContaining({ key: "scan-1", worker: "w1" })]);
  });

  it("does not count a worker's loss against a task that had not begun there (it waited behind another run's)", () => {
    const { s } = started({ tasks: [task("scan-0")], output: "scan-0" }, ["w0"]);
    for (let i = 1; i <= ALLOWED_FAILURES + 1; i++) {
      s.handle({ type: "workerLost", worker: `w${i - 1}`, reason: "crashed", started: false, stimulusId: sid() });
      const out = s.handle({ type: "workerAdded", worker: `w${i}`, stimulusId: sid() });
      expect(of(out, "execute")).toEqual([expect.objectContaining({ key: "scan-0", worker: `w${i}` })]);
    }
    expect(s.status).toBe("running");
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

  /**
   * Runs a graph to the end on workers whose outputs live in their own memory (worker
   * processes): each execute finishes with a fresh ref, and `loseAt(step)` names a
   * worker to lose before that step, with every live ref it made.
   */
  function simulate(graph: TaskGraph, workers: string[], loseAt: (step: number) => string | undefined) {
    const s = new SchedulerState(graph);
    for (const w of workers) s.handle({ type: "workerAdded", worker: w, stimulusId: sid() });
    const running = new Map<string, { key: string; inputs: number[] }>();
    const live = new Map<number, { worker: string; value: string }>();
    const released: number[] = [];
    const executed: string[] = [];
    const deps = new Map(graph.tasks.map((t) => [t.key, t.deps.map((d) => d.key)]));
    let next = 100;
    let result: string | undefined;
    const apply = (out: Instruction[]) => {
      for (const i of out) {
        if (i.type === "execute") {
          for (const r of i.inputs) expect(live.has(r), `${i.key} reads live data`).toBe(true);
          running.set(i.worker, { key: i.key, inputs: i.inputs });
          executed.push(i.key);
        } else if (i.type === "release") {
          for (const r of i.outputs) {
            expect(live.has(r), `ref ${r} released once, while live`).toBe(true);
            live.delete(r);
            released.push(r);
          }
        } else if (i.type === "finished") result = live.get(i.outputs[0])!.value;
        else if (i.type === "failed") throw new Error(i.error.message);
      }
    };
    apply(s.handle({ type: "start", stimulusId: sid() }));
    for (let step = 0; s.status === "running" && step < 100; step++) {
      const lose = loseAt(step);
      if (lose) {
        const lost = [...live].filter(([, v]) => v.worker === lose).map(([r]) => r);
        for (const r of lost) live.delete(r);
        running.delete(lose);
        apply(s.handle({ type: "workerLost", worker: lose, reason: "killed", lost, stimulusId: sid() }));
        const replacement = `${lose}'`;
        workers = workers.map((w) => (w === lose ? replacement : w));
        apply(s.handle({ type: "workerAdded", worker: replacement, stimulusId: sid() }));
        continue;
      }
      const [worker, t] = [...running][0];
      running.delete(worker);
      if (t.inputs.some((r) => !live.has(r))) {
        // Its input was lost before it could be moved here: the move fails (a stale error).
        const error = { name: "BasinError", code: "BASIN_WORKER" as const, message: "input lost" };
        apply(s.handle({ type: "taskErred", key: t.key, worker, error, stimulusId: sid() }));
        continue;
      }
      // The value a task computes names it and the values it read, so a wrong input shows.
      const value = `${t.key}(${t.inputs.map((r) => live.get(r)!.value).join(",")})`;
      const ref = next++;
      live.set(ref, { worker, value });
      apply(s.handle({ type: "taskFinished", key: t.key, worker, outputs: [ref], nbytes: 1, stimulusId: sid() }));
    }
    const expected = (key: string): string => `${key}(${deps.get(key)!.map(expected).join(",")})`;
    return { s, result, expected: expected(graph.output), executed, live };
  }

  it("recomputes from lineage what a lost worker process held, and the released inputs it needs", () => {
    // Step 5: the merges are done (the scans they read released); the worker holding merge-0 dies.
    const r = simulate(tree, ["p0", "p1"], (step) => (step === 6 ? "p0" : undefined));
    expect(r.result).toBe(r.expected);
    expect(r.executed.length, "some tasks ran twice").toBeGreaterThan(tree.tasks.length);
    expect(r.live.size, "only the result is left").toBe(1);
  });

  it.each([0, 1, 2, 3, 4, 5, 6, 7])(
    "gives the same answer whichever moment a worker process dies (before step %i)",
    (at) => {
      for (const who of ["p0", "p1"]) {
        const r = simulate(tree, ["p0", "p1"], (step) => (step === at ? who : undefined));
        expect(r.result).toBe(r.expected);
        expect(r.live.size).toBe(1);
      }
    },
  );

  it("restarts a task that was reading a lost output, and drops its stale result and error", () => {
    const pair: TaskGraph = {
      tasks: [task("scan-0"), task("scan-1"), task("merge-0", ["scan-0", "scan-1"])],
      output: "merge-0",
    };
    const { s } = started(pair, ["p0", "p1", "p2"]);
    s.handle({ type: "taskFinished", key: "scan-0", worker: "p0", outputs: [-1], nbytes: 1, stimulusId: sid() });
    let out = s.handle({
      type: "taskFinished",
      key: "scan-1",
      worker: "p1",
      outputs: [-2],
      nbytes: 1,
      stimulusId: sid(),
    });
    const merge = of(out, "execute")[0];
    expect(merge.key).toBe("merge-0");
    const lostWorker = merge.worker === "p0" ? "p1" : "p0";
    const lostRef = lostWorker === "p0" ? -1 : -2;
    out = s.handle({ type: "workerLost", worker: lostWorker, reason: "killed", lost: [lostRef], stimulusId: sid() });
    expect(
      of(out, "execute").map((e) => e.key),
      "the lost scan runs again",
    ).toEqual([lostWorker === "p0" ? "scan-0" : "scan-1"]);
    expect(s.counts()).toMatchObject({ processing: 1, waiting: 1 });
    // merge-0's worker says its input move failed: stale, the run goes on.
    out = s.handle({
      type: "taskErred",
      key: "merge-0",
      worker: merge.worker,
      error: { name: "BasinError", code: "BASIN_WORKER", message: "gone" },
      stimulusId: sid(),
    });
    expect(s.status).toBe("running");
    expect(of(out, "failed")).toEqual([]);
    const again = of(out, "execute").length === 0 ? undefined : of(out, "execute")[0];
    expect(again, "merge-0 still waits for the scan").toBeUndefined();
  });
});
