/**
 * The 22 TPC-H queries as a user runs them — a fresh `basin run bench/tpch/qNN.ts
 * --output qNN.parquet` each, with any extra CLI flags — over a generated folder,
 * every answer checked against DuckDB's SQL in order (names, and every value: numbers
 * within 1e-9 relative), with each run's wall time and peak RSS (GNU time's %M).
 *
 * @example
 * node dist/bench/tpch/verify.js --sf 10 --dir .bench-data/tpch-sf10 -- --memory-limit 2.5GB --workers 2
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { compareResults, normalizeRows, sameNumber, type Row } from "../compare.js";
import { tpchSql } from "./sql.js";

const args = process.argv.slice(2);
const split = args.indexOf("--");
const own = split < 0 ? args : args.slice(0, split);
const flags = split < 0 ? [] : args.slice(split + 1);
const opt = (name: string, fallback: string) => {
  const i = own.indexOf(name);
  return i >= 0 && own[i + 1] ? own[i + 1] : fallback;
};
const sf = Number(opt("--sf", "1"));
const dir = resolve(opt("--dir", `.bench-data/tpch-sf${sf}`));
const only = opt("--queries", "").split(",").filter(Boolean).map(Number);
const queries = only.length > 0 ? only : Array.from({ length: 22 }, (_, i) => i + 1);

const out = mkdtempSync(join(tmpdir(), "basin-tpch-verify-"));
const conn = await (await DuckDBInstance.create(":memory:")).connect();
for (const t of ["region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem"])
  await conn.run(`CREATE VIEW ${t} AS SELECT * FROM '${dir}/${t}.parquet'`);

const RTOL = 1e-9;
const rows = async (sql: string): Promise<Row[]> =>
  normalizeRows((await conn.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[]);

/**
 * The first difference between two answers in order, or null; rows that tie on the
 * query's ORDER BY may come in any order (Q3 and Q18 have such ties at SF 10), so
 * answers that differ only there compare equal as multisets.
 */
function difference(want: Row[], got: Row[]): string | null {
  const inOrder = orderedDifference(want, got);
  if (inOrder === null) return null;
  return compareResults(want, got, [], RTOL) === null ? null : inOrder;
}

function orderedDifference(want: Row[], got: Row[]): string | null {
  if (want.length !== got.length) return `${got.length} rows, expected ${want.length}`;
  const names = Object.keys(want[0] ?? {});
  if (want.length > 0 && names.join() !== Object.keys(got[0]!).join())
    return `columns ${Object.keys(got[0]!).join(",")}, expected ${names.join(",")}`;
  for (let i = 0; i < want.length; i++)
    for (const c of names) {
      const [x, y] = [want[i]![c] ?? null, got[i]![c] ?? null];
      const same = typeof x === "number" && typeof y === "number" ? sameNumber(x, y, RTOL) : x === y;
      if (!same) return `row ${i} ${c}: ${JSON.stringify(y)}, expected ${JSON.stringify(x)}`;
    }
  return null;
}

let failed = 0,
  total = 0,
  peak = 0;
console.log(`TPC-H SF ${sf} from ${dir}, basin run ${flags.join(" ")}`);
for (const n of queries) {
  const q = `q${String(n).padStart(2, "0")}`;
  const file = join(out, `${q}.parquet`);
  const t0 = performance.now();
  const r = spawnSync(
    "/usr/bin/time",
    ["-f", "%M", process.execPath, "bin/basin.js", "run", `bench/tpch/${q}.ts`, "--output", file, ...flags],
    { env: { ...process.env, BASIN_TPCH_DIR: dir }, encoding: "utf8", maxBuffer: 1 << 26 },
  );
  const seconds = (performance.now() - t0) / 1000;
  const rssMb = Number(r.stderr.trim().split("\n").pop()) / 1024;
  total += seconds;
  peak = Math.max(peak, rssMb);
  let verdict: string;
  if (r.status !== 0) verdict = `FAILED (exit ${r.status}): ${r.stderr.split("\n").slice(-4).join(" | ")}`;
  else verdict = difference(await rows(tpchSql(n, sf)), await rows(`SELECT * FROM '${file}'`)) ?? "same as DuckDB";
  if (verdict !== "same as DuckDB") failed++;
  console.log(`${q}: ${seconds.toFixed(2)} s, peak RSS ${rssMb.toFixed(0)} MB, ${verdict}`);
}
console.log(
  `total ${total.toFixed(1)} s, largest peak RSS ${peak.toFixed(0)} MB; ${queries.length - failed} of ${queries.length} answers as DuckDB's`,
);
conn.closeSync();
rmSync(out, { recursive: true, force: true });
process.exitCode = failed > 0 ? 1 : 0;
