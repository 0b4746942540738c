// Which GPUs a local cluster runs workers on, and their memory settings, resolved from
// options and the machine, applied to each GPU before its worker starts.
import { BasinError } from "../common/errors.js";
import { parseBytes } from "../memory/bytes.js";
import { native, type GpuConfig, type GpuDevice } from "../native/addon.js";

export interface GpuOptions {
  /** GPUs with a worker each: "all" visible ones (default), "none", or device indices (after CUDA_VISIBLE_DEVICES). */
  gpus?: "all" | "none" | number[];
  /** Bytes Basin may hold on each GPU: "16GB", bytes, or a fraction of its memory (default 0.8). */
  deviceMemoryLimit?: string | number;
  /** Device memory reserved up front and sub-allocated, like RMM's pool (default: the limit). */
  devicePoolSize?: string | number;
  /** CUDA's stream-ordered allocator (cudaMallocAsync) instead of the pool. */
  deviceAsyncAllocator?: boolean;
  /**
   * Copies of 8 MiB and more between host and GPU through pinned staging buffers, the
   * DMA of one chunk overlapping the CPU's copy of the next (default true); false copies
   * straight from pageable memory, as the driver stages it.
   */
  deviceStagedCopies?: boolean;
  /**
   * GPU operations' outputs stay on the GPU when all their columns are there (the
   * store's device tier: they come to the host when read there or spilled; default
   * true); false brings each to the host at once.
   */
  deviceKeepResults?: boolean;
}

function describe(devices: GpuDevice[]): string {
  if (devices.length === 0) return "no GPU";
  return `${devices.length} GPU${devices.length === 1 ? "" : "s"} (${devices.map((d) => `${d.index}: ${d.name}`).join(", ")})`;
}

/** Settings of the GPUs a cluster uses, resolved against each GPU's memory. */
export interface GpuSettings {
  devices: number[];
  configs: Map<number, GpuConfig>;
}

/**
 * The GPU devices to run workers on, with their memory settings (applied per run by
 * applyGpus). Asking for GPUs that are not there is a BASIN_PLAN error naming what
 * there is.
 *
 * @example
 * resolveGpus({ gpus: "all", deviceMemoryLimit: "8GB" }).devices // [0] on a one-GPU machine, [] without one
 */
export function resolveGpus(o: GpuOptions = {}): GpuSettings {
  const info = native().gpuInfo();
  const want = o.gpus ?? "all";
  let devices: number[];
  if (want === "none") devices = [];
  else if (want === "all") devices = info.devices.map((d) => d.index);
  else {
    if (!Array.isArray(want) || want.some((d) => !Number.isInteger(d) || d < 0) || new Set(want).size !== want.length)
      throw new BasinError(
        "BASIN_PLAN",
        `gpus must be "all", "none" or distinct device numbers like [0, 2]; got ${JSON.stringify(want)}`,
      );
    const missing = want.filter((d) => !info.devices.some((x) => x.index === d));
    if (missing.length > 0) {
      const why = info.compiled ? info.note || "" : "this Basin was built without CUDA";
      throw new BasinError(
        "BASIN_PLAN",
        `GPU ${missing.join(", ")} asked for, but this machine has ${describe(info.devices)}${why ? ` (${why})` : ""}; check --gpus and CUDA_VISIBLE_DEVICES, or leave --gpus out to run on the CPU`,
      );
    }
    devices = [...want];
  }
  const configs = new Map<number, GpuConfig>();
  for (const d of devices) {
    const total = info.devices.find((x) => x.index === d)!.totalMemory;
    const memoryLimit = parseBytes(o.deviceMemoryLimit ?? 0.8, "deviceMemoryLimit", total);
    const poolSize =
      o.devicePoolSize === undefined ? memoryLimit : parseBytes(o.devicePoolSize, "devicePoolSize", total);
    if (poolSize > total)
      throw new BasinError(
        "BASIN_PLAN",
        `devicePoolSize ${poolSize} bytes is more than GPU ${d}'s ${total} bytes; give a smaller size`,
      );
    configs.set(d, {
      memoryLimit,
      poolSize,
      asyncAllocator: o.deviceAsyncAllocator ?? false,
      stagedCopies: o.deviceStagedCopies ?? true,
      keepResults: o.deviceKeepResults ?? true,
    });
  }
  return { devices, configs };
}

const applied = new Map<number, string>();

/**
 * Applies a cluster's GPU settings before its run (GPU state is process-wide, as the
 * store is). A GPU whose settings change drops what it held; unchanged ones keep their
 * cached columns between runs. With `warm` (the GPU workers are this process's threads)
 * the GPU is made ready at once, so the run's first chain does not pay for it.
 *
 * @example
 * applyGpus(resolveGpus({ deviceMemoryLimit: 0.5 }));
 */
export function applyGpus(s: GpuSettings, warm = false): void {
  for (const [d, c] of s.configs) {
    const key = JSON.stringify(c);
    if (applied.get(d) === key) continue;
    native().gpuConfigure(d, c);
    applied.set(d, key);
    if (warm) native().gpuWarm(d);
  }
}

/** How many open clusters run GPU work on each GPU in this process (worker threads). */
const users = new Map<number, number>();

/**
 * A cluster whose GPU workers are this process's threads takes its GPUs at its start
 * and gives them back at its close. The last to give a GPU back frees what this process
 * holds on it (its memory pool, the cached columns), so a GPU worker process, or another
 * program, can reserve that memory after it.
 *
 * @example
 * holdGpus(settings); ... ; await cluster.close(); releaseGpus(settings);
 */
export function holdGpus(s: GpuSettings): void {
  for (const d of s.devices) users.set(d, (users.get(d) ?? 0) + 1);
}

/** Gives back the GPUs `holdGpus` took: see there. */
export function releaseGpus(s: GpuSettings): void {
  for (const [d, c] of s.configs) {
    const left = (users.get(d) ?? 1) - 1;
    if (left > 0) {
      users.set(d, left);
      continue;
    }
    users.delete(d);
    if (!applied.has(d)) continue; // never used in this process: nothing reserved
    native().gpuConfigure(d, c); // frees the pool and the cached columns; settings apply from the next use
    applied.delete(d);
  }
}

/**
 * GPUs as `--gpus` writes them: "all", "none", or "0,2".
 *
 * @example
 * parseGpuList("0,2") // [0, 2]
 */
export function parseGpuList(text: string): "all" | "none" | number[] {
  const t = text.trim();
  if (t === "all" || t === "none") return t;
  if (!/^\d+(,\d+)*$/.test(t))
    throw new BasinError("BASIN_PLAN", `--gpus needs "all", "none" or device numbers like 0,2; got "${text}"`);
  return t.split(",").map(Number);
}
