// GPU utilisation for the dashboard's GPU panel, read from one long-lived nvidia-smi
// per local cluster with GPU workers (engine/cluster/gpu_monitor.ts). Everywhere: its
// lines parsed (recorded output, malformed lines, [N/A] fields), nvidia-smi absent or
// failing said in words, and readings streamed from a running program. Where a GPU is
// visible: real readings of the GPU worker's device arrive in the cluster status that
// the dashboard polls, and an absent nvidia-smi is said there.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { col, fromColumns, LocalCluster } from "../../engine/api/index.js";
import {
  GpuMonitor,
  normalizePciBusId,
  onPath,
  parseNvidiaSmiLine,
  type GpuReading,
} from "../../engine/cluster/gpu_monitor.js";
import { native } from "../../engine/native/addon.js";

const MIB = 1024 * 1024;
const POLL = { timeout: 15_000, interval: 50 };

/**
 * `nvidia-smi --query-gpu=index,pci.bus_id,utilization.gpu,memory.used,memory.total
 * --format=csv,noheader,nounits` as an 8-GPU node prints it (GPU 3 in MIG mode reports no
 * utilisation), with the lines a reader meets besides readings: a header (without
 * noheader), the driver's error messages, a line cut short, and fields that are no numbers.
 */
const RECORDED = [
  "0, 00000000:18:00.0, 0, 0, 81559",
  "1, 00000000:2A:00.0, 100, 40211, 81559",
  "2, 00000000:3A:00.0, 37, 1024, 81559",
  "3, 00000000:5D:00.0, [N/A], 13, 81559",
  "4, 00000000:9A:00.0, [Not Supported], [N/A], [N/A]",
  "index, pci.bus_id, utilization.gpu [%], memory.used [MiB], memory.total [MiB]",
  "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.",
  "Unable to determine the device handle for GPU0000:AB:00.0: Unknown Error",
  "5, 00000000:AB:00.0, 4",
  "6, 00000000:BA:00.0, 12 %, 100 MiB, 81559 MiB",
  "x, 00000000:DB:00.0, 1, 2, 3",
  "7, not-a-bus-id, 1, 2, 3",
  "7, 00000000:DB:00.0, 140, 2, 3",
  "",
];

describe("nvidia-smi readings: the parser", () => {
  it("reads the recorded readings, [N/A] and [Not Supported] as null, memory in bytes, bus ids as CUDA writes them", () => {
    const readings = RECORDED.map((l) => parseNvidiaSmiLine(l, 42)).filter((r): r is GpuReading => r !== null);
    expect(readings).toEqual([
      { index: 0, pciBusId: "0000:18:00.0", utilisation: 0, memoryUsed: 0, memoryTotal: 81559 * MIB, at: 42 },
      {
        index: 1,
        pciBusId: "0000:2a:00.0",
        utilisation: 100,
        memoryUsed: 40211 * MIB,
        memoryTotal: 81559 * MIB,
        at: 42,
      },
      { index: 2, pciBusId: "0000:3a:00.0", utilisation: 37, memoryUsed: 1024 * MIB, memoryTotal: 81559 * MIB, at: 42 },
      { index: 3, pciBusId: "0000:5d:00.0", utilisation: null, memoryUsed: 13 * MIB, memoryTotal: 81559 * MIB, at: 42 },
      { index: 4, pciBusId: "0000:9a:00.0", utilisation: null, memoryUsed: null, memoryTotal: null, at: 42 },
    ]);
  });

  it("turns down every other line: a header, error messages, a cut line, units, no number, no bus id, over 100%", () => {
    for (const line of RECORDED.slice(5)) expect(parseNvidiaSmiLine(line, 0), line).toBeNull();
  });

  it("writes PCI bus ids as CUDA does, whichever form comes in", () => {
    expect(normalizePciBusId("00000000:6A:00.0")).toBe("0000:6a:00.0");
    expect(normalizePciBusId("0000:6a:00.0")).toBe("0000:6a:00.0");
    expect(normalizePciBusId(" 00000001:01:1F.7 ")).toBe("0001:01:1f.7");
  });
});

describe("nvidia-smi readings: the program", () => {
  const dir = mkdtempSync(join(tmpdir(), "basin-gpu-monitor-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("says that nvidia-smi is not there, when it is not", async () => {
    const missing = join(dir, "nvidia-smi");
    const m = new GpuMonitor({ command: missing });
    m.start();
    await expect
      .poll(() => m.why, POLL)
      .toBe(
        `${missing} was not found on PATH, so GPU utilisation is not shown (nvidia-smi comes with the NVIDIA driver)`,
      );
    expect(m.pid).toBeUndefined();
    expect(m.all()).toEqual([]);
    m.stop();
  });

  it.skipIf(onPath("nvidia-smi"))(
    "finds no nvidia-smi on this machine's PATH, and says so by the default name",
    async () => {
      const m = new GpuMonitor();
      m.start();
      await expect.poll(() => m.why, POLL).toMatch(/^nvidia-smi was not found on PATH/);
      m.stop();
    },
  );

  it("says why when nvidia-smi stops with an error, in its own words", async () => {
    const m = new GpuMonitor({ command: "sh", args: ["-c", `echo "${RECORDED[6]}"; exit 9`] });
    m.start();
    await expect
      .poll(() => m.why, POLL)
      .toBe(`sh stopped (exit code 9): ${RECORDED[6]}, so GPU utilisation is not shown`);
    expect(m.pid).toBeUndefined();
  });

  it("keeps each GPU's latest reading from a program that goes on printing, and stops it", async () => {
    // The recorded lines, then GPU 2 again with a new reading, then nothing until stopped.
    const text = [...RECORDED, "2, 00000000:3A:00.0, 55, 2048, 81559"].join("\n").replace(/'/g, "'\\''");
    const m = new GpuMonitor({ command: "sh", args: ["-c", `printf '%s\\n' '${text}'; exec sleep 60`] });
    expect(m.why).toBe("not started");
    m.start();
    await expect.poll(() => m.reading("00000000:3A:00.0")?.utilisation, POLL).toBe(55);
    expect(m.why).toBe("");
    expect(m.all().map((r) => [r.index, r.utilisation])).toEqual([
      [0, 0],
      [1, 100],
      [2, 55],
      [3, null],
      [4, null],
    ]);
    expect(m.reading("0000:2a:00.0")?.memoryUsed).toBe(40211 * MIB);
    const pid = m.pid!;
    expect(() => process.kill(pid, 0)).not.toThrow();
    m.stop();
    expect(m.why).toBe("stopped");
    expect(m.all()).toEqual([]);
    await expect
      .poll(() => {
        try {
          process.kill(pid, 0);
          return "running";
        } catch {
          return "gone";
        }
      }, POLL)
      .toBe("gone");
  });
});

describe("nvidia-smi readings: a program that stops printing", () => {
  it("drops a reading once it is stale and says that nvidia-smi has gone quiet, with its last line", async () => {
    // One reading, then an error line, then silence (as when a GPU falls off the bus).
    const m = new GpuMonitor({
      command: "sh",
      args: ["-c", `echo '${RECORDED[2]}'; echo '${RECORDED[7]}'; exec sleep 60`],
      staleMs: 300,
    });
    m.start();
    await expect.poll(() => m.why, POLL).toMatch(/^sh has printed no reading for over 0\.3 s/);
    expect(m.why).toBe(`sh has printed no reading for over 0.3 s (its last line: ${RECORDED[7]})`);
    expect(m.reading("0000:3a:00.0")).toBeUndefined();
    expect(m.all()).toEqual([]);
    m.stop();
  });
});

const info = native().gpuInfo();
const hasGpu = info.devices.length > 0;
if (!hasGpu) console.log(`gpu: utilisation checks skipped: ${info.compiled ? info.note : "this build has no CUDA"}`);

describe.skipIf(!hasGpu)("gpu: utilisation in the cluster status the dashboard polls", () => {
  const frame = fromColumns({ x: Array.from({ length: 200_000 }, (_, i) => i % 1000) }, { partitions: 4 });

  it("gpu: nvidia-smi's readings of the GPU worker's device arrive with its memory", async () => {
    const cluster = new LocalCluster({ workers: 0, gpus: [0] });
    try {
      const out = await frame
        .withColumns({ y: col("x").mul(2) })
        .filter(col("y").gt(10))
        .compute({ cluster });
      expect(out.numRows).toBe(200_000 - 200 * 6);
      await expect.poll(async () => (await cluster.clusterStatus()).memory?.gpus?.[0]?.reading, POLL).toBeDefined();
      const s = await cluster.clusterStatus();
      expect(s.gpu?.utilisation).toBe("");
      const r = s.memory!.gpus![0].reading!;
      const device = info.devices.find((d) => d.index === 0)!;
      console.log(`gpu: GPU 0 (${device.name}, ${device.pciBusId}) reading: ${JSON.stringify(r)}`);
      // A MIG instance reports no utilisation; a whole GPU a percentage.
      if (r.utilisation !== null) {
        expect(Number.isInteger(r.utilisation)).toBe(true);
        expect(r.utilisation).toBeGreaterThanOrEqual(0);
        expect(r.utilisation).toBeLessThanOrEqual(100);
      }
      // The device's memory as CUDA sees it (nvidia-smi rounds to MiB), and at least what Basin's pool holds.
      expect(Math.abs(r.memoryTotal! - device.totalMemory)).toBeLessThan(0.02 * device.totalMemory);
      expect(r.memoryUsed!).toBeGreaterThan(0);
      expect(r.memoryUsed!).toBeLessThanOrEqual(r.memoryTotal!);
      expect(Date.now() - r.at).toBeLessThan(10_000);
    } finally {
      await cluster.close();
    }
  });

  it("gpu: without nvidia-smi, the status says why and the GPU has no reading", async () => {
    const missing = join(tmpdir(), "basin-no-such-dir", "nvidia-smi");
    const cluster = new LocalCluster({ workers: 0, gpus: [0], gpuMonitor: { command: missing } });
    try {
      await expect
        .poll(async () => (await cluster.clusterStatus()).gpu?.utilisation, POLL)
        .toMatch(/was not found on PATH, so GPU utilisation is not shown/);
      expect((await cluster.clusterStatus()).memory?.gpus?.[0]?.reading).toBeUndefined();
    } finally {
      await cluster.close();
    }
  });
});
