// A sort whose input is expected small (an aggregation's few rows, the usual last
// step) is one task over the concatenated partitions, not a range-partitioned sort of
// four tasks a partition; a large one still range-partitions. Either way the order is
// DuckDB's, ties kept in frame order (a stable sort).
import { statSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { col, count, fromColumns, readParquet, type DataFrame } from "../../engine/api/index.js";
import { LocalCluster } from "../../engine/cluster/local.js";
import { lowerPlan } from "../../engine/lower/lower.js";
import { optimize } from "../../engine/plan/optimizer.js";
import { makeTempDir, removeDir } from "../helpers/cli.js";
import { Duck, expectSameRows, tableRows } from "../helpers/oracle.js";

let cluster: LocalCluster;
let duck: Duck;
let dir: string;
const N = 30_000;
const g = Array.from({ length: N }, (_, i) => (i % 7 === 0 ? null : (i * 37) % 101));
const v = Array.from({ length: N }, (_, i) => (i * 7919) % 1000);
const frame = fromColumns({ g, v, i: Array.from({ length: N }, (_, i) => i) }, { partitions: [9000, 0, 1, 20999] });

beforeAll(async () => {
  cluster = new LocalCluster({ workers: 2 });
  duck = await Duck.open();
  dir = makeTempDir();
  await duck.run("CREATE TABLE t (g BIGINT, v BIGINT, i BIGINT)");
  await duck.run(`INSERT INTO t VALUES ${g.map((x, i) => `(${x ?? "NULL"}, ${v[i]}, ${i})`).join(", ")}`);
});
afterAll(() => {
  cluster.close();
  duck.close();
  removeDir(dir);
});

const sortTasks = (df: DataFrame) =>
  lowerPlan(optimize(df.node)).tasks.filter((t) =>
    t.steps.some((s) => s.kind === "sort" || s.kind === "sortBoundaries"),
  );

it("sorts an aggregation's few rows in one task, in DuckDB's order", async () => {
  const df = frame
    .groupBy("g")
    .agg(count().alias("n"), col("v").sum().alias("s"))
    .sort(["n", "g"], { descending: [true, false] });
  const tasks = sortTasks(df);
  expect(tasks).toHaveLength(1);
  expect(tasks[0].steps.map((s) => s.kind)).toEqual(["concat", "sort"]);
  expectSameRows(
    tableRows(await df.compute({ cluster })),
    await duck.rows("SELECT g, count(*) n, sum(v) s FROM t GROUP BY g ORDER BY n DESC, g ASC NULLS LAST"),
    "aggregate",
    true,
  );
});

it("range-partitions a large input, ties in frame order either way", async () => {
  // 1.5M rows, a file above the 16 MB one task sorts whole (w does not compress).
  await duck.run(
    "CREATE TABLE big AS SELECT (i * 7919) % 1000 AS v, i, CAST(hash(i) AS DOUBLE) AS w FROM range(1500000) r(i)",
  );
  await duck.run(`COPY big TO '${dir}/big.parquet' (FORMAT parquet, ROW_GROUP_SIZE 100000)`);
  const df = readParquet(`${dir}/big.parquet`, { blocksize: 1 }).sort("v");
  expect(sortTasks(df).length).toBeGreaterThan(4);
  expect(statSync(`${dir}/big.parquet`).size).toBeGreaterThan(16 << 20);
  const want = await duck.rows("SELECT v, i, w FROM big ORDER BY v, i");
  expectSameRows(tableRows(await df.compute({ cluster })), want, "range", true);
  const whole = frame.sort("v");
  expect(sortTasks(whole)).toHaveLength(1);
  expectSameRows(
    tableRows(await whole.compute({ cluster })),
    await duck.rows("SELECT g, v, i FROM t ORDER BY v, i"),
    "whole",
    true,
  );
});
