// The workbench sees bytes per tier and spill activity in the cluster status.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LocalCluster } from "../../engine/api/index.js";
import { EngineService } from "../../engine/server/engine_service.js";
import { native } from "../../engine/native/addon.js";
import { applyMemory } from "../../engine/memory/limits.js";

const dir = mkdtempSync(join(tmpdir(), "basin-mem-status-"));
const cluster = new LocalCluster({ workers: 1, memoryLimit: "2GB", spillLimit: "10GB", localDirectory: dir });
afterAll(async () => {
  await cluster.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("cluster status memory", () => {
  it("reports limits, bytes per tier and spills", async () => {
    applyMemory(cluster.memory);
    const h = native().tableFromJs({ rows: 4, names: ["x"], columns: [{ type: "float64", values: new Float64Array(4), validity: null }] });
    native().memorySpill(1);
    const engine = new EngineService({ root: dir, cluster, emit: () => {} });
    const s = await engine.cluster();
    native().release(h);
    expect(s.memory).toMatchObject({
      host: { limit: 2e9 },
      disk: { bytes: 32, limit: 1e10, tables: 1, directory: expect.stringContaining(dir) },
      device: { bytes: 0 },
      spilled: { tables: 1, bytes: 32 },
      unspilled: { tables: 0 },
      overLimit: false,
    });
    await engine.close();
  });
});
