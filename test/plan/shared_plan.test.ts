// A frame used twice is one subplan: planned once (its scan reads the union of the
// columns both uses need), run once (fewer tasks, the same answer as DuckDB), shown
// once by explain(); equal subtrees built separately are merged too. A Parquet scan is
// the exception: each use reads it, so its output is not held for the last one.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { col, LocalCluster, readCsv, readParquet } from "../../engine/api/index.js";
import { childrenOf, type PlanNode } from "../../engine/common/plan.js";
import { optimize } from "../../engine/plan/optimizer.js";
import { lowerPlan } from "../../engine/lower/lower.js";
import { Duck, expectSameRows, tableRows } from "../helpers/oracle.js";

const dir = mkdtempSync(join(tmpdir(), "basin-shared-"));
const file = join(dir, "lines.csv");
let duck: Duck;
let cluster: LocalCluster;

beforeAll(async () => {
  const rows = ["part,qty,price,note"];
  for (let i = 0; i < 4000; i++) rows.push(`${i % 37},${(i * 7) % 50},${(i * 1.25).toFixed(2)},n${i}`);
  writeFileSync(file, rows.join("\n") + "\n");
  duck = await Duck.open();
  await duck.run(`CREATE TABLE lines AS SELECT * FROM read_csv('${file}')`);
  cluster = new LocalCluster({ workers: 2 });
});
afterAll(async () => {
  await cluster.close();
  duck.close();
});

/** TPC-H Q17's shape: rows compared with their group's average, over one frame. */
function belowAverage(lines: ReturnType<typeof readCsv>) {
  const average = lines.groupBy("part").agg(col("qty").mean().alias("avg_qty"));
  return lines
    .join(average, { on: "part" })
    .filter(col("qty").lt(col("avg_qty").mul(0.5)))
    .agg(col("price").sum().alias("total"));
}

function nodes(root: PlanNode, kind: PlanNode["kind"]): Set<PlanNode> {
  const out = new Set<PlanNode>();
  const walk = (n: PlanNode) => {
    if (n.kind === kind) out.add(n);
    childrenOf(n).forEach(walk);
  };
  walk(root);
  return out;
}

describe("a frame used twice", () => {
  it("is one scan in the optimized plan, reading the union of both uses' columns", () => {
    const scans = nodes(optimize(belowAverage(readCsv(file, { blocksize: 4096 })).node), "scanCsv");
    expect(scans.size).toBe(1);
    const [scan] = [...scans];
    expect(scan.kind === "scanCsv" && [...scan.columns!].sort()).toEqual(["part", "price", "qty"]);
  });

  it("runs once, with fewer tasks than two copies, and matches DuckDB", async () => {
    const sql =
      "SELECT sum(price) FROM lines JOIN (SELECT part, avg(qty) a FROM lines GROUP BY part) USING (part) WHERE qty < a * 0.5";
    const shared = await belowAverage(readCsv(file, { blocksize: 4096 })).compute({ cluster });
    expectSameRows(tableRows(shared), await duck.rows(sql), "shared");
    // Two frames over the same file that differ (another blocksize) are not merged.
    const lines = readCsv(file, { blocksize: 4096 });
    const twice = lines
      .join(readCsv(file, { blocksize: 4097 }).groupBy("part").agg(col("qty").mean().alias("avg_qty")), { on: "part" })
      .filter(col("qty").lt(col("avg_qty").mul(0.5)))
      .agg(col("price").sum().alias("total"));
    const separate = await twice.compute({ cluster });
    expectSameRows(tableRows(separate), tableRows(shared), "separate");
    // The shared frame's file is parsed once, the separate frames' twice.
    const scans = (df: typeof twice) =>
      lowerPlan(optimize(df.node))
        .tasks.flatMap((t) => t.steps)
        .filter((s) => s.kind === "scanCsv").length;
    const blocks = scans(readCsv(file, { blocksize: 4096 }));
    expect(scans(belowAverage(readCsv(file, { blocksize: 4096 })))).toBe(blocks);
    expect(scans(twice)).toBeGreaterThan(blocks);
  });

  it("equal subtrees built separately are merged, and explain() prints the shared one once", () => {
    const a = readCsv(file).filter(col("qty").gt(3));
    const b = readCsv(file).filter(col("qty").gt(3));
    const df = a.join(b.select("part", col("price").alias("p2")), { on: "part" });
    expect(nodes(optimize(df.node), "scanCsv").size).toBe(1);
    const text = df.explain();
    expect(text).toMatch(/\[1\] ScanCsv lines\.csv columns=\[part, qty, price, note\] predicate=/);
    expect(text).toContain("(shared subplan [1] above, computed once)");
  });

  it("subtrees that differ only in a NaN, an infinity or -0 against a null or 0 stay apart", () => {
    for (const [x, y] of [
      [Number.NaN, null],
      [Number.POSITIVE_INFINITY, null],
      [-0, 0],
    ] as const) {
      const a = readCsv(file).filter(col("price").ne(x));
      const b = readCsv(file).filter(col("price").ne(y));
      const df = a.join(b.select("part", col("price").alias("p2")), { on: "part" });
      expect(nodes(optimize(df.node), "scanCsv").size, `${x} against ${y}`).toBe(2);
    }
  });

  it("keeps the result's columns when the shared frame carries more than the root reads", async () => {
    const lines = readCsv(file);
    const df = lines.select("part").join(lines.groupBy("part").agg(col("price").max().alias("top")), { on: "part" });
    const wide = lines.filter(col("part").eq(1)).join(df.select("part", "top").head(1), { on: "part" });
    const t = await lines.filter(col("part").eq(2)).sort("note").select("note").compute({ cluster });
    expect(t.columnNames).toEqual(["note"]);
    const w = await wide.compute({ cluster });
    expect(w.columnNames).toEqual(["part", "qty", "price", "note", "top"]);
  });
});

it("reads a Parquet frame used twice once per use, each read fused into its reader's tasks", async () => {
  const parquet = join(dir, "lines.parquet");
  await duck.run(`COPY lines TO '${parquet}' (FORMAT parquet, ROW_GROUP_SIZE 500)`);
  const reading = (node: PlanNode) =>
    lowerPlan(optimize(node)).tasks.filter((t) => t.steps.some((s) => s.kind === "scanParquet"));
  const once = reading(readParquet(parquet, { blocksize: 1 }).node).length;
  const df = belowAverage(readParquet(parquet, { blocksize: 1 }));
  const reads = reading(df.node);
  expect(once).toBeGreaterThan(1);
  expect(reads.length, "each partition read by both uses").toBe(2 * once);
  expect(
    reads.every((t) => t.steps.length > 1),
    "no task only reads (its output would wait for its readers)",
  ).toBe(true);
  const sql =
    "SELECT sum(price) FROM lines JOIN (SELECT part, avg(qty) a FROM lines GROUP BY part) USING (part) WHERE qty < a * 0.5";
  expectSameRows(tableRows(await df.compute({ cluster })), await duck.rows(sql), "parquet read twice");
});
