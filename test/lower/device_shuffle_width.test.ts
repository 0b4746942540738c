// Where the GPUs alone compute (cpuTasks "reads"), a shuffle gets as few buckets as
// fit a device, at least one per GPU, instead of one per input partition: with one
// GPU and a table that fits, a group-by's partial states meet in one merge, a join's
// sides in one join and a sort's partitions in one sort, and nothing is
// hash-partitioned on the GPU worker's one CPU thread. The graphs lowered that way
// are run here on CPU workers (the same steps a GPU worker would run) and give
// DuckDB's answers; without a device share the lowering is unchanged.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { col, count, fromColumns, type DataFrame } from "../../engine/api/index.js";
import { LocalCluster } from "../../engine/cluster/local.js";
import type { TaskGraph } from "../../engine/graph/tasks.js";
import { lowerPlan } from "../../engine/lower/lower.js";
import { inMemoryParts, type DeviceShare } from "../../engine/lower/out_of_core.js";
import { optimize } from "../../engine/plan/optimizer.js";
import { graphRows } from "../helpers/graph_rows.js";
import { Duck, expectSameRows } from "../helpers/oracle.js";

const N = 6000;
/** k: 0..96 and nulls; s: unicode keys; v with nulls; f floats. 6 partitions, one of them empty, one of one row. */
function columns(offset: number) {
  const idx = Array.from({ length: N }, (_, i) => i + offset);
  return {
    k: idx.map((i) => (i % 101 === 0 ? null : i % 97)),
    s: idx.map((i) => ["ä", "β", "plain", "東京", ""][i % 5]!),
    v: idx.map((i) => (i % 7 === 0 ? null : (i * 7919) % 1013)),
    f: idx.map((i) => (i % 89) * 0.25),
  };
}
const frame = (offset = 0) => fromColumns(columns(offset), { partitions: [0, 1, 1999, 2000, 1000, 1000] });

const oneGpu: DeviceShare = { gpus: 1, partBytes: 1e12 };
const twoGpus: DeviceShare = { gpus: 2, partBytes: 1e12 };
/** A device part far smaller than the input: as many buckets as input partitions (at most 32). */
const tinyGpu: DeviceShare = { gpus: 1, partBytes: 1000 };

const lower = (df: DataFrame, devices?: DeviceShare) => lowerPlan(optimize(df.toPlan().root), { devices });
const count_ = (g: TaskGraph, kind: string) => g.tasks.filter((t) => t.steps.some((s) => s.kind === kind)).length;

let duck: Duck;
let cluster: LocalCluster;

beforeAll(async () => {
  duck = await Duck.open();
  cluster = new LocalCluster({ workers: 2 });
  // The same rows as columns(0) and columns(50).
  for (const [name, from] of [
    ["l", 0],
    ["r", 50],
  ] as const)
    await duck.run(`CREATE TABLE ${name} AS SELECT CASE WHEN i % 101 = 0 THEN NULL ELSE i % 97 END AS k,
        ['ä', 'β', 'plain', '東京', ''][1 + i % 5] AS s,
        CASE WHEN i % 7 = 0 THEN NULL ELSE (i * 7919) % 1013 END AS v,
        CAST((i % 89) * 0.25 AS DOUBLE) AS f
      FROM range(${from}, ${from + N}) r(i)`);
});

afterAll(async () => {
  duck.close();
  await cluster.close();
});

const run = (g: TaskGraph) => graphRows(cluster, g);

describe("shuffle width where the GPUs alone compute", () => {
  it("is one bucket per input partition without a device share, as few as fit a device with one", () => {
    expect(inMemoryParts(5e9, 100)).toBe(32);
    expect(inMemoryParts(5e9, 100, { gpus: 1, partBytes: 28e9 })).toBe(1);
    expect(inMemoryParts(5e9, 100, { gpus: 2, partBytes: 28e9 })).toBe(2);
    expect(inMemoryParts(5e9, 100, { gpus: 1, partBytes: 1e9 })).toBe(5);
    expect(inMemoryParts(5e9, 3, { gpus: 1, partBytes: 1e9 })).toBe(3); // never more than the inputs
    expect(inMemoryParts(Number.POSITIVE_INFINITY, 8, { gpus: 1, partBytes: 1e9 })).toBe(8); // size unknown
  });

  it("merges a group-by's partial states in one task on one GPU, with DuckDB's answer", async () => {
    const q = frame()
      .groupBy("k", "s")
      .agg(col("v").sum().alias("sv"), col("f").mean().alias("mf"), col("v").max().alias("mx"), count().alias("n"));
    const oracle = `SELECT k, s, sum(v) sv, avg(f) mf, max(v) mx, count(*) n FROM l GROUP BY k, s`;
    const g = lower(q, oneGpu);
    expect(count_(g, "hashPartition")).toBe(0);
    expect(count_(lower(q, twoGpus), "hashPartition")).toBe(6);
    expect(count_(lower(q), "hashPartition")).toBe(6);
    expectSameRows(await run(g), await duck.rows(oracle), "one bucket");
    expectSameRows(await run(lower(q, tinyGpu)), await duck.rows(oracle), "a bucket per partition");
  });

  it("joins both sides whole in one task on one GPU (an outer join, never broadcast), with DuckDB's answer", async () => {
    const right = frame(50).groupBy("k").agg(count().alias("rn"), col("v").sum().alias("rv"));
    const q = frame().join(right, { on: "k", how: "outer" });
    const g = lower(q, oneGpu);
    expect(count_(g, "hashPartition")).toBe(0);
    expect(count_(g, "join")).toBe(1);
    expect(count_(lower(q), "hashPartition")).toBeGreaterThan(0);
    const oracle = `SELECT * FROM l FULL OUTER JOIN (SELECT k, count(*) rn, sum(v) rv FROM r GROUP BY k) USING (k)`;
    expectSameRows(await run(g), await duck.rows(oracle), "one bucket");
  });

  it("sorts a large input in one task on one GPU instead of range partitions, every row in order", async () => {
    const big = fromColumns(
      {
        a: Array.from({ length: 1_200_000 }, (_, i) => (i * 7919) % 100_003),
        b: Array.from({ length: 1_200_000 }, (_, i) => i),
      },
      { partitions: 4 },
    );
    const q = big.sort(["a", "b"], { descending: [true, false] });
    const g = lower(q, oneGpu);
    expect(count_(g, "rangePartition")).toBe(0);
    expect(g.tasks.filter((t) => t.steps.some((s) => s.kind === "sort"))).toHaveLength(1);
    expect(count_(lower(q), "rangePartition")).toBe(4);
    const rows = await run(g);
    expect(rows).toHaveLength(1_200_000);
    for (let i = 1; i < rows.length; i++) {
      const [pa, pb] = rows[i - 1] as number[];
      const [ca, cb] = rows[i] as number[];
      if (pa! < ca! || (pa === ca && pb! > cb!)) throw new Error(`rows ${i - 1} and ${i} out of order`);
    }
  });
});
