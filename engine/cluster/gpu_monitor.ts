// GPU utilisation for the dashboard, read the way Dask's dashboard reads it from NVML:
// one long-lived `nvidia-smi --query-gpu=… -lms 1000` per local cluster with GPU
// workers, started when its status is first asked for (a dashboard watches) and
// stopped with the cluster, its CSV lines parsed into the latest reading of each GPU.
// Where nvidia-smi is missing or fails, `why` says so in words the dashboard shows.
import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { createInterface } from "node:readline";

/** One GPU's reading as nvidia-smi reports it (the whole device: every process's work and memory). */
export interface GpuReading {
  /** nvidia-smi's index (not CUDA's, which CUDA_VISIBLE_DEVICES renumbers): match GPUs by pciBusId. */
  index: number;
  /** "0000:65:00.0": the domain as 4 hex digits, lower case, as CUDA writes it. */
  pciBusId: string;
  /** Percent of the last sample period in which a kernel ran; null where nvidia-smi says [N/A] (MIG, some boards). */
  utilisation: number | null;
  /** Bytes in use on the device, by every process; null where not reported. */
  memoryUsed: number | null;
  memoryTotal: number | null;
  /** When the line arrived (ms since the epoch). */
  at: number;
}

/** The fields asked for, in the order parseNvidiaSmiLine reads them. */
export const NVIDIA_SMI_FIELDS = ["index", "pci.bus_id", "utilization.gpu", "memory.used", "memory.total"];

const MIB = 1024 * 1024;

/**
 * A PCI bus id in CUDA's form ("0000:65:00.0"): nvidia-smi writes the domain with 8 hex
 * digits ("00000000:65:00.0") and in upper case.
 *
 * @example
 * normalizePciBusId("00000000:6A:00.0") // "0000:6a:00.0"
 */
export function normalizePciBusId(id: string): string {
  const m = /^([0-9a-f]+):([0-9a-f]{2}):([0-9a-f]{2})\.([0-9a-f])$/i.exec(id.trim());
  if (!m) return id.trim().toLowerCase();
  return `${parseInt(m[1], 16).toString(16).padStart(4, "0")}:${m[2]}:${m[3]}.${m[4]}`.toLowerCase();
}

/** A number field: null for nvidia-smi's "[N/A]", "[Not Supported]" and the like; undefined when it is no number. */
function field(text: string): number | null | undefined {
  const t = text.trim();
  if (/^\[.*\]$/.test(t) || t === "N/A") return null;
  if (!/^\d+(\.\d+)?$/.test(t)) return undefined;
  return Number(t);
}

/**
 * One line of `nvidia-smi --query-gpu=index,pci.bus_id,utilization.gpu,memory.used,memory.total
 * --format=csv,noheader,nounits` (memory in MiB); null for a line that is not such a reading
 * (a header, an error message, a cut line).
 *
 * @example
 * parseNvidiaSmiLine("0, 00000000:65:00.0, 37, 1024, 81559", 0)
 * // { index: 0, pciBusId: "0000:65:00.0", utilisation: 37, memoryUsed: 1073741824, memoryTotal: 85520809984, at: 0 }
 */
export function parseNvidiaSmiLine(line: string, at: number): GpuReading | null {
  const parts = line.split(",");
  if (parts.length !== NVIDIA_SMI_FIELDS.length) return null;
  const [index, bus, util, used, total] = parts;
  const i = field(index);
  const u = field(util),
    m = field(used),
    t = field(total);
  if (typeof i !== "number" || !Number.isInteger(i) || u === undefined || m === undefined || t === undefined)
    return null;
  if (!/^[0-9a-f]+:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]$/i.test(bus.trim())) return null;
  if (u !== null && u > 100) return null;
  return {
    index: i,
    pciBusId: normalizePciBusId(bus),
    utilisation: u,
    memoryUsed: m === null ? null : m * MIB,
    memoryTotal: t === null ? null : t * MIB,
    at,
  };
}

/**
 * Whether an executable `command` is on PATH (or, with a slash, at that path).
 *
 * @example
 * onPath("nvidia-smi") // false on a machine without the NVIDIA driver
 */
export function onPath(command: string, path = process.env.PATH ?? ""): boolean {
  const candidates = command.includes("/")
    ? [command]
    : path
        .split(delimiter)
        .filter(Boolean)
        .map((d) => join(d, command));
  return candidates.some((c) => {
    try {
      accessSync(c, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** Why utilisation is not shown when `command` cannot be found. */
export const notFound = (command: string) =>
  `${command} was not found on PATH, so GPU utilisation is not shown (nvidia-smi comes with the NVIDIA driver)`;

export interface GpuMonitorOptions {
  /** The program and its arguments (default: nvidia-smi asking for NVIDIA_SMI_FIELDS every intervalMs). */
  command?: string;
  args?: string[];
  /** ms between readings (default 1000). */
  intervalMs?: number;
  /** A reading older than this (ms) is no longer shown (default 5 intervals): nvidia-smi hangs when a GPU falls off the bus. */
  staleMs?: number;
}

/**
 * Readings of every GPU from one nvidia-smi that runs from start() to stop().
 *
 * @example
 * const m = new GpuMonitor(); m.start();
 * m.reading("0000:65:00.0")?.utilisation; // 37, once the first line arrived
 * m.why; // "" while readings arrive, else why there are none
 * m.stop();
 */
export class GpuMonitor {
  private child?: ChildProcess;
  private readonly readings = new Map<string, GpuReading>();
  private state = "not started";
  /** The last line that was not a reading (nvidia-smi writes its errors to stdout). */
  private lastOther = "";
  private readonly command: string;
  private readonly args: string[];
  private readonly staleMs: number;

  constructor(o: GpuMonitorOptions = {}) {
    this.command = o.command ?? "nvidia-smi";
    this.args = o.args ?? [
      `--query-gpu=${NVIDIA_SMI_FIELDS.join(",")}`,
      "--format=csv,noheader,nounits",
      "-lms",
      String(o.intervalMs ?? 1000),
    ];
    this.staleMs = o.staleMs ?? 5 * (o.intervalMs ?? 1000);
  }

  /** Starts nvidia-smi (once; a second call does nothing while it runs). */
  start(): void {
    if (this.child) return;
    this.state = `waiting for ${this.command}'s first reading`;
    const child = spawn(this.command, this.args, { stdio: ["ignore", "pipe", "pipe"] });
    this.child = child;
    const lines = (stream: NodeJS.ReadableStream) => createInterface({ input: stream, crlfDelay: Infinity });
    lines(child.stdout!).on("line", (line) => {
      const r = parseNvidiaSmiLine(line, Date.now());
      if (r) {
        this.readings.set(r.pciBusId, r);
        this.state = "";
      } else if (line.trim()) this.lastOther = line.trim();
    });
    lines(child.stderr!).on("line", (line) => {
      if (line.trim()) this.lastOther = line.trim();
    });
    child.on("error", (e: NodeJS.ErrnoException) => {
      this.state =
        e.code === "ENOENT"
          ? notFound(this.command)
          : `${this.command} could not be started (${e.message}), so GPU utilisation is not shown`;
      if (this.child === child) this.child = undefined;
    });
    // "close", not "exit": by then every line it printed has been read.
    child.on("close", (code, signal) => {
      if (this.child !== child) return; // stopped, or failed to start
      this.child = undefined;
      this.readings.clear();
      this.state =
        `${this.command} stopped (${signal ?? `exit code ${code}`})` +
        (this.lastOther ? `: ${this.lastOther}` : " without a reading") +
        ", so GPU utilisation is not shown";
    });
    // Neither the program nor its pipes keep the engine's process alive.
    child.unref();
    for (const s of [child.stdout, child.stderr]) (s as unknown as { unref?(): void } | null)?.unref?.();
  }

  /** Stops nvidia-smi; the readings go with it. */
  stop(): void {
    const child = this.child;
    this.child = undefined;
    this.readings.clear();
    this.state = "stopped";
    child?.kill();
  }

  /** nvidia-smi's process id while it runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Why there are no readings ("" while they arrive). */
  get why(): string {
    if (this.state || this.readings.size === 0 || this.all().length > 0) return this.state;
    return (
      `${this.command} has printed no reading for over ${(this.staleMs / 1000).toFixed(1)} s` +
      (this.lastOther ? ` (its last line: ${this.lastOther})` : "")
    );
  }

  /** The latest reading of the GPU at a PCI bus id (either form), unless it is stale. */
  reading(pciBusId: string): GpuReading | undefined {
    const r = this.readings.get(normalizePciBusId(pciBusId));
    return r && this.fresh(r) ? r : undefined;
  }

  /** Every GPU's latest reading that is not stale, by nvidia-smi's index. */
  all(): GpuReading[] {
    return [...this.readings.values()].filter((r) => this.fresh(r)).sort((a, b) => a.index - b.index);
  }

  private fresh(r: GpuReading): boolean {
    return Date.now() - r.at <= this.staleMs;
  }
}
