// A frame's task graph with a writer's step after each partition of its result, each
// in a task of its own: the partition is written by a worker as soon as it is made
// and released, instead of being kept until the whole result is done.
import type { Dep, Step, Task, TaskGraph } from "./tasks.js";

/**
 * `graph` with a task running `step(i)` on partition i of its result, for every
 * partition in order; the new output's parts are what those steps output. Returns the
 * number of partitions.
 *
 * @example
 * const { graph: g, parts } = withWriteTasks(graph, (part) => ({ kind: "writeCsvPart", sink, part }));
 */
export function withWriteTasks(graph: TaskGraph, step: (part: number) => Step): { graph: TaskGraph; parts: number } {
  const output = graph.tasks.find((t) => t.key === graph.output)!;
  // A partitioned graph ends in a task that passes its inputs through: write each of them.
  const deps: Dep[] =
    graph.partitioned && output.steps.length === 1 && output.steps[0].kind === "parts"
      ? output.deps
      : [{ key: graph.output, index: 0 }];
  const keys = new Set(graph.tasks.map((t) => t.key));
  const fresh = (base: string) => {
    let k = base;
    for (let n = 1; keys.has(k); n++) k = `${base}-${n}`;
    keys.add(k);
    return k;
  };
  const writes: Task[] = deps.map((d, i) => ({
    key: fresh(`write-${i}`),
    group: "write",
    deps: [d],
    steps: [step(i)],
  }));
  const parts: Task = {
    key: fresh("written"),
    group: "written",
    deps: writes.map((w) => ({ key: w.key, index: 0 })),
    steps: [{ kind: "parts" }],
  };
  const kept = deps === output.deps ? graph.tasks.filter((t) => t !== output) : graph.tasks;
  return { graph: { tasks: [...kept, ...writes, parts], output: parts.key, partitioned: true }, parts: writes.length };
}
