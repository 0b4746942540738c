/**
 * Basin benchmark runner: db-benchmark groupby q1–q10 and join q1–q5 on Basin, DuckDB
 * and Polars, with cross-checked answers and one results table per suite.
 *
 * Usage: run.ts [--suite groupby|join|e2e|all] [--rows 1e7] [--k 100] [--questions q1,q2]
 *               [--systems basin,duckdb,polars] [--runs 2] [--no-scan]
 *               [--out BENCHMARKS.md] [--data-dir .bench-data] [--rss]
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { compareResults, type Row } from "./compare.js";
import type { Dataset } from "./data_file.js";
import type { Question } from "./questions.js";
import { PROCESS_SUITES, SUITES, type Suite } from "./suites.js";
import { collectResults } from "../engine/run/take.js";
import {
  fastestPeerLines,
  machineInfo,
  renderTable,
  totalRow,
  writeSection,
  type Outcome,
  type RatioSpec,
  type ResultRow,
} from "./report.js";
import {
  basinContender,
  basinMemoryContender,
  duckdbContender,
  polarsContender,
  type Answer,
  type Contender,
} from "./systems.js";

/** Parsed command-line options. */
export interface BenchOptions {
  /** The suites to run, in order. */
  suites: Suite[];
  rows: number;
  k: number;
  questions: string[];
  systems: string[];
  runs: number;
  scan: boolean;
  out: string | null;
  dataDir: string;
  /** Also measure each system's peak resident memory, one child process per system. */
  rss: boolean;
  /** Set in those children: run one system, skip the checks, print the peak RSS. */
  rssChild: boolean;
  /** A suite that runs its own way (PROCESS_SUITES), instead of `suites`. */
  own?: keyof typeof PROCESS_SUITES;
}

/** `basin-mem`/`basin-gpu`: Basin over persisted in-memory tables, on CPU workers / with GPU workers. */
const KNOWN_SYSTEMS = ["basin", "duckdb", "polars", "basin-mem", "basin-gpu"];
const DEFAULT_SYSTEMS = ["basin", "duckdb", "polars"];

function parseCount(name: string, s: string): number {
  const n = Number(s);
  if (!Number.isFinite(n) || n < 1 || !Number.isInteger(n))
    throw new Error(`--${name}: expected a positive integer, got "${s}"`);
  return n;
}

/** Parses argv (without node and script) into {@link BenchOptions}. */
export function parseOptions(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      suite: { type: "string", default: "all" },
      rows: { type: "string", default: "1e7" },
      k: { type: "string", default: "100" },
      questions: { type: "string" },
      systems: { type: "string", default: DEFAULT_SYSTEMS.join(",") },
      runs: { type: "string", default: "2" },
      "no-scan": { type: "boolean", default: false },
      out: { type: "string" },
      "data-dir": { type: "string", default: ".bench-data" },
      rss: { type: "boolean", default: false },
      "rss-child": { type: "boolean", default: false },
    },
  });
  const suiteNames = SUITES.map((s) => s.name);
  // A suite of its own (e2e) runs alone, the groupby questions its selection.
  const own = Object.hasOwn(PROCESS_SUITES, values.suite) ? (values.suite as keyof typeof PROCESS_SUITES) : undefined;
  if (own) values.suite = "groupby";
  if (values.suite !== "all" && !suiteNames.some((n) => n === values.suite)) {
    throw new Error(`--suite: unknown "${values.suite}" (known: ${suiteNames.join(",")},all)`);
  }
  const suites = SUITES.filter((s) => values.suite === "all" || s.name === values.suite);
  const allIds = [...new Set(suites.flatMap((s) => s.questions.map((q) => q.id)))];
  const questions = values.questions ? values.questions.split(",").map((s) => s.trim()) : allIds;
  for (const q of questions)
    if (!allIds.includes(q)) throw new Error(`--questions: unknown "${q}" (known: ${allIds.join(",")})`);
  const systems = values.systems.split(",").map((s) => s.trim());
  for (const s of systems)
    if (!KNOWN_SYSTEMS.includes(s)) throw new Error(`--systems: unknown "${s}" (known: ${KNOWN_SYSTEMS.join(",")})`);
  return {
    suites,
    rows: parseCount("rows", values.rows),
    k: parseCount("k", values.k),
    questions,
    systems,
    runs: parseCount("runs", values.runs),
    scan: !values["no-scan"],
    out: values.out ?? null,
    dataDir: values["data-dir"],
    rss: values.rss,
    rssChild: values["rss-child"],
    own,
  };
}

const log = (msg: string): void => void process.stderr.write(`[bench] ${msg}\n`);

function errorMessage(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split("\n")[0]!.slice(0, 200);
}

/** Times `fn` `runs` times; returns the first run's time (the measure the targets use), the best, and the last run's answer. */
async function timeRuns(
  runs: number,
  fn: () => Promise<Answer>,
): Promise<{ seconds: number; best: number; answer: Answer }> {
  let first = NaN,
    best = Infinity;
  let answer: Answer | null = null;
  for (let i = 0; i < runs; i++) {
    answer = null; // the previous run's answer is not kept alive during the next
    // Untimed: the garbage of earlier runs and checks (a Basin answer's sample decodes
    // ~1e8 JS values) is collected now, not in the middle of the next system's run.
    await collectResults();
    const t0 = performance.now();
    answer = await fn();
    const s = (performance.now() - t0) / 1000;
    if (i === 0) first = s;
    best = Math.min(best, s);
  }
  return { seconds: first, best, answer: answer! };
}

/** At most this many rows per answer are compared; larger answers are sampled at a stride. */
const CHECK_ROWS = 200_000;

async function buildContenders(opts: BenchOptions, data: Dataset): Promise<Contender[]> {
  const out: Contender[] = [];
  if (opts.systems.includes("duckdb")) {
    out.push(await duckdbContender(data, true));
    if (opts.scan) out.push(await duckdbContender(data, false));
  }
  if (opts.systems.includes("polars")) {
    out.push(polarsContender(data, true));
    if (opts.scan) out.push(polarsContender(data, false));
  }
  if (opts.systems.includes("basin")) out.push(basinContender(data));
  if (opts.systems.includes("basin-mem")) out.push(basinMemoryContender(data, "basin-mem", { gpus: "none" }));
  if (opts.systems.includes("basin-gpu")) out.push(basinMemoryContender(data, "basin-gpu", { gpus: "all" }));
  return out;
}

/**
 * What the check keeps of an answer: its row count and an aligned sample of its rows
 * (sorted by the keys, then the other columns by name; every stride-th row), taken
 * as soon as the system answers so no system's whole answer outlives its own run.
 */
interface Sample {
  numRows: number;
  rows: Row[] | null;
  /** Why the rows could not be read. */
  error?: string;
}

async function sampleAnswer(q: Question, a: Answer): Promise<Sample> {
  const stride = Math.max(1, Math.ceil(a.numRows / CHECK_ROWS));
  const order = [...q.keys, ...a.columns.filter((c) => !q.keys.includes(c)).sort()];
  try {
    return { numRows: a.numRows, rows: await a.rows(order, stride) };
  } catch (e) {
    return { numRows: a.numRows, rows: null, error: `could not read answer: ${errorMessage(e)}` };
  }
}

/** Runs one question on every contender and cross-checks against the first one that answered. */
async function runQuestion(q: Question, contenders: Contender[], runs: number, check = true): Promise<ResultRow> {
  const outcomes = new Map<string, Outcome>();
  const samples = new Map<string, Sample>();
  for (const c of contenders) {
    if (!c.supports(q)) {
      outcomes.set(c.name, { kind: "unsupported" });
      continue;
    }
    try {
      const { seconds, best, answer } = await timeRuns(runs, () => c.run(q));
      outcomes.set(c.name, { kind: "time", seconds, best });
      log(`${q.id} ${c.name}: ${seconds.toFixed(3)} s${runs > 1 ? ` (best ${best.toFixed(3)} s)` : ""}`);
      if (check) samples.set(c.name, await sampleAnswer(q, answer));
    } catch (e) {
      outcomes.set(c.name, { kind: "error", message: errorMessage(e) });
      log(`${q.id} ${c.name}: error: ${errorMessage(e)}`);
    }
  }
  return {
    label: q.id,
    description: q.description,
    outcomes,
    check: check ? verdict(q, contenders, outcomes, samples) : "-",
  };
}

/** Cross-checks every sample against the first contender that answered (DuckDB when it ran). */
function verdict(
  q: Question,
  contenders: Contender[],
  outcomes: Map<string, Outcome>,
  samples: Map<string, Sample>,
): string {
  const ref = contenders.find((c) => samples.has(c.name));
  const refSample = ref && samples.get(ref.name)!;
  if (ref && refSample!.rows === null) return `${ref.name}: ${refSample!.error}; unchecked`;
  const notes: string[] = [];
  for (const c of contenders) {
    const o = outcomes.get(c.name)!;
    if (o.kind === "unsupported") notes.push(`${c.name}: not supported`);
    else if (o.kind === "error") notes.push(`${c.name}: error: ${o.message}`);
    else if (refSample && c !== ref) {
      const s = samples.get(c.name)!;
      const diff =
        s.numRows !== refSample.numRows
          ? `row count ${s.numRows}, expected ${refSample.numRows}`
          : s.rows === null
            ? s.error!
            : compareResults(refSample.rows!, s.rows, q.keys);
      if (diff) notes.push(`${c.name}: MISMATCH vs ${ref!.name}: ${diff}`);
    }
  }
  const stride = refSample ? Math.ceil(refSample.numRows / CHECK_ROWS) : 1;
  if (stride > 1 && samples.size > 1) notes.push(`checked every ${stride}th row`);
  if (samples.size < 2) notes.push("unchecked (fewer than two answers)");
  return notes.length === 0 || notes.every((n) => n.startsWith("checked every"))
    ? ["ok", ...notes].join("; ")
    : notes.join("; ");
}

async function loadRow(contenders: Contender[]): Promise<ResultRow> {
  const outcomes = new Map<string, Outcome>();
  const notes: string[] = [];
  for (const c of contenders) {
    if (!c.load) continue;
    try {
      const t0 = performance.now();
      await c.load();
      const seconds = (performance.now() - t0) / 1000;
      outcomes.set(c.name, { kind: "time", seconds });
      log(`load ${c.name}: ${seconds.toFixed(3)} s`);
    } catch (e) {
      outcomes.set(c.name, { kind: "error", message: errorMessage(e) });
      notes.push(`${c.name}: error: ${errorMessage(e)}`);
    }
  }
  return { label: "load csv", description: "", outcomes, check: notes.length ? notes.join("; ") : "-" };
}

/**
 * Ratio columns: Basin (which scans per query) against the scan variants; in-memory
 * Basin (basin-mem, basin-gpu) against the in-memory tables; load against loads.
 */
function ratioSpecs(names: string[]): RatioSpec[] {
  const peers = ["duckdb", "polars"];
  const out: RatioSpec[] = [];
  if (names.includes("basin"))
    for (const s of peers.filter((s) => names.includes(s) || names.includes(`${s}+scan`)))
      out.push({ header: `basin/${s}`, numerator: "basin", denominators: [`${s}+scan`, s], loadDenominators: [s] });
  for (const b of ["basin-mem", "basin-gpu"].filter((b) => names.includes(b)))
    for (const s of peers.filter((s) => names.includes(s)))
      out.push({ header: `${b}/${s}`, numerator: b, denominators: [s], loadDenominators: [s] });
  return out;
}

/** Runs one suite; returns its rendered section (title, notes, table). */
async function runSuite(suite: Suite, opts: BenchOptions): Promise<string> {
  const params = { rows: opts.rows, k: opts.k, dataDir: opts.dataDir, log };
  const data = await suite.data(params);
  log(`${data.reused ? "reusing" : "generated"} ${data.tables.map((t) => t.path).join(", ")}`);
  const contenders = await buildContenders(opts, data);
  const names = contenders.map((c) => c.name);
  const rows: ResultRow[] = [await loadRow(contenders)];
  for (const q of suite.questions) {
    if (opts.questions.includes(q.id)) rows.push(await runQuestion(q, contenders, opts.runs, !opts.rssChild));
  }
  const questionRows = rows.slice(1);
  rows.push(totalRow(questionRows, names));
  if (opts.runs > 1) rows.push(totalRow(questionRows, names, `best of ${opts.runs}`));
  for (const c of contenders) c.close?.();
  const specs = ratioSpecs(names);
  const table = renderTable(rows, names, specs);
  const title =
    `### ${suite.name} ${data.name} (${suite.describe(params)}), first runs` +
    `${opts.runs > 1 ? ` (and the total of the best of ${opts.runs})` : ""}, ${new Date().toISOString().slice(0, 10)}`;
  const notes =
    `Machine: ${machineInfo()}.\n` +
    "Times in seconds. `duckdb`/`polars` query in-memory tables loaded once (load timed in `load csv`); " +
    "`+scan` variants and `basin` read the CSVs in every query. Ratios: basin ÷ the `+scan` variant " +
    "(÷ the in-memory load for `load csv`); `basin-mem`/`basin-gpu` (tables persisted once) ÷ the in-memory " +
    "tables, their load ÷ the in-memory loads; below 1x means Basin is faster. n/s = not supported.";
  const rss = opts.rss ? `\n${renderRss(suite, opts, peakRss(suite, opts))}\n` : "";
  const peers = fastestPeerLines(questionRows, specs);
  const section = `${title}\n\n${notes}\n\n${table}\n${peers ? `\n${peers}\n` : ""}${rss}`;
  if (opts.out) {
    writeSection(opts.out, data.name, section);
    log(`wrote section ${data.name} to ${opts.out}`);
  }
  return section;
}

/** The line an `--rss-child` run ends its stdout with. */
const RSS_MARK = "BENCH_PEAK_RSS_KB ";

/**
 * Peak resident memory (KiB) of each selected system running the suite's load and
 * questions once, each in a fresh child process (DuckDB, Polars and Basin's worker
 * threads all live inside the process, so its peak RSS is the whole system's). The children skip the answer checks (which pull answers into JS
 * rows) and the `+scan` variants; the node runtime (~50 MB) is in every number.
 */
function peakRss(suite: Suite, opts: BenchOptions): Map<string, number | string> {
  const out = new Map<string, number | string>();
  for (const system of opts.systems) {
    const args = [
      ...process.execArgv,
      process.argv[1]!,
      "--suite",
      suite.name,
      "--rows",
      String(opts.rows),
      "--k",
      String(opts.k),
      "--questions",
      opts.questions.join(","),
      "--systems",
      system,
      "--runs",
      "1",
      "--no-scan",
      "--data-dir",
      opts.dataDir,
      "--rss-child",
    ];
    log(`peak RSS: ${system} in a child process`);
    const r = spawnSync(process.execPath, args, {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
      maxBuffer: 64 << 20,
    });
    const line = r.stdout?.split("\n").find((l) => l.startsWith(RSS_MARK));
    if (r.status === 0 && line) {
      out.set(system, Number(line.slice(RSS_MARK.length)));
      log(`peak RSS ${system}: ${(Number(line.slice(RSS_MARK.length)) / 1024).toFixed(0)} MiB`);
    } else out.set(system, `error (exit ${r.status ?? r.signal})`);
  }
  return out;
}

/**
 * This process's peak resident set in KiB: VmHWM, the high-water mark of the memory
 * image exec() gave it. (`resourceUsage().maxRSS` would not do: Linux carries the
 * parent's peak into a child across fork and exec, so every child would report at
 * least the parent's RSS.) Elsewhere, maxRSS.
 */
function peakRssKb(): number {
  try {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync("/proc/self/status", "utf8"));
    if (m) return Number(m[1]);
  } catch {
    // not Linux
  }
  return process.resourceUsage().maxRSS;
}

/** The peak-RSS table: MiB per system and each Basin system's ratio to DuckDB's. */
function renderRss(suite: Suite, opts: BenchOptions, rss: Map<string, number | string>): string {
  const duck = rss.get("duckdb");
  const lines = [
    `Peak resident memory of each system's ${suite.name} run (load + every selected question once, ` +
      "one fresh process per system, checks skipped; the child's VmHWM; " +
      "`duckdb`/`polars` = their in-memory tables, `basin` scans per query, `basin-mem` persists):",
    "",
    "| system | peak RSS MiB | ÷ duckdb |",
    "|---|---:|---:|",
  ];
  for (const s of opts.systems) {
    const v = rss.get(s);
    const mib = typeof v === "number" ? (v / 1024).toFixed(0) : String(v);
    const ratio = typeof v === "number" && typeof duck === "number" ? `${(v / duck).toFixed(2)}x` : "";
    lines.push(`| ${s} | ${mib} | ${ratio} |`);
  }
  return lines.join("\n");
}

/** Runs the selected suites; returns their rendered sections. */
export async function runBench(opts: BenchOptions): Promise<string> {
  if (opts.own) {
    const text = await PROCESS_SUITES[opts.own]({ ...opts, log });
    if (opts.out) writeSection(opts.out, `e2e_${opts.rows}`, text);
    return text;
  }
  const sections: string[] = [];
  for (const suite of opts.suites) {
    if (suite.questions.some((q) => opts.questions.includes(q.id))) sections.push(await runSuite(suite, opts));
    else log(`${suite.name}: no selected questions, skipped`);
  }
  if (opts.rssChild) sections.push(`${RSS_MARK}${peakRssKb()}`);
  return sections.join("\n");
}
