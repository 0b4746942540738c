// The bench's TPC-H suite at SF 0.01: DuckDB's SQL and Polars' lazy queries give the
// same 22 answers through the bench's own check, and Basin's pipelines run on tables
// persisted in memory with their Parquet scans pointed at them.
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as api from "../../engine/api/index.js";
import type { PlanNode } from "../../engine/common/plan.js";
import type { Dataset } from "../../bench/data_file.js";
import { runQuestion } from "../../bench/run.js";
import { basinMemoryContender, duckdbContender, polarsContender, type Contender } from "../../bench/systems.js";
import { retarget, TPCH_SUITE } from "../../bench/tpch/suite.js";

let dir = "";
let data: Dataset;
const contenders: Contender[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "basin-tpch-suite-"));
  data = await TPCH_SUITE.data({ rows: 0, k: 0, sf: 0.01, dataDir: dir, log: () => undefined });
  contenders.push(await duckdbContender(data, true), polarsContender(data, false));
  for (const c of contenders) await c.load?.();
}, 120_000);

afterAll(() => {
  for (const c of contenders) c.close?.();
  rmSync(dir, { recursive: true, force: true });
});

/** Every plan node of `kind` in a plan. */
function nodesOf(plan: PlanNode, kind: string): PlanNode[] {
  const out: PlanNode[] = [];
  const walk = (v: unknown): void => {
    if (v === null || typeof v !== "object" || ArrayBuffer.isView(v)) return;
    if ((v as { kind?: unknown }).kind === kind) out.push(v as PlanNode);
    for (const x of Object.values(v)) walk(x);
  };
  walk(plan);
  return out;
}

describe("TPC-H suite at SF 0.01", () => {
  it("generates the 8 Parquet tables into <data-dir>/tpch-sf0.01", () => {
    expect(data.name).toBe("tpch-sf0.01");
    expect(data.tables.map((t) => [t.name, t.format])).toEqual(
      ["region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem"].map((t) => [t, "parquet"]),
    );
  });

  it("answers all 22 queries the same in DuckDB's SQL and Polars' lazy API, checked whole", async () => {
    const verdicts: Record<string, string> = {};
    for (const q of TPCH_SUITE.questions) verdicts[q.id] = (await runQuestion(q, contenders, 1, true, 1e-9)).check;
    expect(Object.keys(verdicts)).toHaveLength(22);
    expect(Object.entries(verdicts).filter(([, v]) => v !== "ok")).toEqual([]);
  });

  it("points a pipeline's Parquet scans at tables persisted in memory, keeping shared subplans shared", async () => {
    const paths = new Map(data.tables.map((t) => [t.name, t.path]));
    const lineitem = api.readParquet(paths.get("lineitem")!);
    const late = lineitem.filter(api.col("l_receiptdate").gt(api.col("l_commitdate")));
    // The same frame twice, as Q21 uses its late lines.
    const plan = late.join(late.select("l_orderkey"), { on: "l_orderkey", how: "semi" }).node;
    const kept = await lineitem.persist();
    try {
      const moved = retarget(plan, paths, { lineitem: kept });
      expect(nodesOf(moved, "scanFile")).toEqual([]);
      const stored = nodesOf(moved, "stored");
      expect(stored.length).toBe(2);
      expect(stored[0]).toBe(stored[1]);
      const [fromFiles, fromMemory] = await Promise.all([
        new api.DataFrame(plan).agg(api.count().alias("n")).compute(),
        new api.DataFrame(moved).agg(api.count().alias("n")).compute(),
      ]);
      expect(fromMemory.column("n")).toEqual(fromFiles.column("n"));
      copyFileSync(paths.get("region")!, join(dir, "elsewhere.parquet"));
      expect(() => retarget(api.readParquet(join(dir, "elsewhere.parquet")).node, paths, { lineitem: kept })).toThrow(
        /reads .*elsewhere.parquet, not a table of the dataset/,
      );
    } finally {
      kept.unpersist();
    }
  });

  it("runs a Basin pipeline's plan on tables persisted in memory (basin-mem) with DuckDB's answer", async () => {
    // Q6 as a pipeline writes it: its own Parquet scan, pointed at the persisted lineitem.
    const paths = new Map(data.tables.map((t) => [t.name, t.path]));
    const { col } = api;
    const q6 = api
      .readParquet(paths.get("lineitem")!)
      .filter(
        col("l_shipdate")
          .ge("1994-01-01")
          .and(col("l_shipdate").lt("1995-01-01"))
          .and(col("l_discount").ge(0.05))
          .and(col("l_discount").le(0.07))
          .and(col("l_quantity").lt(24)),
      )
      .agg(col("l_extendedprice").mul(col("l_discount")).sum().alias("revenue")).node;
    const suiteQ6 = TPCH_SUITE.questions.find((x) => x.id === "q06")!;
    const q = {
      ...suiteQ6,
      duckdb: suiteQ6.duckdb,
      basin: (frames: Record<string, api.DataFrame>) => new api.DataFrame(retarget(q6, paths, frames)),
    };
    const mem = basinMemoryContender(data, "basin-mem", { gpus: "none", workers: 1 });
    try {
      await mem.load?.();
      expect((await runQuestion(q, [contenders[0]!, mem], 1, true, 1e-9)).check).toBe("ok");
    } finally {
      mem.close?.();
    }
  });
});
