// A Parquet row group larger than a task may hold under a memory limit is read in
// slices of rows, each decoding only the data pages it overlaps (and the dictionary):
// no more slices than the coarsest-paged column has pages (a file of one page per
// chunk, as DuckDB writes, is read whole). The rows are DuckDB's, in file order, with
// a fused filter and column choice too, and a group-by over a slice-split row group
// still merges every key's partial groups (one row group is "clustered" by any column,
// its slices are not).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { col, count, fromColumns, LocalCluster, readParquet, type DataFrame } from "../../engine/api/index.js";
import type { Step, TaskGraph } from "../../engine/graph/tasks.js";
import { lowerPlan } from "../../engine/lower/lower.js";
import type { MemoryBudget } from "../../engine/lower/out_of_core.js";
import { optimize } from "../../engine/plan/optimizer.js";
import { Duck, expectSameRows, tableRows } from "../helpers/oracle.js";

const N = 600_000;
const dir = mkdtempSync(join(tmpdir(), "basin-rg-slices-"));
const basinFile = join(dir, "one_group.parquet"); // Basin's writer: pages of 131,072 rows
const duckFile = join(dir, "one_page.parquet"); // DuckDB's: one page per column chunk
let duck: Duck;
let cluster: LocalCluster;

/** A budget under which a scan block is about 1 MB (the minimum). */
const small: MemoryBudget = { limit: 4e6, workers: 1 };

const scans = (g: TaskGraph) =>
  g.tasks.flatMap((t) => t.steps).filter((s): s is Extract<Step, { kind: "scanParquet" }> => s.kind === "scanParquet");
const lower = (df: DataFrame) => lowerPlan(optimize(df.toPlan().root), { budget: small });

beforeAll(async () => {
  const i = Array.from({ length: N }, (_, r) => r);
  await fromColumns(
    {
      id: i,
      g: i.map((r) => r % 97),
      s: i.map((r) => (r % 11 === 0 ? null : `名前-${r % 5000}`)),
      t: i.map((r) => `row ${r}`),
      f: i.map((r) => (r % 13 === 0 ? null : r % 17 === 0 ? Number.NaN : r / 8)),
    },
    { partitions: 1 },
  ).writeParquet(basinFile, { rowGroupSize: N });
  duck = await Duck.open();
  await duck.run(`COPY (SELECT * FROM '${basinFile}') TO '${duckFile}' (FORMAT parquet, ROW_GROUP_SIZE ${N})`);
  cluster = new LocalCluster({ workers: 2, memoryLimit: "24MB", localDirectory: join(dir, "spill") });
});

afterAll(async () => {
  duck.close();
  await cluster.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a Parquet row group larger than a task may hold", () => {
  it("is read in slices no finer than its pages, and not at all when a chunk is one page", () => {
    const sliced = scans(lower(readParquet(basinFile)));
    expect(sliced.length, "pages of 131,072 rows: at most 4 slices of 600,000 rows").toBe(4);
    expect(sliced.map((s) => s.rows)).toEqual([
      [0, 150_000],
      [150_000, 300_000],
      [300_000, 450_000],
      [450_000, 600_000],
    ]);
    expect(scans(lower(readParquet(duckFile))).map((s) => s.rows)).toEqual([undefined]);
    expect(scans(lowerPlan(optimize(readParquet(basinFile).toPlan().root))).map((s) => s.rows)).toEqual([undefined]);
  });

  it("gives DuckDB's rows in file order, whole and with a fused filter and column choice", async () => {
    const all = await readParquet(basinFile).compute({ cluster });
    expectSameRows(tableRows(all), await duck.rows(`SELECT * FROM '${basinFile}' ORDER BY id`), "sliced scan", true);
    const some = await readParquet(basinFile)
      .filter(col("s").ne("名前-7").and(col("f").gt(1000)))
      .select("id", "t")
      .compute({ cluster });
    expectSameRows(
      tableRows(some),
      await duck.rows(`SELECT id, t FROM '${basinFile}' WHERE s <> '名前-7' AND f > 1000 ORDER BY id`),
      "sliced scan with a filter",
      true,
    );
  });

  it("a group-by over the slices merges each key's partial groups (slices are not clustered)", async () => {
    const q = readParquet(basinFile).groupBy("g").agg(count().alias("n"), col("f").max().alias("m")).sort("g");
    const got = await q.compute({ cluster });
    expect(got.numRows).toBe(97);
    expectSameRows(
      tableRows(got),
      await duck.rows(`SELECT g, count(*), max(f) FROM '${basinFile}' GROUP BY g ORDER BY g`),
      "group-by",
      true,
    );
  });
});
