/**
 * Window functions on 1e6 rows: the two-phase scheme (partitions computed in place,
 * with carries) against the same windows on one partition (what gathering the frame
 * into one task costs at best), and over(keys) with its shuffle and order restore.
 * Each pipeline ends in a sum, so that only one row travels back.
 *
 * Usage: node dist/bench/windows.js [--rows 1e6] [--workers 4] [--partitions 8]
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { col, LocalCluster, readCsv, type DataFrame } from "../engine/api/index.js";
import { seededRandom } from "../engine/common/random.js";

const { values } = parseArgs({
  options: {
    rows: { type: "string", default: "1e6" },
    workers: { type: "string", default: "4" },
    partitions: { type: "string", default: "8" },
  },
});
const rows = Number(values.rows),
  workers = Number(values.workers),
  partitions = Number(values.partitions);

const dir = mkdtempSync(join(tmpdir(), "basin-bench-windows-"));
const path = join(dir, "w.csv");
const r = seededRandom(1);
const lines = ["id,g,x"];
for (let i = 0; i < rows; i++) lines.push(`${i},${Math.floor(r() * 1000)},${r() < 0.05 ? "" : (r() * 100).toFixed(3)}`);
const text = lines.join("\n") + "\n";
writeFileSync(path, text);

const cluster = new LocalCluster({ workers });
const frame = (parts: number) =>
  readCsv(path, { blocksize: Math.ceil(text.length / parts) + 1, dtypes: { id: "int64", g: "int64", x: "float64" } });
const total = (df: DataFrame) => df.agg(col("w").sum().alias("s"));

const pipelines: Record<string, (df: DataFrame) => DataFrame> = {
  "scan only (x)": (df) => total(df.withColumns({ w: col("x") })),
  cumSum: (df) => total(df.withColumns({ w: col("x").cumSum() })),
  "rolling(100).mean": (df) => total(df.withColumns({ w: col("x").rolling(100, { minPeriods: 1 }).mean() })),
  "rolling(100).max": (df) => total(df.withColumns({ w: col("x").rolling(100, { minPeriods: 1 }).max() })),
  "shift(-1) + diff": (df) => total(df.withColumns({ w: col("x").shift(-1).add(col("x").diff()) })),
  "cumSum over(g), 1000 groups": (df) => total(df.withColumns({ w: col("x").cumSum().over("g") })),
  "rolling(10).mean over(g)": (df) =>
    total(df.withColumns({ w: col("x").rolling(10, { minPeriods: 1 }).mean().over("g") })),
};

async function time(df: DataFrame): Promise<number> {
  let best = Infinity;
  for (let run = 0; run < 3; run++) {
    const t0 = performance.now();
    await df.compute({ cluster });
    best = Math.min(best, performance.now() - t0);
  }
  return best;
}

console.log(`${rows} rows, ${workers} workers; best of 3, ms`);
console.log(`${"pipeline".padEnd(30)} ${`${partitions} partitions`.padStart(14)} ${"1 partition".padStart(12)}`);
for (const [name, build] of Object.entries(pipelines)) {
  const many = await time(build(frame(partitions)));
  const single = await time(build(frame(1)));
  console.log(`${name.padEnd(30)} ${many.toFixed(0).padStart(14)} ${single.toFixed(0).padStart(12)}`);
}
await cluster.close();
rmSync(dir, { recursive: true, force: true });
