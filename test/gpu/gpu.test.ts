// The GPU suite: every case of gpu_cases.ts on a GPU worker against the CPU kernels,
// CUDA failures, and spilling past the device memory limit. It runs where a GPU is
// visible and is skipped, with the reason printed, elsewhere (CI has no GPU; the
// device runner, test/gpu/device_run.ts, runs the same cases on a GPU machine).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalCluster, type DataFrame } from "../../engine/api/index.js";
import { native } from "../../engine/native/addon.js";
import {
  GPU_CASES,
  runCase,
  runDeviceHomeCheck,
  runDeviceTierCheck,
  runFaultChecks,
  runProcessDeviceHomeCheck,
  runProcessFaultCheck,
  runSpillCheck,
  runStagedCopyCheck,
  runStickyFaultCheck,
  specialFrame,
  tripsFrame,
} from "./gpu_cases.js";

const info = native().gpuInfo();
const hasGpu = info.devices.length > 0;
if (!hasGpu) console.log(`gpu: suite skipped: ${info.compiled ? info.note : "this build has no CUDA"}`);

// The cases share one GPU cluster of this process; the checks after them each make
// their own, and those with a GPU worker process need this process to have given the
// GPU back first (the process reserves its own device pool), as device_run.ts does.
let cpu: LocalCluster;
beforeAll(() => {
  if (hasGpu) cpu = new LocalCluster({ workers: 2, gpus: "none" });
});
afterAll(async () => {
  await cpu?.close();
});

describe.skipIf(!hasGpu)("gpu: GPU worker vs CPU kernels", () => {
  let gpu: LocalCluster, trips: DataFrame, special: DataFrame;
  beforeAll(() => {
    gpu = new LocalCluster({ workers: 0, gpus: [0] });
    trips = tripsFrame(3000, 7);
    special = specialFrame();
  });
  afterAll(async () => {
    await gpu.close();
  });

  it.each(GPU_CASES)("gpu: $name gives the CPU's answer", async (c) => {
    const out = await runCase(c, gpu, cpu, trips, special);
    expect(out.diff).toBeNull();
    if (c.onGpu) expect(out.chains).toBeGreaterThan(0);
  });
});

describe.skipIf(!hasGpu)("gpu: failures, device homes, copies and spilling", () => {
  it("gpu: CUDA errors are BASIN_CUDA naming the GPU, and the engine survives them", async () => {
    for (const o of await runFaultChecks(cpu)) expect(o.ok, `${o.name}: ${o.detail}`).toBe(true);
  });

  it("gpu: a sticky fault in the GPU's worker process ends only that process; the next run is on the GPU", async () => {
    const o = await runProcessFaultCheck(cpu);
    expect(o.ok, o.detail).toBe(true);
  });

  it("gpu: persist() uploads its partitions where the GPUs alone compute, sized to the device limit", async () => {
    const o = await runDeviceHomeCheck(cpu);
    expect(o.ok, o.detail).toBe(true);
  });

  it("gpu: copies of 8 MiB and more through pinned staging give the same bytes", async () => {
    const o = await runStagedCopyCheck(cpu);
    expect(o.ok, o.detail).toBe(true);
  }, 120_000);

  it("gpu: persist() makes a GPU worker process home to its partitions", async () => {
    const o = await runProcessDeviceHomeCheck(cpu);
    expect(o.ok, o.detail).toBe(true);
  });

  it("gpu: outputs stay on the GPU between tasks, spill to host under its limit, and give the CPU's answers", async () => {
    const o = await runDeviceTierCheck(cpu);
    expect(o.ok, o.detail).toBe(true);
  }, 120_000);

  it("gpu: data twice the device memory limit completes through spilling", async () => {
    const o = await runSpillCheck(cpu);
    expect(o.ok, o.detail).toBe(true);
  });

  // Last: the GPU is unusable in this process afterwards.
  it("gpu: a sticky CUDA error leaves the engine answering on the CPU", async () => {
    const o = await runStickyFaultCheck();
    expect(o.ok, o.detail).toBe(true);
  });
});
