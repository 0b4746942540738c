// An aggregation whose input partitions already hold whole groups runs in each
// partition, with no shuffle: a Parquet file whose row groups' statistics show a key
// clustered (each value in one row group, no nulls), or a hash join's output grouped
// by its key. Files where a value straddles two row groups, or the key has nulls, or
// two files overlap, still shuffle. Every answer is DuckDB's.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { col, count, readParquet, type DataFrame } from "../../engine/api/index.js";
import { clustered } from "../../engine/io/parquet_stats.js";
import { readParquetFooter } from "../../engine/io/parquet_footer.js";
import { lowerPlan } from "../../engine/lower/lower.js";
import { optimize } from "../../engine/plan/optimizer.js";
import type { OptimizeOptions } from "../../engine/plan/passes/pass.js";
import { makeTempDir, removeDir } from "../helpers/cli.js";
import { Duck, expectSameRows, tableRows } from "../helpers/oracle.js";

let duck: Duck;
let dir: string;

beforeAll(async () => {
  duck = await Duck.open();
  dir = makeTempDir();
  await duck.run("SET threads = 1");
  // k = i // 4 and row groups of 2048 rows: each k in one row group. j = i // 3: a j
  // value straddles each boundary (2048 is not a multiple of 3). kn: k with nulls.
  await duck.run(`CREATE TABLE t AS SELECT i // 4 AS k, i // 3 AS j,
      CASE WHEN i % 997 = 0 THEN NULL ELSE i // 4 END AS kn,
      (i * 7919) % 101 AS v, CASE WHEN i % 13 = 0 THEN NULL ELSE i % 17 END AS w,
      DATE '2000-01-01' + CAST(i // 8 AS INTEGER) AS d
    FROM range(30000) r(i) ORDER BY i`);
  await duck.run(`COPY t TO '${dir}/t.parquet' (FORMAT parquet, ROW_GROUP_SIZE 2048)`);
  await duck.run(`COPY (SELECT * FROM t WHERE k < 4000) TO '${dir}/a.parquet' (FORMAT parquet, ROW_GROUP_SIZE 2048)`);
  await duck.run(`COPY (SELECT * FROM t WHERE k >= 4000) TO '${dir}/b.parquet' (FORMAT parquet, ROW_GROUP_SIZE 2048)`);
  await duck.run(`COPY (SELECT * FROM t WHERE k >= 3500) TO '${dir}/c.parquet' (FORMAT parquet, ROW_GROUP_SIZE 2048)`);
  // A dimension for the join: one row per k below 6000 (others unmatched), a few duplicated.
  await duck.run(`CREATE TABLE dim AS SELECT i AS dk, i % 5 AS seg FROM range(6000) r(i)
    UNION ALL SELECT i, 9 FROM range(0, 6000, 250) r(i)`);
  await duck.run(`COPY dim TO '${dir}/dim.parquet' (FORMAT parquet, ROW_GROUP_SIZE 700)`);
});

afterAll(() => {
  duck.close();
  removeDir(dir);
});

/** The task steps of a frame's lowered graph, one string per task. */
function taskSteps(df: DataFrame, options: OptimizeOptions = {}): string[] {
  return lowerPlan(optimize(df.node, options)).tasks.map((t) =>
    t.steps.map((s) => (s.kind === "aggregate" ? `aggregate(${s.mode})` : s.kind)).join("→"),
  );
}

const file = (name: string) => readParquet(`${dir}/${name}`, { blocksize: 1 });

describe("clustered Parquet columns", () => {
  it("are the integer and date columns whose row groups hold disjoint values and no null", () => {
    const footers = ["t.parquet"].map((f) => readParquetFooter(`${dir}/${f}`));
    const all = [footers[0].rowGroups.map((_, i) => i)];
    expect(footers[0].rowGroups.length).toBe(15);
    expect(clustered(footers, all, "k")).toBe(true);
    expect(clustered(footers, all, "d")).toBe(true);
    expect(clustered(footers, all, "j")).toBe(false); // a value in two row groups
    expect(clustered(footers, all, "kn")).toBe(false); // nulls
    expect(clustered(footers, all, "v")).toBe(false);
    const two = (a: string, b: string) => {
      const fs = [a, b].map((f) => readParquetFooter(`${dir}/${f}`));
      return clustered(
        fs,
        fs.map((f) => f.rowGroups.map((_, i) => i)),
        "k",
      );
    };
    expect(two("a.parquet", "b.parquet")).toBe(true);
    expect(two("b.parquet", "a.parquet")).toBe(true);
    expect(two("a.parquet", "c.parquet")).toBe(false); // the files overlap
  });

  it("aggregate where they are, every aggregation as DuckDB's, with no shuffle", async () => {
    const aggs = [
      col("v").sum().alias("s"),
      count().alias("n"),
      col("w").count().alias("nw"),
      col("w").median().alias("med"),
      col("v").nUnique().alias("u"),
    ];
    const sql = "count(*), count(w), median(w), count(DISTINCT v)";
    for (const [key, frame] of [
      ["k", file("t.parquet")],
      ["d", file("t.parquet")],
      ["k", readParquet([`${dir}/a.parquet`, `${dir}/b.parquet`], { blocksize: 1 })],
    ] as const) {
      const df = frame.groupBy(key).agg(...aggs);
      expect(df.explain()).toContain(`clustered by [`);
      const steps = taskSteps(df);
      expect(
        steps.some((s) => s.includes("hashPartition")),
        `${key}: no shuffle`,
      ).toBe(false);
      expect(steps.filter((s) => s.includes("aggregate(full)")).length, key).toBeGreaterThan(1);
      const got = await df.compute();
      expectSameRows(tableRows(got), await duck.rows(`SELECT ${key}, sum(v), ${sql} FROM t GROUP BY ${key}`), key);
    }
    // A filter that prunes row groups, one that keeps no row, and a second key.
    const pruned = file("t.parquet")
      .filter(col("k").ge(2100).and(col("v").lt(50)))
      .groupBy("k", "v")
      .agg(count().alias("n"));
    expect(taskSteps(pruned).some((s) => s.includes("hashPartition"))).toBe(false);
    expectSameRows(
      tableRows(await pruned.compute()),
      await duck.rows("SELECT k, v, count(*) FROM t WHERE k >= 2100 AND v < 50 GROUP BY k, v"),
      "pruned",
    );
    const none = await file("t.parquet").filter(col("v").gt(1000)).groupBy("k").agg(count().alias("n")).compute();
    expect(none.numRows).toBe(0);
  });

  it("shuffle when a value straddles row groups, the key has nulls or the files overlap, with DuckDB's answers", async () => {
    for (const [key, frame, table] of [
      ["j", file("t.parquet"), "t"],
      ["kn", file("t.parquet"), "t"],
      [
        "k",
        readParquet([`${dir}/a.parquet`, `${dir}/c.parquet`], { blocksize: 1 }),
        "(SELECT * FROM t WHERE k < 4000 UNION ALL SELECT * FROM t WHERE k >= 3500)",
      ],
    ] as const) {
      const df = frame.groupBy(key).agg(col("v").sum().alias("s"), count().alias("n"));
      expect(
        taskSteps(df).some((s) => s.includes("hashPartition")),
        key,
      ).toBe(true);
      expectSameRows(
        tableRows(await df.compute()),
        await duck.rows(`SELECT ${key}, sum(v), count(*) FROM ${table} GROUP BY ${key}`),
        key,
      );
    }
  });
});

describe("a persisted frame", () => {
  it("is clustered by the columns whose partitions hold disjoint values and no null, and aggregated by them in place", async () => {
    const p = await file("t.parquet").persist({ partitions: 3 });
    try {
      expect(p.node.kind === "stored" && p.node.clustered).toEqual(["k", "d"]);
      const df = p.groupBy("d").agg(col("v").sum().alias("s"), col("w").median().alias("m"));
      expect(taskSteps(df).some((s) => s.includes("hashPartition"))).toBe(false);
      expectSameRows(
        tableRows(await df.compute()),
        await duck.rows("SELECT d, sum(v), median(w) FROM t GROUP BY d"),
        "d",
      );
      const j = p.groupBy("j").agg(count().alias("n"));
      expect(taskSteps(j).some((s) => s.includes("hashPartition"))).toBe(true);
      expectSameRows(tableRows(await j.compute()), await duck.rows("SELECT j, count(*) FROM t GROUP BY j"), "j");
    } finally {
      p.unpersist();
    }
  });
});

describe("a hash join's output", () => {
  it("is aggregated by its key in each bucket, as DuckDB's left join and group-by", async () => {
    // v is not clustered; joins hash-partition both sides (the planner would broadcast t).
    const hash = { joinStrategy: false };
    const df = file("dim.parquet")
      .join(file("t.parquet"), { leftOn: "dk", rightOn: "v", how: "left" })
      .groupBy("dk")
      .agg(col("w").count().alias("n"), col("k").sum().alias("s"));
    const steps = taskSteps(df, hash);
    expect(steps.filter((s) => s.endsWith("hashPartition")).length).toBeGreaterThan(0);
    expect(steps.some((s) => s.includes("join") && s.includes("aggregate(full)"))).toBe(true);
    expect(steps.some((s) => s.includes("aggregate(partial)"))).toBe(false);
    expectSameRows(
      tableRows(await df.compute({ optimize: hash })),
      await duck.rows("SELECT dk, count(w), sum(k) FROM dim LEFT JOIN t ON dk = v GROUP BY dk"),
      "left join",
    );
  });
});
