// TPC-H data for tests: SF 0.01 (about 87,000 rows, ~1.5 s) in a fresh temporary folder.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateTpch, type GenerateSummary } from "../../bench/tpch/gen/generate.js";

/**
 * Generates TPC-H at `sf` (default 0.01) into a new temporary folder and returns it
 * with what was written; the caller removes the folder.
 *
 * @example
 * const { dir } = await tpchTestData(); // dir/lineitem.parquet, dir/orders.parquet, …
 */
export async function tpchTestData(sf = 0.01, csv = false): Promise<{ dir: string; summary: GenerateSummary }> {
  const dir = mkdtempSync(join(tmpdir(), "basin-tpch-"));
  const summary = await generateTpch({ sf, out: dir, workers: 0, csv });
  return { dir, summary };
}
