// The benchmark's per-run trace: the longest task spans of a run and what the GPUs did
// in it, the line that says where a slow question's time went.
import { afterAll, describe, expect, it } from "vitest";
import * as api from "../../engine/api/index.js";
import type { GpuStats } from "../../engine/native/addon.js";
import { clusterTracer, describeRun } from "../../bench/run_trace.js";

function gpu(over: Partial<GpuStats>): GpuStats {
  return {
    device: 0,
    used: 0,
    limit: 0,
    poolSize: 0,
    cachedBytes: 0,
    cachedColumns: 0,
    evictions: 0,
    evictedBytes: 0,
    uploads: 0,
    uploadBytes: 0,
    downloads: 0,
    downloadBytes: 0,
    cacheHits: 0,
    chains: 0,
    failures: 0,
    chainMicros: 0,
    uploadMicros: 0,
    downloadMicros: 0,
    resultTables: 0,
    resultBytes: 0,
    resultSpills: 0,
    resultSpilledBytes: 0,
    phases: {},
    broken: null,
    ...over,
  };
}

describe("bench run trace", () => {
  it("names the three longest spans and the GPU's chain and copy time during the run only", () => {
    const spans = [
      { worker: "cpu-0", group: "scanCsv", start: 0, end: 10 },
      { worker: "gpu-0", group: "stored→aggregate", start: 5, end: 985 },
      { worker: "cpu-1", group: "concat", start: 0, end: 40 },
      { worker: "cpu-1", group: "parts", start: 40, end: 41 },
    ];
    const before = [gpu({ chains: 3, chainMicros: 5000, downloadBytes: 1e6, downloadMicros: 100 })];
    const after = [
      gpu({ chains: 4, chainMicros: 980_000, downloadBytes: 913e6, downloadMicros: 95_100, evictedBytes: 2e9 }),
    ];
    expect(describeRun(spans, before, after)).toBe(
      "tasks: 4 busy 1031 ms within 985 ms, longest gpu-0 stored→aggregate 980 ms, cpu-1 concat 40 ms, cpu-0 scanCsv 10 ms; " +
        "gpu: 1 chain 975.0 ms, up 0.0 MB in 0.0 ms, down 912 MB in 95.0 ms, spilled 2000 MB of cached columns",
    );
  });

  it("says how many outputs the GPU kept and how much of them it spilled to host", () => {
    const before = [gpu({ chains: 1, resultTables: 1, resultBytes: 5e6 })];
    const after = [gpu({ chains: 3, resultTables: 3, resultBytes: 25e6, resultSpilledBytes: 8e6 })];
    expect(describeRun([], before, after)).toBe(
      "tasks: 0 busy 0 ms within 0 ms; gpu: 2 chains 0.0 ms, up 0.0 MB in 0.0 ms, down 0.0 MB in 0.0 ms, " +
        "kept 2 outputs (20 MB) on the GPU, spilled 8.0 MB of kept outputs to host",
    );
  });

  it("names the chains' longest GPU phases in the run, longest first", () => {
    const before = [gpu({ chains: 1, phases: { "group ids": 1000, aggregates: 500 } })];
    const after = [
      gpu({
        chains: 2,
        phases: { "group ids": 13_000, aggregates: 500, "group keys": 40_000, filter: 200, output: 100, sort: 50 },
      }),
    ];
    expect(describeRun([], before, after)).toBe(
      "tasks: 0 busy 0 ms within 0 ms; gpu: 1 chain 0.0 ms, up 0.0 MB in 0.0 ms, down 0.0 MB in 0.0 ms; " +
        "phases group keys 40.0 ms, group ids 12.0 ms, filter 0.2 ms, output 0.1 ms",
    );
  });

  it("says nothing of GPUs when no chain ran", () => {
    expect(describeRun([], [gpu({ chains: 2 })], [gpu({ chains: 2 })])).toBe("tasks: 0 busy 0 ms within 0 ms");
  });

  const cluster = new api.LocalCluster({ workers: 1 });
  afterAll(() => cluster.close());

  it("traces a real run on a local cluster: its tasks, and only those of that run", async () => {
    const tracer = clusterTracer(() => cluster);
    await api.fromColumns({ x: [1, 2, 3] }).compute({ cluster });
    await tracer.start();
    await api
      .fromColumns({ k: [1, 1, 2], v: [1, 2, 3] })
      .groupBy("k")
      .agg(api.col("v").sum().alias("s"))
      .compute({ cluster });
    const line = await tracer.end();
    expect(line).toMatch(/^tasks: [1-9]\d* busy \d+ ms within \d+ ms, longest cpu-0 /);
    expect(line).toContain("aggregate");
    expect(line).not.toContain("gpu:");
  });
});
