// An aggregation over one input partition is one task: a full aggregate where the
// partition is, with no partial states and no merge task after it (a GPU worker holds a
// persisted table as one partition, and the merge would run on the CPU). Over several
// partitions it still aggregates partially and merges. Every answer is DuckDB's.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { col, corr, count, readParquet, type DataFrame } from "../../engine/api/index.js";
import { lowerPlan } from "../../engine/lower/lower.js";
import { optimize } from "../../engine/plan/optimizer.js";
import { makeTempDir, removeDir } from "../helpers/cli.js";
import { Duck, expectSameRows, tableRows } from "../helpers/oracle.js";

let duck: Duck;
let dir: string;

beforeAll(async () => {
  duck = await Duck.open();
  dir = makeTempDir();
  // g: 0..96 and a null group; s: unicode keys; v with nulls; f floats.
  await duck.run(`CREATE TABLE t AS SELECT CASE WHEN i % 101 = 0 THEN NULL ELSE i % 97 END AS g,
      ['ä', 'β', 'plain', '東京'][1 + i % 4] AS s,
      CASE WHEN i % 7 = 0 THEN NULL ELSE (i * 7919) % 1013 END AS v,
      CAST((i % 89) * 0.25 AS DOUBLE) AS f
    FROM range(20000) r(i)`);
  await duck.run(`COPY t TO '${dir}/one.parquet' (FORMAT parquet, ROW_GROUP_SIZE 100000)`);
  await duck.run(`COPY t TO '${dir}/many.parquet' (FORMAT parquet, ROW_GROUP_SIZE 3000)`);
});

afterAll(() => {
  duck.close();
  removeDir(dir);
});

/** Each task's steps, aggregates with their mode. */
function taskSteps(df: DataFrame): string[] {
  return lowerPlan(optimize(df.node)).tasks.map((t) =>
    t.steps.map((s) => (s.kind === "aggregate" ? `aggregate(${s.mode})` : s.kind)).join("→"),
  );
}

const query = (df: DataFrame) =>
  df
    .groupBy("g", "s")
    .agg(
      col("v").sum().alias("sv"),
      col("f").mean().alias("mf"),
      col("v").median().alias("md"),
      corr("v", "f").alias("r"),
      count().alias("n"),
    );
const oracle = `SELECT g, s, sum(v), avg(f), median(v), corr(v, f), count(*) FROM t GROUP BY g, s`;

describe("an aggregation over one partition", () => {
  it("is one full aggregate in the partition's task, with DuckDB's answer", async () => {
    const df = query(readParquet(`${dir}/one.parquet`));
    const steps = taskSteps(df);
    expect(steps).toHaveLength(1);
    expect(steps[0]).toMatch(/aggregate\(full\)$/);
    expect(steps[0]).not.toContain("partial");
    expectSameRows(tableRows(await df.compute()), await duck.rows(oracle), "one partition");
  });

  it("over several partitions still aggregates partially and merges, with the same answer", async () => {
    const df = query(readParquet(`${dir}/many.parquet`, { blocksize: 1 }));
    const steps = taskSteps(df);
    expect(steps.length).toBeGreaterThan(2);
    expect(steps.some((s) => s.includes("aggregate(full)") && s.startsWith("concat"))).toBe(true);
    expectSameRows(tableRows(await df.compute()), await duck.rows(oracle), "several partitions");
  });

  it("with no keys over one partition is one task too", async () => {
    const df = readParquet(`${dir}/one.parquet`).agg(col("v").sum().alias("sv"), col("f").median().alias("md"));
    expect(taskSteps(df)).toHaveLength(1);
    expectSameRows(tableRows(await df.compute()), await duck.rows("SELECT sum(v), median(f) FROM t"), "no keys");
  });
});
