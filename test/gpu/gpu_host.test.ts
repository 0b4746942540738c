// The GPU path's host-side logic, which runs without a GPU: which steps a GPU worker
// takes (native gpuPrefix), GPU options and their errors, `basin info`'s CUDA facts,
// and a clear BASIN_CUDA error when a GPU is asked for where none can run.
import { afterAll, describe, expect, it } from "vitest";
import { col, count, fromColumns, LocalCluster } from "../../engine/api/index.js";
import { parseGpuList, resolveGpus } from "../../engine/cluster/gpus.js";
import { lowerPlan } from "../../engine/lower/lower.js";
import type { Step } from "../../engine/graph/tasks.js";
import { native } from "../../engine/native/addon.js";
import { optimize } from "../../engine/plan/optimizer.js";
import { rejected, thrown } from "../helpers/errors.js";

const frame = fromColumns(
  { id: [1, 2, 3, null], s: ["a", "é", null, "a"], f: [0.5, -1, null, 2], b: [true, null, false, true] },
  { partitions: [4], types: { id: "int64", f: "float64" } },
);

/** The steps of the one task that reads the data, after the values step. */
function taskSteps(df: typeof frame): Step[] {
  const g = lowerPlan(optimize(df.node));
  const t = g.tasks.find((x) => x.steps[0].kind === "values")!;
  return t.steps.slice(1);
}

describe("gpu host logic: which steps a GPU worker runs", () => {
  const addon = native();
  const withTable = <T>(f: (h: number) => T): T => {
    const h = addon.tableFromJs({
      rows: 2,
      names: ["id", "s", "f"],
      columns: [
        { type: "int64", values: BigInt64Array.from([1n, 2n]), validity: null },
        { type: "string", values: ["x", "y"], validity: null },
        { type: "float64", values: Float64Array.from([1, 2]), validity: null },
      ],
    });
    try {
      return f(h);
    } finally {
      addon.release(h);
    }
  };

  it("a numeric filter, computed columns and a partial aggregate run as one GPU chain", () => {
    const steps = taskSteps(
      frame
        .filter(col("f").gt(0).and(col("id").isNotNull()))
        .withColumns({ g: col("f").mul(2) })
        .groupBy("s")
        .agg(col("g").sum().alias("x"), count().alias("n")),
    );
    expect(steps.map((s) => s.kind)).toContain("aggregate");
    const h = addon.tableFromJs({
      rows: 0,
      names: ["id", "s", "f", "b"],
      columns: [
        { type: "int64", values: new BigInt64Array(0), validity: null },
        { type: "string", values: [], validity: null },
        { type: "float64", values: new Float64Array(0), validity: null },
        { type: "bool", values: new Uint8Array(0), validity: null },
      ],
    });
    let n: number;
    try {
      n = addon.gpuPrefix(0, h, steps);
    } finally {
      addon.release(h);
    }
    expect(n).toBe(steps.findIndex((s) => s.kind === "aggregate") + 1);
  });

  it("a regex, a float-to-int cast and a merge of partial aggregates stay on the CPU; string comparisons do not", () => {
    withTable((h) => {
      const eq: Step = {
        kind: "filter",
        predicate: {
          kind: "binary",
          op: "eq",
          type: "bool",
          left: { kind: "col", index: 1, type: "string" },
          right: { kind: "lit", value: "x", type: "string" },
        },
      };
      const str: Step = {
        kind: "filter",
        predicate: {
          kind: "fn",
          name: "str.contains",
          type: "bool",
          args: [{ kind: "col", index: 1, type: "string" }],
          options: { pattern: "x.*y", literal: false },
        },
      };
      const cast: Step = {
        kind: "project",
        names: ["c"],
        exprs: [{ kind: "cast", type: "int64", arg: { kind: "col", index: 2, type: "float64" } }],
      };
      const merge: Step = { kind: "aggregate", keys: [0], aggs: [{ op: "sum", column: 2, name: "f" }], mode: "merge" };
      const ok: Step = {
        kind: "filter",
        predicate: {
          kind: "binary",
          op: "gt",
          type: "bool",
          left: { kind: "col", index: 2, type: "float64" },
          right: { kind: "lit", value: 1, type: "int64" },
        },
      };
      expect(addon.gpuPrefix(0, h, [eq])).toBe(1);
      expect(addon.gpuPrefix(0, h, [str])).toBe(0);
      expect(addon.gpuPrefix(0, h, [cast])).toBe(0);
      expect(addon.gpuPrefix(0, h, [merge])).toBe(0);
      expect(addon.gpuPrefix(0, h, [ok, ok, str, ok])).toBe(2);
      expect(addon.gpuPrefix(0, h, [{ kind: "head", n: 1 }, ok])).toBe(0);
    });
  });

  it("projections that pass or build strings run on the GPU; a regex replace does not", () => {
    withTable((h) => {
      const pass: Step = {
        kind: "project",
        names: ["s", "f2"],
        exprs: [
          { kind: "col", index: 1, type: "string" },
          {
            kind: "binary",
            op: "mul",
            type: "float64",
            left: { kind: "col", index: 2, type: "float64" },
            right: { kind: "lit", value: 2, type: "float64" },
          },
        ],
      };
      const fn = (name: string, options: Record<string, string | boolean>): Step => ({
        kind: "project",
        names: ["u"],
        exprs: [{ kind: "fn", name, args: [{ kind: "col", index: 1, type: "string" }], options, type: "string" }],
      });
      expect(addon.gpuPrefix(0, h, [pass])).toBe(1);
      expect(addon.gpuPrefix(0, h, [fn("str.upper", {})])).toBe(1);
      expect(addon.gpuPrefix(0, h, [fn("str.replace", { pattern: "x", with: "y", literal: true, all: true })])).toBe(1);
      expect(
        addon.gpuPrefix(0, h, [fn("str.replace", { pattern: "[xy]", with: "z", literal: false, all: true })]),
      ).toBe(0);
    });
  });
});

describe("gpu host logic: which joins a GPU worker matches", () => {
  const addon = native();
  const table = (names: string[], cols: Parameters<typeof addon.tableFromJs>[0]["columns"]) =>
    addon.tableFromJs({ rows: 2, names, columns: cols });
  const int = { type: "int64" as const, values: BigInt64Array.from([1n, 2n]), validity: null };
  const str = { type: "string" as const, values: ["a", "b"], validity: null };
  const flt = { type: "float64" as const, values: Float64Array.from([1, 2]), validity: null };

  it("every join type on 1 to 8 keys of any type: on the GPU; keys of two types or more than 8 keys: on the CPU", () => {
    const l = table(["k", "s", "f"], [int, str, flt]);
    const r = table(["k", "s", "f"], [int, str, flt]);
    try {
      const spec = (how: "inner" | "left" | "right" | "outer" | "semi" | "anti", keys: number[], rightKeys = keys) => ({
        how,
        leftKeys: keys,
        rightKeys,
        output: [{ side: "left" as const, column: 0, name: "k" }],
      });
      for (const how of ["inner", "left", "right", "outer", "semi", "anti"] as const)
        for (const keys of [[0], [1], [2], [0, 1, 2]])
          expect(addon.gpuJoinable(0, l, r, spec(how, keys))).toBe(info().compiled);
      expect(addon.gpuJoinable(0, l, r, spec("inner", [0], [1]))).toBe(false);
      expect(addon.gpuJoinable(0, l, r, spec("inner", Array(9).fill(0)))).toBe(false);
    } finally {
      addon.release(l);
      addon.release(r);
    }
  });
});

const info = () => native().gpuInfo();

describe("gpu host logic: which sorts a GPU worker orders", () => {
  it("up to 8 keys of any type: on the GPU; more keys or a key out of range: on the CPU", () => {
    const addon = native();
    const h = addon.tableFromJs({
      rows: 2,
      names: ["k", "s"],
      columns: [
        { type: "int64", values: BigInt64Array.from([2n, 1n]), validity: null },
        { type: "string", values: ["b", "a"], validity: null },
      ],
    });
    try {
      const key = (column: number) => ({ column, descending: false, nullsFirst: false });
      expect(addon.gpuSortable(0, h, [key(0)])).toBe(info().compiled);
      expect(addon.gpuSortable(0, h, [key(1)])).toBe(info().compiled);
      expect(addon.gpuSortable(0, h, [key(1), key(0)])).toBe(info().compiled);
      expect(
        addon.gpuSortable(
          0,
          h,
          Array.from({ length: 8 }, (_, i) => key(i % 2)),
        ),
      ).toBe(info().compiled);
      expect(
        addon.gpuSortable(
          0,
          h,
          Array.from({ length: 9 }, (_, i) => key(i % 2)),
        ),
      ).toBe(false);
      expect(addon.gpuSortable(0, h, [key(2)])).toBe(false);
    } finally {
      addon.release(h);
    }
  });
});

describe("gpu host logic: options and errors without a GPU", () => {
  const info = native().gpuInfo();
  const clusters: LocalCluster[] = [];
  afterAll(async () => {
    for (const c of clusters) await c.close();
  });

  it("--gpus parses all, none and device lists, and names the mistake otherwise", () => {
    expect(parseGpuList("all")).toBe("all");
    expect(parseGpuList("none")).toBe("none");
    expect(parseGpuList("0,2")).toEqual([0, 2]);
    expect(thrown(() => parseGpuList("gpu0"))).toMatchObject({
      code: "BASIN_PLAN",
      message: expect.stringContaining('--gpus needs "all", "none" or device numbers like 0,2; got "gpu0"'),
    });
  });

  it("asking for a GPU that is not there fails before any work, naming what the machine has", () => {
    const missing = info.devices.length; // the first index past the last GPU
    expect(thrown(() => resolveGpus({ gpus: [missing] }))).toMatchObject({
      code: "BASIN_PLAN",
      message: expect.stringMatching(
        new RegExp(`GPU ${missing} asked for, but this machine has .*check --gpus and CUDA_VISIBLE_DEVICES`),
      ),
    });
    expect(thrown(() => resolveGpus({ gpus: [0, 0] }))).toMatchObject({
      code: "BASIN_PLAN",
      message: expect.stringContaining("distinct device numbers"),
    });
  });

  it('cpuTasks "reads" needs GPU workers, and an unknown cpuTasks names the ones there are', () => {
    expect(thrown(() => new LocalCluster({ workers: 1, gpus: "none", cpuTasks: "reads" }))).toMatchObject({
      code: "BASIN_PLAN",
      message: expect.stringContaining(
        'cpuTasks "reads" (--cpu-tasks reads) leaves every task but file reads to GPU workers, and this cluster has none',
      ),
    });
    expect(thrown(() => new LocalCluster({ workers: 1, cpuTasks: "gpu" as never }))).toMatchObject({
      code: "BASIN_PLAN",
      message: expect.stringContaining('cpuTasks must be one of "all", "reads", got "gpu"'),
    });
  });

  it('"all" GPUs on a machine without one gives CPU workers only', () => {
    if (info.devices.length > 0) return; // a GPU machine: the GPU suite covers it
    const c = new LocalCluster({ workers: 1, gpus: "all" });
    clusters.push(c);
    expect(c.gpus).toEqual([]);
    expect(c.pool.names).toEqual(["cpu-0"]);
  });

  it("running a chain on a GPU that cannot run gives BASIN_CUDA, not a crash", () => {
    if (info.devices.length > 0) return;
    const h = native().tableFromJs({
      rows: 1,
      names: ["a"],
      columns: [{ type: "int64", values: BigInt64Array.from([1n]), validity: null }],
    });
    try {
      let e: unknown;
      try {
        native().gpuRun(0, h, [
          { kind: "aggregate", keys: [], aggs: [{ op: "count", column: -1, name: "n" }], mode: "full" },
        ]);
      } catch (err) {
        e = err;
      }
      expect(e).toMatchObject({
        code: "BASIN_CUDA",
        message: expect.stringMatching(info.compiled ? /GPU 0.*failed: cuda\w+/ : /built without CUDA/),
      });
    } finally {
      native().release(h);
    }
  });

  it("basin info reports whether CUDA is compiled in, the driver and runtime versions, and each GPU", () => {
    expect(info).toMatchObject({
      compiled: expect.any(Boolean),
      driverVersion: expect.any(Number),
      runtimeVersion: expect.any(Number),
      devices: expect.any(Array),
    });
    if (info.devices.length === 0) expect(info.note).not.toBe("");
    expect(native().buildInfo().gpus).toBe(info.devices.length);
  });

  it("a persisted frame answers from memory and unpersist frees it", async () => {
    const c = new LocalCluster({ workers: 2 });
    clusters.push(c);
    const before = native().storeStats().handles;
    const p = await frame.persist({ cluster: c, partitions: 3 });
    expect(native().storeStats().handles - before).toBe(3);
    const t = await p.groupBy("s").agg(col("f").sum().alias("x")).sort("s").compute({ cluster: c });
    expect(t.toRows()).toEqual([
      { s: "a", x: 2.5 },
      { s: "é", x: -1 },
      { s: null, x: null },
    ]);
    p.unpersist();
    expect(native().storeStats().handles).toBe(before);
    expect(await rejected(frame.persist({ cluster: c, partitions: 0 }), "BASIN_PLAN")).toMatchObject({
      message: expect.stringContaining("persist() needs partitions to be a positive integer, got 0"),
    });
  });
});
