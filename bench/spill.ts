/**
 * Peak memory under a memory limit: runs groupby q3 and q10 (db-benchmark data) in a
 * fresh process per setting and prints the process's peak resident memory, the
 * store's peak buffer bytes and the spill statistics.
 *
 * Usage: node dist/bench/spill.js [--rows 1e6] [--k 10] [--workers 2] --probe
 *        node dist/bench/spill.js [--rows 1e6] [--k 10] [--workers 2] --data-bytes N [--limit 0.25|none]
 *   --probe loads the data once and prints its in-memory size (a separate process, so
 *   the measured run's peak is not the probe's); --limit is a fraction of that size.
 * Prints one JSON line per question.
 */
import { parseArgs } from "node:util";
import { col, count, LocalCluster, readCsv } from "../engine/api/index.js";
import { computeStored } from "../engine/cluster/compute.js";
import { native } from "../engine/native/addon.js";
import { generateGroupby, GROUPBY_SCHEMA } from "./generate.js";

const { values } = parseArgs({
  options: { rows: { type: "string" }, k: { type: "string" }, limit: { type: "string" }, workers: { type: "string" }, "data-dir": { type: "string" }, probe: { type: "boolean" }, "data-bytes": { type: "string" } },
});
const rows = Number(values.rows ?? 1e6);
const workers = Number(values.workers ?? 2);
const ds = await generateGroupby({ rows, k: Number(values.k ?? 10), dir: values["data-dir"] ?? ".bench-data" });
const x = () => readCsv(ds.tables[0].path, { dtypes: { ...GROUPBY_SCHEMA }, blocksize: "4MiB" });

if (values.probe) {
  const probe = new LocalCluster({ workers, memoryLimit: "1TB" });
  const { ref } = await computeStored(x().toPlan(), { cluster: probe });
  console.log(JSON.stringify({ rows, dataBytes: native().storeStats().bytes }));
  native().release(ref);
  await probe.close();
  process.exit(0);
}
const dataBytes = Number(values["data-bytes"]);
if (!(dataBytes > 0)) throw new Error("--data-bytes N is needed (run with --probe first)");

const limit = values.limit === "none" ? undefined : Math.floor(dataBytes * Number(values.limit ?? 0.25));
const cluster = new LocalCluster({ workers, memoryLimit: limit ?? "1TB" });
const keys = ["id1", "id2", "id3", "id4", "id5", "id6"];
const questions = {
  q3: x().groupBy("id3").agg(col("v1").sum().alias("v1"), col("v3").mean().alias("v3")),
  q10: x().groupBy(...keys).agg(col("v3").sum().alias("v3"), count().alias("count")),
};
for (const [id, q] of Object.entries(questions)) {
  const s0 = native().memoryStats();
  const t0 = performance.now();
  const { ref: out } = await computeStored(q.toPlan(), { cluster });
  native().release(out);
  const s = native().memoryStats();
  console.log(JSON.stringify({ id, rows, dataBytes, limit: limit ?? null, seconds: +((performance.now() - t0) / 1000).toFixed(2), peakStoreBytes: native().storeStats().peakBytes, maxRss: process.resourceUsage().maxRSS * 1024, spilled: s.spilledCount - s0.spilledCount, spilledBytes: s.spilledBytes - s0.spilledBytes, unspilled: s.unspilledCount - s0.unspilledCount, unspilledBytes: s.unspilledBytes - s0.unspilledBytes }));
}
await cluster.close();
