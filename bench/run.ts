/**
 * Basin benchmark runner: db-benchmark groupby q1–q10 and join q1–q5, and TPC-H's 22
 * queries, on Basin, DuckDB and Polars, with cross-checked answers and one results
 * table per suite.
 *
 * Usage: run.ts [--suite groupby|join|tpch|e2e|all] [--rows 1e7] [--k 100] [--sf 1]
 *               [--questions q1,q2] [--systems basin,duckdb,polars] [--runs 2] [--no-scan]
 *               [--out BENCHMARKS.md] [--data-dir .bench-data] [--rss]
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { compareDigests, ROW_LIMITS, strideFor, type Digest, type RowLimits } from "./digest.js";
import type { Dataset } from "./data_file.js";
import type { Question } from "./questions.js";
import { PROCESS_SUITES, SUITES, type Suite } from "./suites.js";
import { parquetRowDiff } from "./row_check.js";
import type { RunTracer } from "./run_trace.js";
import { native } from "../engine/native/addon.js";
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
  /** TPC-H scale factor. */
  sf: number;
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
  /** The GPU contenders' device memory limit ("4GB", a fraction of the card), to measure spilling. */
  deviceMemoryLimit?: string;
  /** The GPU contenders copy straight from pageable memory, without pinned staging (to compare). */
  deviceDirectCopies?: boolean;
  /** `--device-results-to-host`: GPU outputs come to the host at once (no device tier). */
  deviceResultsToHost?: boolean;
}

/**
 * `basin-mem`/`basin-gpu`: Basin over persisted in-memory tables, on CPU workers / on the
 * GPU workers alone (issue 16 measures the GPU doing the work: the CPU workers only
 * parse the files of the load, `cpuTasks: "reads"`); `basin-proc`/`basin-gpu-proc`: the
 * same with those workers as processes.
 */
const KNOWN_SYSTEMS = ["basin", "duckdb", "polars", "basin-mem", "basin-gpu", "basin-proc", "basin-gpu-proc"];
const IN_MEMORY_BASINS = ["basin-mem", "basin-gpu", "basin-proc", "basin-gpu-proc"];
const DEFAULT_SYSTEMS = ["basin", "duckdb", "polars"];

function parseCount(name: string, s: string): number {
  const n = Number(s);
  if (!Number.isFinite(n) || n < 1 || !Number.isInteger(n))
    throw new Error(`--${name}: expected a positive integer, got "${s}"`);
  return n;
}

function parseScale(s: string): number {
  const n = Number(s);
  if (!(n > 0) || !Number.isFinite(n)) throw new Error(`--sf: expected a positive scale factor, got "${s}"`);
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
      sf: { type: "string", default: "1" },
      questions: { type: "string" },
      systems: { type: "string", default: DEFAULT_SYSTEMS.join(",") },
      runs: { type: "string", default: "2" },
      "no-scan": { type: "boolean", default: false },
      out: { type: "string" },
      "data-dir": { type: "string", default: ".bench-data" },
      rss: { type: "boolean", default: false },
      "rss-child": { type: "boolean", default: false },
      "device-memory-limit": { type: "string" },
      "device-direct-copies": { type: "boolean" },
      "device-results-to-host": { type: "boolean" },
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
    sf: parseScale(values.sf),
    questions,
    systems,
    runs: parseCount("runs", values.runs),
    scan: !values["no-scan"],
    out: values.out ?? null,
    dataDir: values["data-dir"],
    rss: values.rss,
    rssChild: values["rss-child"],
    own,
    ...(values["device-memory-limit"] ? { deviceMemoryLimit: values["device-memory-limit"] } : {}),
    ...(values["device-direct-copies"] ? { deviceDirectCopies: true } : {}),
    ...(values["device-results-to-host"] ? { deviceResultsToHost: true } : {}),
  };
}

/** Progress on stderr, with the seconds since the process started (where a long run's time went). */
const log = (msg: string): void => void process.stderr.write(`[bench ${process.uptime().toFixed(1)}s] ${msg}\n`);

function errorMessage(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split("\n")[0]!.slice(0, 200);
}

/**
 * Times `fn` `runs` times; returns the first run's time (the measure the targets use),
 * the best, and the first run's answer digested by `check` (untimed, before the next
 * run): the answer checked is the one that was timed.
 */
async function timeRuns(
  runs: number,
  fn: () => Promise<Answer>,
  check: ((a: Answer) => Promise<Checked>) | null,
  tracer?: RunTracer,
): Promise<{ seconds: number; best: number; checked: Checked | null; trace: string }> {
  let first = NaN,
    best = Infinity;
  let checked: Checked | null = null;
  let trace = "";
  for (let i = 0; i < runs; i++) {
    // Untimed: the garbage of earlier runs and checks is collected now, not in the
    // middle of the next system's run.
    await collectResults();
    if (i === 0) await tracer?.start();
    const t0 = performance.now();
    const answer = await fn();
    const s = (performance.now() - t0) / 1000;
    if (i === 0) {
      first = s;
      trace = (await tracer?.end()) ?? "";
      if (check) checked = await check(answer);
    }
    best = Math.min(best, s);
  }
  return { seconds: first, best, checked, trace };
}

/**
 * The contenders in the order they run: DuckDB first (its answers are the reference),
 * Polars last and its file scans before its in-memory tables. At TPC-H SF 10 the
 * memory nodejs-polars held after its in-memory run was not given back in time: its
 * q09 from Parquet then ran out of the machine's 24 GiB (alone it peaks at 6 GB), and
 * a system after it would have run short too.
 */
async function buildContenders(opts: BenchOptions, data: Dataset): Promise<Contender[]> {
  const out: Contender[] = [];
  if (opts.systems.includes("duckdb")) {
    out.push(await duckdbContender(data, true));
    if (opts.scan) out.push(await duckdbContender(data, false));
  }
  if (opts.systems.includes("basin")) out.push(basinContender(data));
  if (opts.systems.includes("basin-mem")) out.push(basinMemoryContender(data, "basin-mem", { gpus: "none" }));
  // The GPU contenders: the GPU alone runs the queries (the CPU workers parse the files).
  const gpu = {
    gpus: "all",
    cpuTasks: "reads",
    ...(opts.deviceMemoryLimit ? { deviceMemoryLimit: opts.deviceMemoryLimit } : {}),
    ...(opts.deviceDirectCopies ? { deviceStagedCopies: false } : {}),
    ...(opts.deviceResultsToHost ? { deviceKeepResults: false } : {}),
  } as const;
  if (opts.systems.includes("basin-gpu")) out.push(basinMemoryContender(data, "basin-gpu", gpu));
  if (opts.systems.includes("basin-proc"))
    out.push(basinMemoryContender(data, "basin-proc", { gpus: "none", workerProcesses: "all" }));
  if (opts.systems.includes("basin-gpu-proc"))
    out.push(basinMemoryContender(data, "basin-gpu-proc", { ...gpu, workerProcesses: "gpu" }));
  if (opts.systems.includes("polars")) {
    if (opts.scan) out.push(polarsContender(data, false));
    out.push(polarsContender(data, true));
  }
  return out;
}

/**
 * What the check keeps of the timed answer: its digest (and, where every row is to be
 * compared, the answer as a Parquet file), or why it could not be read.
 */
type Checked = { digest: Digest; parquet?: string } | { error: string };

/** The order the check sorts an answer by: the question's keys, then the other columns by name. */
function checkOrder(q: Question, columns: readonly string[]): string[] {
  return [...q.keys, ...columns.filter((c) => !q.keys.includes(c)).sort()];
}

/** One contender's runs of one question: its outcome, and the timed answer's check when checked. */
async function runOne(
  qc: QuestionCheck,
  c: Contender,
  runs: number,
  check: boolean,
): Promise<{ outcome: Outcome; checked?: Checked }> {
  const q = qc.q;
  if (!c.supports(q)) return { outcome: { kind: "unsupported" } };
  try {
    const digest = check ? (a: Answer) => qc.prepare(c.name, a) : null;
    const { seconds, best, checked, trace } = await timeRuns(runs, () => c.run(q), digest, c.tracer);
    log(`${q.id} ${c.name}: ${seconds.toFixed(3)} s${runs > 1 ? ` (best ${best.toFixed(3)} s)` : ""}`);
    if (trace) log(`${q.id} ${c.name} first run: ${trace}`);
    return { outcome: { kind: "time", seconds, best }, ...(checked ? { checked } : {}) };
  } catch (e) {
    log(`${q.id} ${c.name}: error: ${errorMessage(e)}`);
    return { outcome: { kind: "error", message: errorMessage(e) } };
  }
}

/**
 * One question's outcomes and check. The first contender whose answer was digested is
 * the reference (DuckDB when it ran); every later digest is compared with it as it
 * arrives and dropped, so only the reference's stays in memory.
 */
class QuestionCheck {
  readonly outcomes = new Map<string, Outcome>();
  private ref: { name: string; checked: Checked } | null = null;
  /** The reference's answer as Parquet, when it is too large to compare in full here (see row_check.ts). */
  private refParquet: string | null = null;
  private dir: string | null = null;
  private readonly problems = new Map<string, string>();
  /** Contenders whose every row was compared with the reference's, and those compared by a sample of rows. */
  private readonly everyRow: string[] = [];
  private readonly sampled: string[] = [];
  private answered = 0;

  constructor(
    readonly q: Question,
    private readonly rtol: number,
    private readonly limits: RowLimits,
  ) {}

  /**
   * Right after the timed run, untimed: digests answer `a` and, where every row is to be
   * compared, writes it as Parquet (an answer that would be sampled, from a system that
   * can write it: the reference's when it is the first, another's when the reference's
   * was written); then lets the answer go, so that later runs do not carry it.
   */
  async prepare(name: string, a: Answer): Promise<Checked> {
    try {
      const sampled = strideFor(a.numRows, this.limits) > 1;
      const reference = this.ref === null;
      const everyRow = !reference && this.refParquet !== null && sampled && a.writeParquet !== undefined;
      let checked: Checked;
      try {
        checked = {
          digest: await a.digest(checkOrder(this.q, a.columns), everyRow ? 0 : strideFor(a.numRows, this.limits)),
        };
      } catch (e) {
        return { error: `could not read answer: ${errorMessage(e)}` };
      }
      if ((everyRow || (reference && sampled)) && a.writeParquet) {
        const parquet = await this.written(a, `${reference ? "reference" : "answer"}-${safeName(name)}`);
        if (parquet) checked.parquet = parquet;
        else if (everyRow) return { error: "could not write the answer for the every-row check" };
      }
      return checked;
    } finally {
      await a.release?.();
    }
  }

  add(name: string, outcome: Outcome, checked?: Checked): Promise<void> | void {
    this.outcomes.set(name, outcome);
    if (!checked) return;
    this.answered++;
    if (!this.ref) {
      this.ref = { name, checked };
      if ("digest" in checked && checked.parquet) this.refParquet = checked.parquet;
      return;
    }
    return this.compare(name, checked);
  }

  private async compare(name: string, checked: Checked): Promise<void> {
    if (!this.ref || !("digest" in this.ref.checked)) return;
    const ref = this.ref.checked.digest;
    let diff = "error" in checked ? checked.error : compareDigests(ref, checked.digest, this.q.keys, this.rtol);
    if ("digest" in checked && checked.digest.stride === 0) {
      if (!diff) diff = await this.compareEveryRow(checked.parquet!, ref);
      this.everyRow.push(name);
    } else if ("digest" in checked && checked.digest.stride > 1) this.sampled.push(name);
    if ("digest" in checked && checked.parquet) rmSync(checked.parquet, { force: true });
    if (diff) this.problems.set(name, `MISMATCH vs ${this.ref.name}: ${diff}`);
  }

  /** `answer` as a Parquet file in this question's temporary folder; its path, or null when it could not be written. */
  private async written(answer: Answer, name: string): Promise<string | null> {
    this.dir ??= mkdtempSync(join(tmpdir(), "basin-bench-check-"));
    const path = join(this.dir, `${name}.parquet`);
    try {
      await answer.writeParquet!(path);
      return path;
    } catch (e) {
      log(`${this.q.id}: could not write ${name} for the every-row check: ${errorMessage(e)}`);
      return null;
    }
  }

  /** Every row of the answer in `path` against the reference's (see row_check.ts). */
  private async compareEveryRow(path: string, ref: Digest): Promise<string | null> {
    try {
      const order = checkOrder(
        this.q,
        ref.columns.map((c) => c.name),
      );
      return await parquetRowDiff(this.refParquet!, path, ref.columns, order, this.q.keys, this.rtol);
    } catch (e) {
      return `could not compare every row: ${errorMessage(e)}`;
    }
  }

  /** Removes the reference's Parquet file (the question is done). */
  finish(): void {
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = this.refParquet = null;
  }

  /** The check column: `ok`, or every contender's problem. */
  verdict(contenders: readonly Contender[]): string {
    const ref = this.ref;
    if (ref && "error" in ref.checked) return `${ref.name}: ${ref.checked.error}; unchecked`;
    const notes: string[] = [];
    for (const c of contenders) {
      const o = this.outcomes.get(c.name);
      if (o?.kind === "unsupported") notes.push(`${c.name}: not supported`);
      else if (o?.kind === "error") notes.push(`${c.name}: error: ${o.message}`);
      else if (this.problems.has(c.name)) notes.push(`${c.name}: ${this.problems.get(c.name)!}`);
    }
    const problems = notes.length;
    const stride = ref && "digest" in ref.checked ? ref.checked.digest.stride : 1;
    if (this.everyRow.length > 0 && ref)
      notes.push(`every row of ${this.everyRow.join(", ")} compared with ${ref.name}'s`);
    if (this.sampled.length > 0)
      notes.push(
        `column statistics of all rows checked, the rows themselves every ${stride}th` +
          (this.everyRow.length > 0 ? ` (${this.sampled.join(", ")})` : ""),
      );
    if (this.answered < 2) return [...notes, "unchecked (fewer than two answers)"].join("; ");
    return problems === 0 ? ["ok", ...notes].join("; ") : notes.join("; ");
  }

  row(contenders: readonly Contender[], check: boolean): ResultRow {
    return {
      label: this.q.id,
      description: this.q.description,
      outcomes: this.outcomes,
      check: check ? this.verdict(contenders) : "-",
    };
  }
}

/**
 * Runs one question on every contender and cross-checks their timed answers against
 * the first contender's that answered (DuckDB when it ran). Numbers agree within
 * `rtol` relative; `limits` say how many rows are compared one by one.
 */
export async function runQuestion(
  q: Question,
  contenders: Contender[],
  runs: number,
  check = true,
  rtol = 1e-6,
  limits: RowLimits = ROW_LIMITS,
): Promise<ResultRow> {
  const qc = new QuestionCheck(q, rtol, limits);
  try {
    for (const c of contenders) {
      const r = await runOne(qc, c, runs, check);
      await qc.add(c.name, r.outcome, r.checked);
    }
  } finally {
    qc.finish();
  }
  return qc.row(contenders, check);
}

/** Times a contender's load into `row`. */
async function loadOne(c: Contender, row: ResultRow): Promise<void> {
  if (!c.load) return;
  try {
    await collectResults();
    await c.tracer?.start();
    const t0 = performance.now();
    const reported = await c.load();
    const seconds = reported ?? (performance.now() - t0) / 1000;
    row.outcomes.set(c.name, { kind: "time", seconds });
    log(`load ${c.name}: ${seconds.toFixed(3)} s`);
    const trace = (await c.tracer?.end()) ?? "";
    if (trace) log(`load ${c.name}: ${trace}`);
    // Untimed: what the load freed goes back to the system, as an engine left idle
    // after a run gives it back (LocalCluster's idle release) before the next query.
    native().releaseFreeMemory();
  } catch (e) {
    row.outcomes.set(c.name, { kind: "error", message: errorMessage(e) });
    row.check = `${row.check === "-" ? "" : `${row.check}; `}${c.name}: error: ${errorMessage(e)}`;
  }
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
  for (const b of IN_MEMORY_BASINS.filter((b) => names.includes(b)))
    for (const s of peers.filter((s) => names.includes(s)))
      out.push({ header: `${b}/${s}`, numerator: b, denominators: [s], loadDenominators: [s] });
  return out;
}

/** A contender's name as part of a file name. */
function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, "_");
}

/** Runs one suite; returns its rendered section (title, notes, table). */
async function runSuite(suite: Suite, opts: BenchOptions): Promise<string> {
  const params = { rows: opts.rows, k: opts.k, sf: opts.sf, dataDir: opts.dataDir, log };
  const data = await suite.data(params);
  log(`${data.reused ? "reusing" : "generated"} ${data.tables.map((t) => t.path).join(", ")}`);
  const contenders = await buildContenders(opts, data);
  const names = contenders.map((c) => c.name);
  const format = data.tables[0]?.format ?? "csv";
  const load: ResultRow = { label: `load ${format}`, description: "", outcomes: new Map(), check: "-" };
  const checks = suite.questions
    .filter((q) => opts.questions.includes(q.id))
    .map((q) => new QuestionCheck(q, suite.rtol ?? 1e-6, ROW_LIMITS));
  // One system at a time: it loads, answers every question, and frees its tables before
  // the next one loads (at TPC-H SF 10 every system's tables at once would not fit).
  try {
    for (const c of contenders) {
      await loadOne(c, load);
      for (const qc of checks) {
        const r = await runOne(qc, c, opts.runs, !opts.rssChild);
        await qc.add(c.name, r.outcome, r.checked);
      }
      await c.close?.();
      // The next system starts from the memory this one freed, given back to the system.
      await collectResults();
      native().releaseFreeMemory();
    }
  } finally {
    for (const qc of checks) qc.finish();
  }
  const questionRows = checks.map((qc) => qc.row(contenders, !opts.rssChild));
  const rows: ResultRow[] = [load, ...questionRows, totalRow(questionRows, names)];
  if (opts.runs > 1) rows.push(totalRow(questionRows, names, `best of ${opts.runs}`));
  const specs = ratioSpecs(names);
  const table = renderTable(rows, names, specs);
  const title =
    `### ${suite.name} ${data.name} (${suite.describe(params)}), first runs` +
    `${opts.runs > 1 ? ` (and the total of the best of ${opts.runs})` : ""}, ${new Date().toISOString().slice(0, 10)}`;
  const notes =
    `Machine: ${machineInfo()}.\n` +
    `Times in seconds of each question's first run; the answer checked is that run's. ` +
    `\`duckdb\`/\`polars\` query in-memory tables loaded once (load timed in \`load ${format}\`; Basin's load ` +
    `reads and keeps every table too); \`+scan\` variants and \`basin\` read the ${format === "csv" ? "CSVs" : "Parquet files"} in every query ` +
    `(Basin's remembered CSV block boundaries are cleared before each). Ratios: basin ÷ the \`+scan\` variant ` +
    `(÷ the in-memory load for \`load ${format}\`); \`basin-mem\`/\`basin-gpu\` (tables persisted once) ÷ the in-memory ` +
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
      "--sf",
      String(opts.sf),
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
 * image exec() gave it, plus its live child processes' (Basin's worker processes, an
 * upper bound: their peaks need not coincide). (`resourceUsage().maxRSS` would not do:
 * Linux carries the parent's peak into a child across fork and exec, so every child
 * would report at least the parent's RSS.) Elsewhere, maxRSS.
 */
function peakRssKb(): number {
  const hwm = (pid: string) => {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : 0;
  };
  try {
    let kb = hwm("self");
    for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p)))
      try {
        const ppid = /^PPid:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
        if (Number(ppid) === process.pid) kb += hwm(pid);
      } catch {
        // gone meanwhile
      }
    if (kb > 0) return kb;
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
      "one fresh process per system, checks skipped; the child's VmHWM, plus its worker processes' for `-proc` systems; " +
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
