// TPC-H's 22 queries (bench/tpch/q01.ts … q22.ts, unchanged) on a real Dask cluster:
// a scheduler and two worker processes on 127.0.0.1, driven by `basin run --cluster`,
// each answer equal to DuckDB's own SQL for the query over the same Parquet files
// (rows in order, numbers within 1e-9 relative).
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tpchSql } from "../../bench/tpch/sql.js";
import { runBasin } from "../helpers/cli.js";
import { tpchTestData } from "../tpch/tpch_data.js";
import { Duck, expectSameRows } from "../helpers/oracle.js";
import { startDask, type DaskProcs } from "./dask_procs.js";

const QUERIES = Array.from({ length: 22 }, (_, i) => `q${String(i + 1).padStart(2, "0")}`);
const TABLES = ["region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem"];

/** A folder of TPC-H tables given to the test (BASIN_TPCH_TEST_DIR, e.g. SF 1 for timings), kept afterwards. */
const GIVEN = process.env.BASIN_TPCH_TEST_DIR;

const SF = 0.01;

/** The generator's SF 0.01 in a fresh folder (or the given one), and the queries whose answer is empty there. */
async function tpchData(): Promise<{ dir: string; emptyAnswers: string[] }> {
  if (GIVEN) return { dir: GIVEN, emptyAnswers: [] };
  // Q11: no part passes the spec's threshold (0.0001 / SF of Germany's stock) at SF 0.01.
  return { dir: (await tpchTestData(SF)).dir, emptyAnswers: ["q11"] };
}

let dask: DaskProcs;
let duck: Duck;
let data: string;
let emptyAnswers: string[] = [];
const out = mkdtempSync(join(tmpdir(), "basin-dask-tpch-out-"));
const times: Record<string, number> = {};

beforeAll(async () => {
  ({ dir: data, emptyAnswers } = await tpchData());
  dask = await startDask(2);
  duck = await Duck.open();
  for (const t of TABLES) await duck.run(`create view ${t} as select * from '${data}/${t}.parquet'`);
}, 180_000);

afterAll(async () => {
  duck?.close();
  await dask?.stop();
  console.log(`TPC-H on Dask (2 workers), basin run per query, s: ${JSON.stringify(times)}`);
  rmSync(out, { recursive: true, force: true });
  if (data && !GIVEN) rmSync(data, { recursive: true, force: true });
});

describe("TPC-H on a Dask cluster", () => {
  for (const q of QUERIES)
    it(`${q} gives DuckDB's answer`, async () => {
      const file = join(out, `${q}.parquet`);
      const r = await runBasin(["run", `bench/tpch/${q}.ts`, "--cluster", dask.address, "--output", file], {
        cwd: process.cwd(),
        env: { BASIN_TPCH_DIR: data, BASIN_PYTHON: "/usr/bin/python3" },
        timeoutMs: 150_000,
      });
      expect(r.stderr, q).not.toMatch(/BASIN_|Traceback/);
      expect(r.code, r.stderr).toBe(0);
      expect(existsSync(file)).toBe(true);
      times[q] = Number((r.ms / 1000).toFixed(2));
      const actual = await duck.rows(`select * from '${file}'`);
      const expected = await duck.rows(tpchSql(Number(q.slice(1)), GIVEN ? 1 : SF));
      if (!emptyAnswers.includes(q))
        expect(expected.length, `${q}: DuckDB's answer has rows (the data exercise the query)`).toBeGreaterThan(0);
      expectSameRows(actual, expected, q, true);
    }, 160_000);
});
