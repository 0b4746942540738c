// GPU placement: which tasks go to GPU workers, which wait for one, and which stay
// on CPU workers; the affinity rule and the scheduler's choices, fed by hand.
import { describe, expect, it } from "vitest";
import type { Instruction } from "../../engine/scheduler/events.js";
import { gpuAffinity, placement, type CpuTasks } from "../../engine/scheduler/placement.js";
import { SchedulerState } from "../../engine/scheduler/state.js";
import type { Step, Task, TaskGraph } from "../../engine/graph/tasks.js";
import { mergePartials } from "../../engine/lower/merge_partials.js";

const stored: Step = { kind: "stored", handle: 1 };
const scan: Step = {
  kind: "scanCsv",
  path: "x.csv",
  start: 0,
  end: 10,
  options: { delimiter: ",", header: true, names: ["a"], types: ["int64"] } as never,
};
const filter: Step = { kind: "filter", predicate: { kind: "col", index: 0, type: "bool" } };
const sumAgg: Step = { kind: "aggregate", keys: [0], aggs: [{ op: "sum", column: 1, name: "s" }], mode: "partial" };
const medianAgg: Step = { kind: "aggregate", keys: [0], aggs: [{ op: "median", column: 1, name: "m" }], mode: "full" };
const merge: Step = { kind: "aggregate", keys: [0], aggs: [{ op: "sum", column: 1, name: "s" }], mode: "merge" };
const part: Step = { kind: "hashPartition", keys: [0], parts: 4 };
const topK: Step = { kind: "topK", keys: [0], column: 1, k: 2, descending: true };
const nuniqueAgg: Step = {
  kind: "aggregate",
  keys: [0],
  aggs: [{ op: "nunique", column: 1, name: "u" }],
  mode: "full",
};
const sort: Step = { kind: "sort", keys: [{ column: 0, descending: false, nullsFirst: false }] };

describe("gpuAffinity", () => {
  it("all-GPU work on data in memory waits for a GPU worker; with CPU work before or after it only prefers one", () => {
    expect(gpuAffinity([stored, filter, sumAgg])).toBe("require");
    expect(gpuAffinity([stored, filter])).toBe("require");
    expect(gpuAffinity([stored, medianAgg])).toBe("require");
    expect(gpuAffinity([stored, nuniqueAgg])).toBe("require");
    expect(gpuAffinity([stored, filter, topK])).toBe("require");
    expect(gpuAffinity([stored, filter, sumAgg, part])).toBe("prefer");
    expect(gpuAffinity([scan, filter, sumAgg, part])).toBe("prefer");
  });

  it("tasks whose heavy part the GPU does not do stay with CPU workers", () => {
    expect(gpuAffinity([stored, filter, sort])).toBe("none");
    expect(gpuAffinity([stored, merge])).toBe("none");
    expect(gpuAffinity([scan, part])).toBe("none");
  });
});

describe("a group-by's merge of partial states", () => {
  it("is GPU work where it is a full aggregation of the states (sums, counts, minima, means), CPU work where moments merge", () => {
    const [plain] = mergePartials(["k"], ["int64"], [{ agg: { op: "sum", column: 1, name: "s" }, argType: "int64" }]);
    const withMean = mergePartials(
      ["k"],
      ["int64"],
      [{ agg: { op: "mean", column: 1, name: "m" }, argType: "float64" }],
    );
    const moments = mergePartials(["k"], ["int64"], [{ agg: { op: "var", column: 1, name: "v" }, argType: "float64" }]);
    const concat: Step = { kind: "concat", inputs: [0, 1, 2] };
    expect(gpuAffinity([concat, plain!])).toBe("require");
    expect(gpuAffinity([concat, ...withMean])).toBe("require");
    expect(gpuAffinity([concat, ...moments])).toBe("none");
  });
});

describe("placement with cpuTasks", () => {
  it('"reads" sends every task that does not start by reading a file to the GPU workers; "all" changes nothing', () => {
    expect(placement([stored, sort], "reads")).toBe("require");
    expect(placement([stored, merge], "reads")).toBe("require");
    expect(placement([stored, filter, sumAgg, part], "reads")).toBe("require");
    expect(placement([scan, part], "reads")).toBe("none");
    expect(placement([scan, filter, sumAgg, part], "reads")).toBe("prefer");
    expect(placement([stored, sort], "all")).toBe("none");
    expect(placement([stored, filter, sumAgg, part], "all")).toBe("prefer");
  });
});

describe("SchedulerState with GPU workers", () => {
  let n = 0;
  const sid = () => `p${n++}`;
  const task = (key: string, steps: Step[]): Task => ({ key, group: key.replace(/-\d+$/, ""), deps: [], steps });
  const executes = (out: Instruction[]) =>
    out.filter((i) => i.type === "execute").map((i) => (i.type === "execute" ? [i.key, i.worker] : []));
  function start(
    graph: TaskGraph,
    workers: string[],
    cpuTasks: CpuTasks = "all",
  ): { s: SchedulerState; out: Instruction[] } {
    const s = new SchedulerState(graph, cpuTasks);
    for (const w of workers) s.handle({ type: "workerAdded", worker: w, stimulusId: sid() });
    return { s, out: s.handle({ type: "start", stimulusId: sid() }) };
  }

  it("GPU tasks go to the GPU worker and wait for it; CPU-only tasks take the CPU workers meanwhile", () => {
    const final: Task = {
      key: "final-0",
      group: "final",
      deps: ["agg-0", "agg-1", "top-0"].map((key) => ({ key, index: 0 })),
      steps: [merge],
    };
    const graph: TaskGraph = {
      tasks: [task("agg-0", [stored, sumAgg]), task("agg-1", [stored, sumAgg]), task("top-0", [stored, sort]), final],
      output: "final-0",
    };
    const { s, out } = start(graph, ["cpu-0", "gpu-0", "cpu-1"]);
    expect(executes(out)).toEqual([
      ["agg-0", "gpu-0"],
      ["top-0", "cpu-0"],
    ]);
    const next = s.handle({
      type: "taskFinished",
      key: "agg-0",
      worker: "gpu-0",
      outputs: [5],
      nbytes: 1,
      stimulusId: sid(),
    });
    expect(executes(next)).toEqual([["agg-1", "gpu-0"]]);
  });

  it("a task over a partition persist() uploaded to a GPU goes to that GPU when it is free, else to another", () => {
    const on = (handle: number): Step => ({ kind: "stored", handle });
    const all: Task = {
      key: "all-0",
      group: "all",
      deps: ["agg-0", "agg-1", "agg-2"].map((key) => ({ key, index: 0 })),
      steps: [merge],
    };
    const graph: TaskGraph = {
      tasks: [task("agg-0", [on(10), sumAgg]), task("agg-1", [on(11), sumAgg]), task("agg-2", [on(12), sumAgg]), all],
      output: "all-0",
    };
    const homes = new Map([
      [10, 1],
      [11, 1],
    ]);
    const s = new SchedulerState(graph, "reads", (h) => (homes.has(h) ? `gpu-${homes.get(h)}` : undefined));
    for (const w of ["gpu-0", "gpu-1", "cpu-0"]) s.handle({ type: "workerAdded", worker: w, stimulusId: sid() });
    // agg-0's home, GPU 1, is free: it goes there although gpu-0 comes first; agg-1's home
    // is then busy, so it takes gpu-0 rather than wait.
    expect(executes(s.handle({ type: "start", stimulusId: sid() }))).toEqual([
      ["agg-0", "gpu-1"],
      ["agg-1", "gpu-0"],
    ]);
    const next = s.handle({
      type: "taskFinished",
      key: "agg-0",
      worker: "gpu-1",
      outputs: [5],
      nbytes: 1,
      stimulusId: sid(),
    });
    expect(executes(next)).toEqual([["agg-2", "gpu-1"]]);
  });

  it("a CPU task over a persisted partition goes to the worker process keeping its copy when that one is free", () => {
    const on = (handle: number): Step => ({ kind: "stored", handle });
    const graph: TaskGraph = {
      tasks: [task("p-0", [on(20), sort]), task("p-1", [on(21), sort]), task("p-2", [on(22), sort])],
      output: "p-0",
    };
    const homes = new Map([
      [20, "cpu-1"],
      [21, "cpu-1"],
    ]);
    const s = new SchedulerState(graph, "all", (h) => homes.get(h));
    for (const w of ["cpu-0", "cpu-1"]) s.handle({ type: "workerAdded", worker: w, stimulusId: sid() });
    // p-0 goes home to cpu-1 although cpu-0 comes first; p-1's home is then busy: cpu-0.
    expect(executes(s.handle({ type: "start", stimulusId: sid() }))).toEqual([
      ["p-0", "cpu-1"],
      ["p-1", "cpu-0"],
    ]);
  });

  it("a task that scans a file first takes a CPU worker when the GPU worker is busy", () => {
    const graph: TaskGraph = {
      tasks: [task("scan-0", [scan, sumAgg]), task("scan-1", [scan, sumAgg])],
      output: "scan-0",
    };
    const { out } = start(graph, ["gpu-0", "cpu-0"]);
    expect(executes(out)).toEqual([
      ["scan-0", "gpu-0"],
      ["scan-1", "cpu-0"],
    ]);
  });

  it('with cpuTasks "reads", CPU workers parse files and the rest waits for the GPU worker', () => {
    const graph: TaskGraph = {
      tasks: [
        task("read-0", [scan]),
        task("read-1", [scan]),
        task("sort-0", [stored, sort]),
        task("sort-1", [stored, sort]),
        {
          key: "all-0",
          group: "all",
          deps: ["read-0", "read-1", "sort-0", "sort-1"].map((key) => ({ key, index: 0 })),
          steps: [merge],
        },
      ],
      output: "all-0",
    };
    const { s, out } = start(graph, ["cpu-0", "cpu-1", "gpu-0"], "reads");
    expect(executes(out).sort()).toEqual([
      ["read-0", "cpu-0"],
      ["read-1", "cpu-1"],
      ["sort-0", "gpu-0"],
    ]);
    const next = s.handle({
      type: "taskFinished",
      key: "read-0",
      worker: "cpu-0",
      outputs: [5],
      nbytes: 1,
      stimulusId: sid(),
    });
    expect(executes(next)).toEqual([]); // sort-1 waits for the GPU worker, not for cpu-0
    const after = s.handle({
      type: "taskFinished",
      key: "sort-0",
      worker: "gpu-0",
      outputs: [6],
      nbytes: 1,
      stimulusId: sid(),
    });
    expect(executes(after)).toEqual([["sort-1", "gpu-0"]]);
  });

  it("without GPU workers, GPU tasks run on CPU workers as before", () => {
    const graph: TaskGraph = {
      tasks: [task("agg-0", [stored, sumAgg]), task("agg-1", [stored, sumAgg])],
      output: "agg-0",
    };
    const { out } = start(graph, ["cpu-0", "cpu-1"]);
    expect(executes(out)).toEqual([
      ["agg-0", "cpu-0"],
      ["agg-1", "cpu-1"],
    ]);
  });
});
