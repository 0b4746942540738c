// Everything the GPU machine runs in one call (it has no Node of its own: the bundle
// from scripts/gpu_bundle.mjs carries one): the GPU suite of gpu_cases.ts, the
// bandwidth q1 reaches, and the db-benchmark groupby questions on DuckDB, Basin's CPU
// workers and Basin's GPU worker over the same in-memory data. Writes gpu-suite.json
// and bench.md to $OUT and prints a summary; exits 1 when any check fails.
import { mkdirSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { col, fromColumns, LocalCluster, type DataFrame } from "../../engine/api/index.js";
import { formatInfo, machineInfo } from "../../engine/cli/info.js";
import { native, type GpuStats } from "../../engine/native/addon.js";
import { parseOptions, runBench } from "../../bench/run.js";
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
  type CheckOutcome,
} from "./gpu_cases.js";

const out = process.env.OUT ?? ".gpu-out";
mkdirSync(out, { recursive: true });
const log = (s: string) => process.stdout.write(`${s}\n`);

/** Copy rates the chains met: bytes over microseconds of the GPU's copies between two stats. */
function copyRate(before: GpuStats, after: GpuStats, dir: "upload" | "download"): string {
  const bytes = after[`${dir}Bytes`] - before[`${dir}Bytes`];
  const micros = after[`${dir}Micros`] - before[`${dir}Micros`];
  return `${(bytes / 1e9).toFixed(2)} GB in ${(micros / 1000).toFixed(1)} ms (${micros > 0 ? (bytes / micros / 1e3).toFixed(1) : "-"} GB/s)`;
}

/**
 * q1's chain (group by a string key, sum an int column) on one table of `rows`: seconds
 * and bytes read; and the rates of the copies a chain makes: the columns' first upload,
 * and the download of every row (a filter that keeps them all), through pinned staging
 * buffers (the default) and straight from pageable memory.
 */
function q1Bandwidth(rows: number): {
  seconds: number;
  bytes: number;
  staged: { upload: string; download: string };
  direct: { upload: string; download: string };
} {
  const addon = native();
  const k = 100;
  // id1 as UTF-8 bytes and offsets (1e8 JS strings took a minute of device time to build).
  const chars = new Uint8Array(rows * 5);
  const offsets = new Float64Array(rows + 1);
  for (let i = 0; i < rows; i++) {
    const id = 1 + ((i * 2654435761) % k);
    const o = i * 5;
    chars[o] = 0x69; // "i"
    chars[o + 1] = 0x64; // "d"
    chars[o + 2] = 0x30 + Math.floor(id / 100);
    chars[o + 3] = 0x30 + (Math.floor(id / 10) % 10);
    chars[o + 4] = 0x30 + (id % 10);
    offsets[i + 1] = (i + 1) * 5;
  }
  const v1 = new BigInt64Array(rows);
  for (let i = 0; i < rows; i++) v1[i] = BigInt(1 + (i % 5));
  const h = addon.tableFromJs({
    rows,
    names: ["id1", "v1"],
    columns: [
      { type: "string", values: { offsets, chars, ascii: true }, validity: null },
      { type: "int64", values: v1, validity: null },
    ],
  });
  try {
    const steps = [
      {
        kind: "aggregate" as const,
        keys: [0],
        aggs: [{ op: "sum" as const, column: 1, name: "v1" }],
        mode: "partial" as const,
      },
    ];
    const keepAll = {
      kind: "binary" as const,
      op: "ge" as const,
      left: { kind: "col" as const, index: 1, type: "int64" as const },
      right: { kind: "lit" as const, value: 0, type: "int64" as const },
      type: "bool" as const,
    };
    // The copies a chain makes: the columns' first upload (by q1's chain), and every row's
    // download (a filter that keeps them all), with or without pinned staging.
    // The filter's output must come down to be measured: no device tier here.
    const copies = (stagedCopies: boolean): { upload: string; download: string } => {
      addon.gpuConfigure(0, { stagedCopies, keepResults: false }); // frees what the GPU holds: the columns go up again
      const s0 = addon.gpuStats()[0]!;
      addon.release(addon.gpuRun(0, h, steps));
      const s1 = addon.gpuStats()[0]!;
      addon.release(addon.gpuRun(0, h, [{ kind: "filter", predicate: keepAll }]));
      return { upload: copyRate(s0, s1, "upload"), download: copyRate(s1, addon.gpuStats()[0]!, "download") };
    };
    const direct = copies(false);
    const staged = copies(true); // the default; its columns stay cached for the timing below
    let best = Infinity;
    for (let r = 0; r < 5; r++) {
      const t0 = performance.now();
      addon.release(addon.gpuRun(0, h, steps));
      best = Math.min(best, (performance.now() - t0) / 1000);
    }
    // id1: 8-byte offsets + 5 bytes per row; v1: 8 bytes per row (each read once by the kernels that need it)
    return { seconds: best, bytes: rows * (8 + 5 + 8), staged, direct };
  } finally {
    addon.release(h);
    addon.gpuConfigure(0, {}); // the defaults again (the clusters after assume them)
  }
}

/**
 * What the device tier gives: computed columns, a filter and a sort of `rows` rows on
 * the GPU alone, with outputs kept on the device (the default) and brought to the host
 * at once (deviceKeepResults false); best of three runs, and the bytes each copied.
 */
async function tierProbe(rows: number): Promise<string> {
  const data = fromColumns(
    {
      k: Array.from({ length: rows }, (_, i) => (i * 7919) % 1_000_003),
      v: Array.from({ length: rows }, (_, i) => (i % 977) - 300),
    },
    { partitions: [rows], types: { k: "int64", v: "int64" } },
  );
  const q = (f: DataFrame) =>
    f.select(col("k").add(1).alias("k2"), col("v").mul(2).alias("v2")).filter(col("v2").gt(0)).sort("k2");
  const lines: string[] = [];
  for (const keep of [true, false]) {
    const cluster = new LocalCluster({ workers: 0, gpus: [0], deviceKeepResults: keep });
    try {
      const stored = await data.persist({ cluster });
      let best = Infinity,
        up = 0,
        down = 0,
        rowsOut = 0;
      for (let r = 0; r < 3; r++) {
        const s0 = native().gpuStats()[0]!;
        const t0 = performance.now();
        rowsOut = (await q(stored).compute({ cluster })).numRows;
        best = Math.min(best, performance.now() - t0);
        const s1 = native().gpuStats()[0]!;
        up = s1.uploadBytes - s0.uploadBytes;
        down = s1.downloadBytes - s0.downloadBytes;
      }
      stored.unpersist();
      lines.push(
        `outputs ${keep ? "kept on the GPU" : "to the host"}: ${best.toFixed(1)} ms, up ${(up / 1e6).toFixed(0)} MB, down ${(down / 1e6).toFixed(0)} MB (${rowsOut} rows)`,
      );
    } finally {
      await cluster.close();
    }
  }
  return lines.join("; ");
}

/** The benchmarks (BENCH_ARGS: bench/run.ts options; several separated by ";") into $OUT/bench-N.md. */
async function bench(): Promise<number> {
  const all =
    process.env.BENCH_ARGS ?? "--suite groupby --rows 1e7 --systems duckdb,basin-mem,basin-gpu --no-scan --runs 2";
  let n = 0;
  for (const one of all
    .split(";")
    .map((a) => a.trim())
    .filter((a) => a !== "")) {
    n++;
    log(`[${elapsed()}] bench ${n}: ${one}`);
    try {
      const section = await runBench({ ...parseOptions(one.split(/\s+/)), dataDir: join(out, "..", "bench-data") });
      writeFileSync(join(out, `bench-${n}.md`), section);
      log(section);
    } catch (e) {
      log(`bench ${n} failed: ${(e as Error).stack}`);
    }
    log(JSON.stringify(native().gpuStats()));
  }
  return 0;
}

const started = performance.now();
/** Seconds since the start, for the log. */
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;

async function main(): Promise<number> {
  const info = machineInfo();
  log(formatInfo(info));
  if (info.cuda.devices.length === 0) {
    log(`no GPU: ${info.cuda.note}`);
    return 1;
  }
  const results: { cases: unknown[]; checks: CheckOutcome[]; q1?: unknown; tier?: string } = { cases: [], checks: [] };
  let failed = 0;
  if (process.env.SUITE === "0") return bench();
  const gpu = new LocalCluster({ workers: 0, gpus: [0] });
  const cpu = new LocalCluster({ workers: Math.min(8, availableParallelism()), gpus: "none" });
  const trips = tripsFrame(20_000, 11);
  const special = specialFrame();
  for (const c of GPU_CASES) {
    const t0 = performance.now();
    try {
      const o = await runCase(c, gpu, cpu, trips, special);
      const ok = o.diff === null && (!c.onGpu || o.chains > 0);
      if (!ok) failed++;
      log(
        `[${elapsed()}] ${ok ? "PASS" : "FAIL"} ${c.name} (${o.chains} GPU chains, ${(performance.now() - t0).toFixed(0)} ms)${o.diff ? `: ${o.diff}` : ""}`,
      );
      results.cases.push({ ...o, ok });
    } catch (e) {
      failed++;
      log(`FAIL ${c.name}: ${(e as Error).message}`);
      results.cases.push({ name: c.name, ok: false, error: (e as Error).message });
    }
  }
  await gpu.close();
  const checks = [
    ...(await runFaultChecks(cpu)),
    await runProcessFaultCheck(cpu),
    await runSpillCheck(cpu),
    await runDeviceTierCheck(cpu),
    await runDeviceHomeCheck(cpu),
    await runProcessDeviceHomeCheck(cpu),
    await runStagedCopyCheck(cpu),
  ];
  for (const o of checks) {
    if (!o.ok) failed++;
    log(`[${elapsed()}] ${o.ok ? "PASS" : "FAIL"} ${o.name}: ${o.detail}`);
  }
  results.checks = checks;
  await cpu.close();

  // A tiny chain first so the GPU is set up before timing.
  await fromColumns({ a: [1] }).compute({ cluster: new LocalCluster({ workers: 0, gpus: [0] }) });
  // Q1_ROWS=0 leaves the bandwidth probe out (building its 1e8 JS strings takes a minute).
  const rows = Number(process.env.Q1_ROWS ?? 1e8);
  if (rows > 0) {
    const q1 = q1Bandwidth(rows);
    const dev = info.cuda.devices[0];
    const gbs = q1.bytes / q1.seconds / 1e9;
    results.q1 = { rows, ...q1, gbs, peakGBs: dev.bandwidthGBs, fraction: gbs / dev.bandwidthGBs };
    log(
      `q1 chain on ${rows} rows: ${(q1.seconds * 1000).toFixed(1)} ms, ${gbs.toFixed(0)} GB/s of ${dev.bandwidthGBs.toFixed(0)} GB/s peak (${((100 * gbs) / dev.bandwidthGBs).toFixed(1)}%)`,
    );
    log(`copies, pinned staging: the columns' upload ${q1.staged.upload}; every row's download ${q1.staged.download}`);
    log(`copies, pageable: the columns' upload ${q1.direct.upload}; every row's download ${q1.direct.download}`);
  }
  // TIER_ROWS=0 leaves the device tier probe out.
  const tierRows = Number(process.env.TIER_ROWS ?? 1e7);
  if (tierRows > 0) {
    results.tier = await tierProbe(tierRows);
    log(`[${elapsed()}] device tier, select+filter+sort of ${tierRows} rows: ${results.tier}`);
  }

  if (process.env.BENCH !== "0") await bench();
  // Last: the GPU is unusable in this process afterwards.
  const sticky = await runStickyFaultCheck();
  if (!sticky.ok) failed++;
  log(`${sticky.ok ? "PASS" : "FAIL"} ${sticky.name}: ${sticky.detail}`);
  results.checks.push(sticky);
  writeFileSync(join(out, "gpu-suite.json"), JSON.stringify(results, null, 2));
  log(`GPU suite: ${results.cases.length + results.checks.length - failed} passed, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    log(`device run failed: ${(e as Error).stack}`);
    process.exit(1);
  },
);
