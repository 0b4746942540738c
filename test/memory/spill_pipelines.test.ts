// Must hold: with memoryLimit at a quarter of the data's in-memory size,
// db-benchmark groupby q3 and q10, a big–big join and a sort give the same answers
// as without a limit (and as DuckDB); spilling happened, the shuffles ran out of core
// (more, smaller partitions; explain() says so) and the result stayed in parts.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { col, count, LocalCluster, readCsv, type DataFrame } from "../../engine/api/index.js";
import { computeParts, computeStored } from "../../engine/run/stored.js";
import { native } from "../../engine/native/addon.js";
import { Table } from "../../engine/run/table.js";
import { generateGroupby, GROUPBY_SCHEMA } from "../../bench/generate.js";
import { generateJoin, JOIN_SCHEMAS } from "../../bench/generate_join.js";
import { Duck, expectSameRows, tableRows } from "../helpers/oracle.js";

const dir = mkdtempSync(join(tmpdir(), "basin-spill-data-"));
let duck: Duck;
let free: LocalCluster;
let gPath: string, xPath: string, bigPath: string;
/** In-memory bytes of the inputs, measured by loading them. */
let gBytes = 0,
  jBytes = 0;

const sqlColumns = (schema: Record<string, string>) =>
  `{${Object.entries(schema)
    .map(([n, t]) => `'${n}': '${t === "int64" ? "BIGINT" : t === "float64" ? "DOUBLE" : "VARCHAR"}'`)
    .join(", ")}}`;
const g = () => readCsv(gPath, { blocksize: "96KiB", dtypes: { ...GROUPBY_SCHEMA } });
const x = () => readCsv(xPath, { blocksize: "96KiB", dtypes: { ...JOIN_SCHEMAS.x } });
const big = () => readCsv(bigPath, { blocksize: "96KiB", dtypes: { ...JOIN_SCHEMAS.big } });

async function inMemoryBytes(df: DataFrame): Promise<number> {
  const before = native().storeStats().bytes;
  const { ref } = await computeStored(df.toPlan(), { cluster: free });
  const bytes = native().storeStats().bytes - before;
  native().release(ref);
  return bytes;
}

beforeAll(async () => {
  const gd = await generateGroupby({ rows: 60_000, k: 10, dir });
  const jd = await generateJoin({ rows: 60_000, dir });
  gPath = gd.tables[0].path;
  xPath = jd.tables.find((t) => t.name === "x")!.path;
  bigPath = jd.tables.find((t) => t.name === "big")!.path;
  duck = await Duck.open();
  await duck.run(
    `CREATE TABLE g AS SELECT * FROM read_csv('${gPath}', header=true, columns=${sqlColumns(GROUPBY_SCHEMA)})`,
  );
  await duck.run(
    `CREATE TABLE x AS SELECT * FROM read_csv('${xPath}', header=true, columns=${sqlColumns(JOIN_SCHEMAS.x)})`,
  );
  await duck.run(
    `CREATE TABLE big AS SELECT * FROM read_csv('${bigPath}', header=true, columns=${sqlColumns(JOIN_SCHEMAS.big)})`,
  );
  free = new LocalCluster({ workers: 4, memoryLimit: "1TB" });
  gBytes = await inMemoryBytes(g());
  jBytes = (await inMemoryBytes(x())) + (await inMemoryBytes(big()));
}, 120_000);

afterAll(async () => {
  await free.close();
  duck.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `frame` on `cluster`, the result as its parts, copied to JS one part at a time. */
async function computeInParts(frame: DataFrame, cluster: LocalCluster): Promise<{ rows: unknown[][]; parts: number }> {
  const { refs } = await computeParts(frame.toPlan(), { cluster });
  try {
    return { rows: tableRows(new Table(refs.map((h) => native().tableToJs(h)))), parts: refs.length };
  } finally {
    for (const h of refs) native().release(h);
  }
}

/**
 * Runs `frame` without a limit and with a quarter of `bytes`, on `workers` workers;
 * both must match DuckDB; the limited run must spill and run its shuffle out of core
 * (`strategy` in explain(), more result partitions than without a limit).
 */
async function check(
  frame: DataFrame,
  sql: string,
  bytes: number,
  workers: number,
  label: string,
  opts: { strategy?: string; ordered?: boolean; grows?: boolean } = {},
): Promise<void> {
  const { strategy = "grace hash", ordered = false, grows = true } = opts;
  const expected = await duck.rows(sql);
  const unlimited = await computeInParts(frame, free);
  expectSameRows(unlimited.rows, expected, `${label} without a limit`, ordered);
  expect(frame.explain({ cluster: free }), `${label}: in memory without a limit`).not.toContain("out-of-core");
  const limited = new LocalCluster({ workers, memoryLimit: Math.floor(bytes / 4), localDirectory: join(dir, "spill") });
  try {
    expect(frame.explain({ cluster: limited }), `${label}: explain names the out-of-core strategy`).toContain(
      `out-of-core: ${strategy}`,
    );
    const before = native().memoryStats();
    const result = await computeInParts(frame, limited);
    const after = native().memoryStats();
    expectSameRows(result.rows, expected, `${label} with memoryLimit ${Math.floor(bytes / 4)}`, ordered);
    if (grows)
      expect(result.parts, `${label}: more, smaller partitions under the limit`).toBeGreaterThan(unlimited.parts);
    else expect(result.parts, `${label}: partitions under the limit`).toBeGreaterThanOrEqual(unlimited.parts);
    expect(after.spilledCount - before.spilledCount, `${label}: tables spilled`).toBeGreaterThan(0);
    expect(after.unspilledCount - before.unspilledCount, `${label}: tables read back`).toBeGreaterThan(0);
    expect(
      after.writtenBytes - before.writtenBytes,
      `${label}: lz4 spill files are smaller than the tables`,
    ).toBeLessThan(after.spilledBytes - before.spilledBytes);
    expect(after.diskTables, "every spill file is gone once its table is released").toBe(0);
    expect(after.diskBytes, "kept spill files too").toBe(0);
  } finally {
    await limited.close();
  }
}

describe("pipelines bigger than the memory limit", () => {
  it("measures the inputs", () => {
    expect(gBytes).toBeGreaterThan(3e6);
    expect(jBytes).toBeGreaterThan(3e6);
  });

  it.each([4, 1])("groupby q3 (sum v1, mean v3 by id3) on %i worker(s)", async (workers) => {
    const q3 = g().groupBy("id3").agg(col("v1").sum().alias("v1"), col("v3").mean().alias("v3"));
    // One worker may use the whole limit: the input blocks' 30 partitions already fit it.
    await check(q3, "SELECT id3, sum(v1) AS v1, avg(v3) AS v3 FROM g GROUP BY id3", gBytes, workers, "q3", {
      grows: workers > 1,
    });
  });

  it("groupby q10 (sum v3, count by id1..id6)", async () => {
    const keys = ["id1", "id2", "id3", "id4", "id5", "id6"];
    const q10 = g()
      .groupBy(...keys)
      .agg(col("v3").sum().alias("v3"), count().alias("count"));
    await check(
      q10,
      `SELECT ${keys.join(", ")}, sum(v3) AS v3, count(*) AS count FROM g GROUP BY ${keys.join(", ")}`,
      gBytes,
      4,
      "q10",
    );
  });

  it("big–big inner join on id3 (join q5)", async () => {
    const q5 = x().join(big().select("id1", "id2", "id3", "v2"), { on: "id3", how: "inner", suffix: "_r" });
    const frame = q5.select("id1", "id2", "id3", "v1", "v2");
    await check(frame, "SELECT x.id1, x.id2, x.id3, x.v1, big.v2 FROM x JOIN big USING (id3)", jBytes, 4, "join");
  });

  it("sort by v3, id4, id6 (range-partitioned runs)", async () => {
    const sorted = g().select("id4", "id6", "v3").sort(["v3", "id4", "id6"]);
    await check(sorted, "SELECT id4, id6, v3 FROM g ORDER BY v3, id4, id6", gBytes, 4, "sort", {
      strategy: "range-partitioned runs",
      ordered: true,
    });
  });

  it("computes a result larger than the limit with compute() as well (parts copied to JS one by one)", async () => {
    const limited = new LocalCluster({
      workers: 2,
      memoryLimit: Math.floor(gBytes / 4),
      localDirectory: join(dir, "spill"),
    });
    try {
      const t = await g().select("id1", "v1").compute({ cluster: limited });
      expect(t.numRows).toBe(60_000);
      expect(t.column("id1").slice(0, 2)).toEqual((await duck.rows("SELECT id1 FROM g LIMIT 2")).map((r) => r[0]));
    } finally {
      await limited.close();
    }
  });
});
