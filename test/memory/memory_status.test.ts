// The workbench sees bytes per tier and spill activity in the cluster status.
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LocalCluster } from "../../engine/api/index.js";
import { EngineService } from "../../engine/server/engine_service.js";
import { native } from "../../engine/native/addon.js";
import { applyMemory } from "../../engine/memory/limits.js";
import { memoryStatus } from "../../engine/memory/status.js";

const dir = mkdtempSync(join(tmpdir(), "basin-mem-status-"));
const cluster = new LocalCluster({ workers: 1, memoryLimit: "2GB", spillLimit: "10GB", localDirectory: dir });
afterAll(async () => {
  await cluster.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("cluster status memory", () => {
  it("reports limits, bytes per tier and spills", async () => {
    applyMemory(cluster.memory);
    const h = native().tableFromJs({
      rows: 4,
      names: ["x"],
      columns: [{ type: "float64", values: new Float64Array(4), validity: null }],
    });
    native().memorySpill(1);
    const engine = new EngineService({ root: dir, cluster, emit: () => {} });
    const s = await engine.cluster();
    // The disk counts the spill file's own size (its Arrow framing, compressed values), not the 32 bytes in memory.
    const file = statSync(join(s.memory!.disk.directory, `t${h}.arrow`)).size;
    native().release(h);
    expect(s.memory).toMatchObject({
      host: { limit: 2e9 },
      disk: { bytes: file, limit: 1e10, tables: 1, directory: expect.stringContaining(dir) },
      device: { bytes: 0 },
      spilled: { tables: 1, bytes: 32 },
      unspilled: { tables: 0 },
      overLimit: false,
    });
    await engine.close();
  });
});

describe("cluster status memory with GPUs", () => {
  it("sums device bytes over the GPUs and shows each GPU's limit, cache, spills, transfers and whether it is usable", () => {
    const base = native().memoryStats();
    const gpu = (device: number, used: number, broken: string | null) => ({
      device,
      used,
      limit: 8e9,
      poolSize: 8e9,
      cachedBytes: used,
      cachedColumns: 3,
      evictions: 2,
      evictedBytes: 5e6,
      uploads: 9,
      uploadBytes: 1e8,
      downloads: 4,
      downloadBytes: 1e5,
      cacheHits: 1,
      chains: 7,
      failures: broken ? 1 : 0,
      chainMicros: 9000,
      uploadMicros: 4000,
      downloadMicros: 50,
      resultTables: 2,
      resultBytes: 4e5,
      resultSpills: 0,
      resultSpilledBytes: 0,
      phases: {},
      broken,
    });
    const s = memoryStatus(base, [gpu(0, 1e6, null), gpu(1, 2e6, "cudaErrorIllegalAddress")]);
    // Transfers and fused chains per GPU, for the dashboard's GPU panel.
    const transfers = {
      uploads: 9,
      uploadBytes: 1e8,
      downloads: 4,
      downloadBytes: 1e5,
      chains: 7,
      keptOutputs: 2,
      keptSpills: 0,
    };
    expect(s.device.bytes).toBe(3e6); // the store's device tier is part of what the GPUs use
    expect(s.gpus).toEqual([
      {
        device: 0,
        bytes: 1e6,
        limit: 8e9,
        cachedColumns: 3,
        spilledColumns: 2,
        spilledBytes: 5e6,
        broken: null,
        ...transfers,
      },
      {
        device: 1,
        bytes: 2e6,
        limit: 8e9,
        cachedColumns: 3,
        spilledColumns: 2,
        spilledBytes: 5e6,
        broken: "cudaErrorIllegalAddress",
        ...transfers,
      },
    ]);
    expect(memoryStatus(base).gpus).toBeUndefined();
    // nvidia-smi's reading, where there is one, goes with its GPU.
    const reading = { utilisation: 37, memoryUsed: 2e9, memoryTotal: 8e10, at: 1 };
    const read = memoryStatus(base, [gpu(0, 1e6, null), gpu(1, 2e6, null)], (d) => (d === 1 ? reading : undefined));
    expect(read.gpus!.map((g) => g.reading)).toEqual([undefined, reading]);
    expect("reading" in read.gpus![0]).toBe(false);
  });

  it("lists a CPU-only cluster's workers as cpu workers", async () => {
    const engine = new EngineService({ root: dir, cluster, emit: () => {} });
    const s = await engine.cluster();
    expect(s.workers.map((w) => w.kind)).toEqual(["cpu"]);
    expect(s.memory?.gpus).toBeUndefined();
  });
});
