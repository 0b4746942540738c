import { availableParallelism, cpus, freemem, totalmem } from "node:os";
import { native } from "../native/addon.js";

export interface MachineInfo {
  cores: number;
  cpuModel: string;
  memoryBytes: number;
  freeMemoryBytes: number;
  gpus: number;
  native: { cuda: boolean; napiVersion: number; flavour: "cuda" | "cpu" };
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
  return {
    cores: availableParallelism(),
    cpuModel: cpus()[0]?.model ?? "unknown",
    memoryBytes: totalmem(),
    freeMemoryBytes: freemem(),
    gpus: b.gpus,
    native: { cuda: b.cuda, napiVersion: b.napiVersion, flavour: b.cuda ? "cuda" : "cpu" },
    node: process.version,
    defaultWorkers: availableParallelism(),
  };
}

const GIB = 1024 ** 3;

export function formatInfo(i: MachineInfo): string {
  return [
    `cores           ${i.cores} (${i.cpuModel})`,
    `memory          ${(i.memoryBytes / GIB).toFixed(1)} GiB (${(i.freeMemoryBytes / GIB).toFixed(1)} GiB free)`,
    `GPUs            ${i.gpus}`,
    `native build    ${i.native.flavour}${i.native.cuda && i.gpus === 0 ? " (built with CUDA; no GPU or driver found, running on CPU)" : ""}, N-API ${i.native.napiVersion}`,
    `node            ${i.node}`,
    `default workers ${i.defaultWorkers} CPU worker threads`,
  ].join("\n");
}
