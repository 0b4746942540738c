import { availableParallelism, cpus, freemem, totalmem } from "node:os";
import { native, type GpuDevice } from "../native/addon.js";

export interface MachineInfo {
  cores: number;
  cpuModel: string;
  memoryBytes: number;
  freeMemoryBytes: number;
  gpus: number;
  native: { cuda: boolean; napiVersion: number; flavour: "cuda" | "cpu"; spillCompression: string[] };
  /** CUDA as this build sees it: compiled in, driver/runtime versions (e.g. 13000), each GPU. */
  cuda: { compiled: boolean; driverVersion: number; runtimeVersion: number; note: string; devices: GpuDevice[] };
  node: string;
  defaultWorkers: number;
}

/**
 * What this machine offers Basin.
 *
 * @example
 * machineInfo().gpus // 0 on a machine without a GPU driver
 */
export function machineInfo(): MachineInfo {
  const b = native().buildInfo();
  const g = native().gpuInfo();
  return {
    cores: availableParallelism(),
    cpuModel: cpus()[0]?.model ?? "unknown",
    memoryBytes: totalmem(),
    freeMemoryBytes: freemem(),
    gpus: b.gpus,
    native: {
      cuda: b.cuda,
      napiVersion: b.napiVersion,
      flavour: b.cuda ? "cuda" : "cpu",
      spillCompression: b.spillCompression,
    },
    cuda: g,
    node: process.version,
    defaultWorkers: availableParallelism(),
  };
}

const GIB = 1024 ** 3;

/** 13000 → "13.0"; 0 → "none". */
function cudaVersion(v: number): string {
  return v === 0 ? "none" : `${Math.floor(v / 1000)}.${Math.floor((v % 1000) / 10)}`;
}

/** The compressions spill files may use, and how to get the missing ones. */
function spillLine(available: string[]): string {
  const missing = ["lz4", "zstd"].filter((c) => !available.includes(c));
  const codecs = available.filter((c) => c !== "none");
  const have = codecs.length > 0 ? `compressed with ${codecs.join(" or ")} (or none)` : "uncompressed";
  return missing.length === 0
    ? have
    : `${have}; ${missing.join(" and ")} not built in (apt-get install -y ${missing.map((c) => `lib${c}-dev`).join(" ")}, then npm install)`;
}

export function formatInfo(i: MachineInfo): string {
  return [
    `cores           ${i.cores} (${i.cpuModel})`,
    `memory          ${(i.memoryBytes / GIB).toFixed(1)} GiB (${(i.freeMemoryBytes / GIB).toFixed(1)} GiB free)`,
    `GPUs            ${i.gpus}`,
    ...i.cuda.devices.map(
      (d) =>
        `  ${d.index}: ${d.name}, ${(d.totalMemory / GIB).toFixed(1)} GiB, compute ${d.computeCapability}, ${d.multiprocessors} SMs, ${Math.round(d.bandwidthGBs)} GB/s, ${d.pciBusId}`,
    ),
    ...(i.cuda.compiled
      ? [`CUDA            driver ${cudaVersion(i.cuda.driverVersion)}, runtime ${cudaVersion(i.cuda.runtimeVersion)}`]
      : []),
    `native build    ${i.native.flavour}${i.native.cuda && i.gpus === 0 ? " (built with CUDA; no GPU or driver found, running on CPU)" : ""}, N-API ${i.native.napiVersion}`,
    `spill files     ${spillLine(i.native.spillCompression)}`,
    `node            ${i.node}`,
    `default workers ${i.defaultWorkers} CPU worker threads`,
  ].join("\n");
}
