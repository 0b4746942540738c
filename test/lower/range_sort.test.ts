// The range-partitioned sort (engine/lower/range_sort.ts): many partitions into many
// ranges (a small memory limit) split in two rounds, coarse ranges then fine ones,
// instead of one piece per partition and range; out of core, equal keys are ordered
// by frame position, so a key most rows share spreads over many ranges. The answer
// is DuckDB's, every row in order, ties in frame order.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fromColumns, type DataFrame } from "../../engine/api/index.js";
import { LocalCluster } from "../../engine/cluster/local.js";
import type { TaskGraph } from "../../engine/graph/tasks.js";
import { lowerPlan } from "../../engine/lower/lower.js";
import { inMemoryBytes, partBytes, type MemoryBudget } from "../../engine/lower/out_of_core.js";
import { ONE_ROUND_PIECES } from "../../engine/lower/range_sort.js";
import { optimize } from "../../engine/plan/optimizer.js";
import { graphRows } from "../helpers/graph_rows.js";
import { Duck, expectSameRows } from "../helpers/oracle.js";

/** 300 partitions: empty ones, one-row ones and 227-row ones. */
const SIZES: number[] = Array.from({ length: 300 }, (_, p) => (p % 50 === 0 ? 0 : p % 37 === 0 ? 1 : 227));
const N = SIZES.reduce((a, b) => a + b, 0);
const WORDS = ["ä", "β", "plain", "東京", "", "Zebra", "zebra"];

/** i: frame position; s: unicode text with nulls; v: doubles with nulls, NaN, ±inf and many ties. */
function frame(): DataFrame {
  const i = Array.from({ length: N }, (_, r) => r);
  return fromColumns(
    {
      i,
      s: i.map((r) => (r % 53 === 0 ? null : WORDS[(r * 7) % WORDS.length]!)),
      v: i.map((r) =>
        r % 61 === 0 ? null : r % 67 === 0 ? Number.NaN : r % 71 === 0 ? -Infinity : ((r * 7919) % 401) / 4,
      ),
    },
    { partitions: SIZES },
  );
}
const DUCK_FRAME = `SELECT r AS i,
    CASE WHEN r % 53 = 0 THEN NULL ELSE ['ä', 'β', 'plain', '東京', '', 'Zebra', 'zebra'][1 + (r * 7) % 7] END AS s,
    CASE WHEN r % 61 = 0 THEN NULL WHEN r % 67 = 0 THEN 'NaN'::DOUBLE WHEN r % 71 = 0 THEN '-inf'::DOUBLE
         ELSE ((r * 7919) % 401) / 4 END AS v
  FROM (SELECT r FROM range(${N}) t(r)) t`;

/** A budget that gives the sort `ranges` ranges: partBytes is the input's bytes over `ranges`. */
function budgetFor(df: DataFrame, ranges: number): MemoryBudget {
  const bytes = inMemoryBytes(optimize(df.toPlan().root));
  const budget = { limit: 1, workers: 1 };
  budget.limit = (bytes / ranges) * (1 / partBytes(budget));
  return budget;
}

const rangePartitions = (g: TaskGraph) =>
  g.tasks.filter((t) => t.steps.some((s) => s.kind === "rangePartition")).length;

let duck: Duck;
let cluster: LocalCluster;

beforeAll(async () => {
  duck = await Duck.open();
  await duck.run(`CREATE TABLE f AS ${DUCK_FRAME}`);
  cluster = new LocalCluster({ workers: 2 });
});

afterAll(async () => {
  duck.close();
  await cluster.close();
});

const run = (g: TaskGraph) => graphRows(cluster, g);

describe("range-partitioned sort", () => {
  it("splits many partitions into many ranges in two rounds, in DuckDB's order with ties in frame order", async () => {
    const df = frame().sort(["s", "v"], { descending: [false, true], nullsFirst: [true, false] });
    const ranges = 150;
    expect(SIZES.length * ranges, "past one round's pieces").toBeGreaterThan(ONE_ROUND_PIECES);
    const g = lowerPlan(optimize(df.toPlan().root), { budget: budgetFor(df, ranges) });
    // One split per partition, one of the samples, and one per group of each coarse range:
    // far fewer than a split per partition into 150 ranges would write.
    const splits = rangePartitions(g);
    expect(splits).toBeGreaterThan(SIZES.length + 1);
    const pieces = g.tasks.reduce((n, t) => {
      const rp = t.steps.find((s) => s.kind === "rangePartition");
      return n + (rp && "parts" in rp ? rp.parts : 0);
    }, 0);
    expect(pieces, "pieces written by the splits").toBeLessThan(ONE_ROUND_PIECES / 2);
    const expected = await duck.rows("SELECT i, s, v FROM f ORDER BY s NULLS FIRST, v DESC NULLS LAST, i");
    expectSameRows(await run(g), expected, "two-round sort", true);
  });

  it("splits in one round when partitions × ranges are few, with the same answer", async () => {
    const df = frame().sort("v", { nullsFirst: true });
    const g = lowerPlan(optimize(df.toPlan().root), { budget: budgetFor(df, 40) });
    expect(rangePartitions(g), "one split per partition").toBe(SIZES.length);
    const expected = await duck.rows("SELECT i, s, v FROM f ORDER BY v NULLS FIRST, i");
    expectSameRows(await run(g), expected, "one-round sort", true);
  });

  it("spreads a key most rows share over many ranges out of core, ties in frame order", async () => {
    // 90% of the rows have k = 7; the rest, and nulls, around it.
    const k = (r: number) => (r % 10 !== 0 ? 7 : r % 20 === 0 ? null : r % 13);
    const df = fromColumns(
      { i: Array.from({ length: N }, (_, r) => r), k: Array.from({ length: N }, (_, r) => k(r)) },
      { partitions: SIZES },
    ).sort("k", { descending: true });
    const ranges = 40;
    const g = lowerPlan(optimize(df.toPlan().root), { budget: budgetFor(df, ranges), parts: true });
    const rows = await run(g);
    const expected =
      await duck.rows(`SELECT r AS i, CASE WHEN r % 10 <> 0 THEN 7 WHEN r % 20 = 0 THEN NULL ELSE r % 13 END AS k
      FROM range(${N}) t(r) ORDER BY k DESC NULLS LAST, i`);
    expectSameRows(rows, expected, "skewed sort", true);
    expect(rows.partRows.length).toBeGreaterThanOrEqual(ranges);
    expect(Math.max(...rows.partRows), "no range holds the key's 90% of the rows").toBeLessThan((3 * N) / ranges);
  });
});
