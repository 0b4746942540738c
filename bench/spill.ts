/**
 * Peak memory under a memory limit: runs one question — groupby q3 or q10
 * (db-benchmark data), a big–big join (x ⋈ big on id3), or the baseline (a one-row
 * frame: the runtime's own memory) — in a fresh process and
 * prints the process's peak resident memory, the store's peak buffer bytes and the
 * spill statistics.
 *
 * Usage: node dist/bench/spill.js [--rows 1e6] [--k 10] [--workers 2] --probe
 *        node dist/bench/spill.js [--rows 1e6] [--workers 2] --question q3|q10|join|baseline --data-bytes N
 *             [--limit 0.25|none] [--mode ooc|in-memory] [--spill-compression lz4|zstd|none]
 *   --probe loads each question's input once and prints its in-memory size (a separate
 *   process, so the measured run's peak is not the probe's); --limit is a fraction of
 *   that size. --mode in-memory lowers as before out-of-core operators (shuffles sized
 *   by the input's partitions, the result concatenated into one table); ooc (default)
 *   sizes shuffles for the limit and keeps the result as partitions.
 * Prints one JSON line.
 */
import { parseArgs } from "node:util";
import { col, count, fromColumns, LocalCluster, readCsv, type DataFrame } from "../engine/api/index.js";
import { computeStored } from "../engine/run/stored.js";
import { lowerPlan } from "../engine/lower/lower.js";
import { native } from "../engine/native/addon.js";
import { optimize } from "../engine/plan/optimizer.js";
import type { SpillCompression } from "../engine/memory/limits.js";
import { generateGroupby, GROUPBY_SCHEMA } from "./generate.js";
import { generateJoin, JOIN_SCHEMAS } from "./generate_join.js";

const { values } = parseArgs({
  options: {
    rows: { type: "string" },
    k: { type: "string" },
    limit: { type: "string" },
    workers: { type: "string" },
    "data-dir": { type: "string" },
    probe: { type: "boolean" },
    "data-bytes": { type: "string" },
    question: { type: "string" },
    mode: { type: "string" },
    "spill-compression": { type: "string" },
  },
});
const rows = Number(values.rows ?? 1e6);
const workers = Number(values.workers ?? 2);
const dir = values["data-dir"] ?? ".bench-data";
const gd = await generateGroupby({ rows, k: Number(values.k ?? 10), dir });
const jd = await generateJoin({ rows, dir });
const csv = (path: string, dtypes: Record<string, "int64" | "float64" | "string" | "date">) =>
  readCsv(path, { dtypes, blocksize: "4MiB" });
const g = () => csv(gd.tables[0].path, { ...GROUPBY_SCHEMA });
const x = () => csv(jd.tables.find((t) => t.name === "x")!.path, { ...JOIN_SCHEMAS.x });
const big = () => csv(jd.tables.find((t) => t.name === "big")!.path, { ...JOIN_SCHEMAS.big });

if (values.probe) {
  const probe = new LocalCluster({ workers, memoryLimit: "1TB" });
  const bytes = async (df: DataFrame) => {
    const before = native().storeStats().bytes;
    const { ref } = await computeStored(df.toPlan(), { cluster: probe });
    const n = native().storeStats().bytes - before;
    native().release(ref);
    return n;
  };
  console.log(
    JSON.stringify({ rows, groupBytes: await bytes(g()), joinBytes: (await bytes(x())) + (await bytes(big())) }),
  );
  await probe.close();
  process.exit(0);
}
const dataBytes = Number(values["data-bytes"]);
if (!(dataBytes > 0)) throw new Error("--data-bytes N is needed (run with --probe first)");
const mode = values.mode ?? "ooc";
if (mode !== "ooc" && mode !== "in-memory") throw new Error(`--mode is ooc or in-memory, got ${mode}`);

const limit = values.limit === "none" ? undefined : Math.floor(dataBytes * Number(values.limit ?? 0.25));
const spillCompression = (values["spill-compression"] ?? "lz4") as SpillCompression;
const cluster = new LocalCluster({ workers, memoryLimit: limit ?? "1TB", spillCompression });
const keys = ["id1", "id2", "id3", "id4", "id5", "id6"];
const questions: Record<string, () => DataFrame> = {
  q3: () => g().groupBy("id3").agg(col("v1").sum().alias("v1"), col("v3").mean().alias("v3")),
  q10: () =>
    g()
      .groupBy(...keys)
      .agg(col("v3").sum().alias("v3"), count().alias("count")),
  /** The runtime alone (Node, V8 heaps, the workers, the addon): a one-row frame. */
  baseline: () => fromColumns({ x: [1] }),
  join: () =>
    x()
      .join(big().select("id1", "id2", "id3", "v2"), { on: "id3", how: "inner", suffix: "_r" })
      .select("id1", "id2", "id3", "v1", "v2"),
};
const id = values.question ?? "q10";
const q = questions[id];
if (!q) throw new Error(`--question is one of ${Object.keys(questions).join(", ")}, got ${id}`);

const t0 = performance.now();
const graph = lowerPlan(optimize(q().toPlan().root), mode === "ooc" ? { budget: cluster.budget, parts: true } : {});
const { refs } = await cluster.run(graph);
const resultRows = refs.reduce((n, h) => n + native().tableRows(h), 0);
for (const h of refs) native().release(h);
const s = native().memoryStats();
console.log(
  JSON.stringify({
    id,
    mode,
    rows,
    dataBytes,
    limit: limit ?? null,
    spillCompression,
    seconds: +((performance.now() - t0) / 1000).toFixed(2),
    resultRows,
    resultParts: refs.length,
    tasks: graph.tasks.length,
    peakStoreBytes: native().storeStats().peakBytes,
    maxRss: process.resourceUsage().maxRSS * 1024,
    spilled: s.spilledCount,
    spilledBytes: s.spilledBytes,
    writtenBytes: s.writtenBytes,
    reused: s.reusedCount,
    unspilled: s.unspilledCount,
    unspilledBytes: s.unspilledBytes,
    spillSeconds: +s.spillSeconds.toFixed(2),
    unspillSeconds: +s.unspillSeconds.toFixed(2),
  }),
);
await cluster.close();
