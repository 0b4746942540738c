// Must hold: with memoryLimit at a quarter of the data's in-memory size,
// db-benchmark groupby q3 and q10 and a big–big join give the same answers as
// without a limit (and as DuckDB), and spilling happened.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { col, count, LocalCluster, readCsv, type DataFrame } from "../../engine/api/index.js";
import { computeStored } from "../../engine/cluster/compute.js";
import { native } from "../../engine/native/addon.js";
import { generateGroupby, GROUPBY_SCHEMA } from "../../bench/generate.js";
import { generateJoin, JOIN_SCHEMAS } from "../../bench/generate-join.js";
import { Duck, expectSameRows, tableRows } from "../helpers/oracle.js";

const dir = mkdtempSync(join(tmpdir(), "basin-spill-data-"));
let duck: Duck;
let free: LocalCluster;
let gPath: string, xPath: string, bigPath: string;
/** In-memory bytes of the inputs, measured by loading them. */
let gBytes = 0, jBytes = 0;

const sqlColumns = (schema: Record<string, string>) =>
  `{${Object.entries(schema).map(([n, t]) => `'${n}': '${t === "int64" ? "BIGINT" : t === "float64" ? "DOUBLE" : "VARCHAR"}'`).join(", ")}}`;
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
  await duck.run(`CREATE TABLE g AS SELECT * FROM read_csv('${gPath}', header=true, columns=${sqlColumns(GROUPBY_SCHEMA)})`);
  await duck.run(`CREATE TABLE x AS SELECT * FROM read_csv('${xPath}', header=true, columns=${sqlColumns(JOIN_SCHEMAS.x)})`);
  await duck.run(`CREATE TABLE big AS SELECT * FROM read_csv('${bigPath}', header=true, columns=${sqlColumns(JOIN_SCHEMAS.big)})`);
  free = new LocalCluster({ workers: 4, memoryLimit: "1TB" });
  gBytes = await inMemoryBytes(g());
  jBytes = (await inMemoryBytes(x())) + (await inMemoryBytes(big()));
}, 120_000);

afterAll(async () => {
  await free.close();
  duck.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `frame` without a limit and with a quarter of `bytes`, on `workers` workers; both must match DuckDB, and the limited run must spill. */
async function check(frame: DataFrame, sql: string, bytes: number, workers: number, label: string): Promise<void> {
  const expected = await duck.rows(sql);
  expectSameRows(tableRows(await frame.compute({ cluster: free })), expected, `${label} without a limit`);
  const limited = new LocalCluster({ workers, memoryLimit: Math.floor(bytes / 4), localDirectory: join(dir, "spill") });
  try {
    const before = native().memoryStats();
    const table = await frame.compute({ cluster: limited });
    const after = native().memoryStats();
    expectSameRows(tableRows(table), expected, `${label} with memoryLimit ${Math.floor(bytes / 4)}`);
    expect(after.spilledCount - before.spilledCount, `${label}: tables spilled`).toBeGreaterThan(0);
    expect(after.unspilledCount - before.unspilledCount, `${label}: tables read back`).toBeGreaterThan(0);
    expect(after.diskTables, "every spill file is gone once its table is released").toBe(0);
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
    await check(q3, "SELECT id3, sum(v1) AS v1, avg(v3) AS v3 FROM g GROUP BY id3", gBytes, workers, "q3");
  });

  it("groupby q10 (sum v3, count by id1..id6)", async () => {
    const keys = ["id1", "id2", "id3", "id4", "id5", "id6"];
    const q10 = g().groupBy(...keys).agg(col("v3").sum().alias("v3"), count().alias("count"));
    await check(q10, `SELECT ${keys.join(", ")}, sum(v3) AS v3, count(*) AS count FROM g GROUP BY ${keys.join(", ")}`, gBytes, 4, "q10");
  });

  it("big–big inner join on id3 (join q5)", async () => {
    const q5 = x().join(big().select("id1", "id2", "id3", "v2"), { on: "id3", how: "inner", suffix: "_r" });
    const frame = q5.select("id1", "id2", "id3", "v1", "v2");
    await check(frame, "SELECT x.id1, x.id2, x.id3, x.v1, big.v2 FROM x JOIN big USING (id3)", jBytes, 4, "join");
  });
});
