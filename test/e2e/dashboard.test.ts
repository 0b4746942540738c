// The cluster dashboard end to end (issue 20): after a pipeline that reads a CSV,
// shuffles it through a group-by and sorts it under a memory limit that makes the store
// spill, the task stream has a lane per worker with bars of every kind, each group's
// progress is complete, the memory tiers show their limits, the spill counters are the
// engine's, the GPU panel says why there is none (or shows the GPUs with nvidia-smi's
// utilisation), and the run's history shows its plan as explain() prints it. Screenshots: test-artifacts/dashboard-*.png.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { onPath } from "../../engine/cluster/gpu_monitor.js";
import { native } from "../../engine/native/addon.js";
import { openFile, openWorkbench, runToEnd, screenshots, setPanelHeight, type Workbench } from "../helpers/browser.js";

const ROWS = 400_000;
const csv = () => {
  const lines = ["id,city,fare"];
  for (let i = 0; i < ROWS; i++) lines.push(`${(i * 7919) % ROWS},c${i % 97},${((i * 31) % 1000) / 10}`);
  return lines.join("\n") + "\n";
};
const PIPELINE = (dir: string) => `import { readCsv, col, show } from "basin";

const trips = readCsv(${JSON.stringify(`${dir}/trips.csv`)}, { blocksize: 1 << 20 });
show(trips.groupBy("city").agg(col("fare").mean().alias("mean_fare")), "by city");
export default trips.sort("id");
`;

let w: Workbench;
let page: Page;

beforeAll(async () => {
  w = await openWorkbench((dir) => ({ "trips.csv": csv(), "spill.ts": PIPELINE(dir) }), {
    workers: 2,
    memoryLimit: "6MB",
  });
  page = w.page;
});

afterAll(async () => {
  await w?.close();
});

describe("cluster dashboard", { timeout: 180_000 }, () => {
  it("a task stream with one lane per worker and bars for compute, transfer, spill and disk reads", async () => {
    await openFile(page, "spill.ts");
    await runToEnd(page);
    await page.click('[data-panel="cluster"]');
    await page.waitForSelector('[data-testid="task-stream"] rect[data-kind]');
    const lanes = await page.$$eval("[data-lane]", (els) => els.map((e) => e.getAttribute("data-lane")));
    expect(lanes.slice(0, 2)).toEqual(w.cluster.pool.names);
    const kinds = await page.$$eval('[data-testid="task-stream"] rect[data-kind]', (els) => [
      ...new Set(els.map((e) => e.getAttribute("data-kind"))),
    ]);
    expect(kinds.sort()).toEqual(["compute", "disk read", "spill", "transfer"]);
    const workers = await page.$$eval('[data-testid="task-stream"] rect[data-kind]', (els) => [
      ...new Set(els.map((e) => e.getAttribute("data-worker"))),
    ]);
    expect(workers.sort()).toEqual([...w.cluster.pool.names].sort());
    expect(await page.textContent('[data-testid="task-legend"]')).toMatch(/compute.*transfer.*spill.*disk read/);
  });

  it("progress per task group, memory per tier with limits, spill counters and the GPU line", async () => {
    const groups = await page.$$eval(".progress-row[data-group]", (els) =>
      els.map((e) => e.querySelector(".pg-num")!.textContent!),
    );
    expect(groups.length).toBeGreaterThan(1);
    for (const g of groups) {
      const [done, total] = g.split("/").map(Number);
      expect(done).toBe(total);
    }
    expect(await page.textContent('[data-tier="host"]')).toMatch(/host \(RAM\).*\/ 5\.7 MiB/);
    expect(await page.textContent('[data-tier="disk"]')).toMatch(/disk \(spill: .+\)/);
    expect(await page.locator('[data-tier="device"]').count()).toBe(1);
    // The counters are the engine's: between its own counts just before and just after they were read.
    const before = native().memoryStats().spilledCount;
    expect(before).toBeGreaterThan(0);
    await page.waitForTimeout(1200); // a poll after `before`
    const text = (await page.textContent('[data-testid="spill-counters"]'))!;
    const after = native().memoryStats().spilledCount;
    const shown = Number(/spilled to disk([\d,]+) tables/.exec(text)![1].replace(/,/g, ""));
    expect(shown).toBeGreaterThanOrEqual(before);
    expect(shown).toBeLessThanOrEqual(after);
    const gpu = native().gpuInfo();
    if (w.cluster.gpus.length === 0) {
      const none = await page.textContent('[data-testid="gpu-none"]');
      expect(none).toMatch(/^No GPU: .*(CUDA|GPU)/);
      // Built with CUDA but no device: whether nvidia-smi (the driver's tool) is there says what to look at.
      if (gpu.compiled && gpu.devices.length === 0)
        expect(none).toContain(
          onPath("nvidia-smi")
            ? "nvidia-smi is on PATH: run it to see what the driver reports"
            : "nvidia-smi is not on PATH either, so the NVIDIA driver seems not to be installed",
        );
    } else {
      expect(await page.locator('[data-testid="gpu-0"]').count()).toBe(1);
      // nvidia-smi's utilisation of the device (or [N/A] on a MIG instance), or why it is not shown.
      await expect
        .poll(() => page.textContent('[data-testid="gpu-0-utilisation"]'), { timeout: 15_000 })
        .toMatch(onPath("nvidia-smi") ? /^utilisation(\d+%|\[N\/A\])/ : /nvidia-smi was not found on PATH/);
    }
  });

  it("the last runs, with the plan each ran as explain() prints it", async () => {
    await setPanelHeight(page, 760); // a reload: the session, the open tab and the stream come back
    await page.waitForSelector('[data-testid="run-history"] [data-run]');
    expect(await page.textContent('[data-testid="run-history"] [data-run]')).toMatch(/✓spill\.ts.*tasks.*400,000 rows/);
    const explain = await page.textContent('[data-testid="explain"]');
    expect(explain).toMatch(/default export · 400,000 rows — explain\(\)/);
    expect(explain).toMatch(/Sort \[id asc\]/);
    expect(explain).toMatch(/by city · 97 rows — explain\(\)/);
    expect(explain).toMatch(/Aggregate keys=\[col\("city"\)\]/);
    await screenshots(page, "dashboard");
  });
});
