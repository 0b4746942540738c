/**
 * Formatting of benchmark results: an aligned Markdown table (readable on a terminal
 * and pasteable into BENCHMARKS.md) and replacement of a marked section in a file.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem, platform, release } from "node:os";

/** What happened when one contender ran one row of the table. */
export type Outcome =
  /** `seconds`: the first run; `best`: the fastest of the runs (when there were several). */
  | { kind: "time"; seconds: number; best?: number }
  | { kind: "unsupported" }
  | { kind: "error"; message: string }
  | { kind: "skipped" };

/** One row of the results table. */
export interface ResultRow {
  /** Row label: `load csv` (or `load parquet`), `q1`, ... */
  label: string;
  description: string;
  /** Outcome per contender name. */
  outcomes: Map<string, Outcome>;
  /** The cross-check verdict. */
  check: string;
}

/** A ratio column: `numerator` time divided by the first available of `denominators`. */
export interface RatioSpec {
  header: string;
  numerator: string;
  /** Candidate denominators, in preference order, for question rows. */
  denominators: string[];
  /** Candidate denominators for the `load …` row. */
  loadDenominators: string[];
}

function cell(o: Outcome | undefined): string {
  if (!o || o.kind === "skipped") return "";
  if (o.kind === "time") return o.seconds.toFixed(3);
  if (o.kind === "unsupported") return "n/s";
  return "error";
}

function ratio(row: ResultRow, spec: RatioSpec): string {
  const num = row.outcomes.get(spec.numerator);
  const dens = row.label.startsWith("load ") ? spec.loadDenominators : spec.denominators;
  const denName = dens.find((d) => row.outcomes.get(d)?.kind === "time");
  const den = denName ? row.outcomes.get(denName) : undefined;
  if (num?.kind !== "time" || den?.kind !== "time" || den.seconds <= 0) return "";
  return `${(num.seconds / den.seconds).toFixed(2)}x`;
}

/** Renders rows as an aligned Markdown table; long check messages are truncated. */
export function renderTable(
  rows: readonly ResultRow[],
  contenders: readonly string[],
  ratios: readonly RatioSpec[],
): string {
  const header = ["question", ...contenders.map((c) => `${c} s`), ...ratios.map((r) => r.header), "check"];
  const body = rows.map((r) => [
    r.description ? `${r.label} ${r.description}` : r.label,
    ...contenders.map((c) => cell(r.outcomes.get(c))),
    ...ratios.map((s) => ratio(r, s)),
    r.check.length > 140 ? r.check.slice(0, 137) + "..." : r.check,
  ]);
  const all = [header, ...body];
  const widths = header.map((_, i) => Math.max(...all.map((line) => line[i]!.length)));
  const numeric = header.map((_, i) => i > 0 && i < header.length - 1);
  const fmt = (line: string[]): string =>
    "| " + line.map((s, i) => (numeric[i] ? s.padStart(widths[i]!) : s.padEnd(widths[i]!))).join(" | ") + " |";
  const sep = "|" + widths.map((w, i) => (numeric[i] ? "-".repeat(w + 1) + ":" : "-".repeat(w + 2))).join("|") + "|";
  return [fmt(header), sep, ...body.map(fmt)].join("\n");
}

/**
 * Sums the question rows per contender (their first runs, or with `best` their best
 * runs); a contender with any non-timed question gets no total.
 */
export function totalRow(questions: readonly ResultRow[], contenders: readonly string[], best?: string): ResultRow {
  const outcomes = new Map<string, Outcome>();
  const time = (o: Outcome | undefined): number =>
    o?.kind === "time" ? (best ? (o.best ?? o.seconds) : o.seconds) : 0;
  for (const c of contenders) {
    const times = questions.map((r) => r.outcomes.get(c));
    if (times.length && times.every((o) => o?.kind === "time")) {
      outcomes.set(c, { kind: "time", seconds: times.reduce((s, o) => s + time(o), 0) });
    }
  }
  return {
    label: best ? `total, ${best}` : "total",
    description: "",
    outcomes,
    check: "only systems that ran every question",
  };
}

/**
 * One line per Basin column: its largest ratio to the fastest of its peers (the
 * denominators of its ratio columns) over the questions, and where — the
 * "every question within 2x of the fastest peer" target.
 */
export function fastestPeerLines(questions: readonly ResultRow[], specs: readonly RatioSpec[]): string {
  const lines: string[] = [];
  for (const numerator of [...new Set(specs.map((s) => s.numerator))]) {
    const peers = specs.filter((s) => s.numerator === numerator).map((s) => s.denominators[0]!);
    let worst: { ratio: number; label: string; peer: string } | undefined;
    for (const r of questions) {
      const num = r.outcomes.get(numerator);
      const times = peers.flatMap((p) => {
        const o = r.outcomes.get(p);
        return o?.kind === "time" && o.seconds > 0 ? [{ peer: p, seconds: o.seconds }] : [];
      });
      if (num?.kind !== "time" || times.length === 0) continue;
      const fastest = times.reduce((a, b) => (b.seconds < a.seconds ? b : a));
      const ratio = num.seconds / fastest.seconds;
      if (!worst || ratio > worst.ratio) worst = { ratio, label: r.label, peer: fastest.peer };
    }
    if (worst)
      lines.push(
        `- \`${numerator}\` against the fastest of ${peers.map((p) => `\`${p}\``).join(", ")} per question: at most ${worst.ratio.toFixed(2)}x (${worst.label}, against \`${worst.peer}\`).`,
      );
  }
  return lines.join("\n");
}

/** A one-line description of the machine, for the results header. */
export function machineInfo(): string {
  const cpu = cpus();
  const model = cpu[0]?.model.trim() ?? "unknown CPU";
  return `${model}, ${cpu.length} threads, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ${platform()} ${release()}, Node ${process.version}`;
}

/**
 * Writes `content` into `file` between `<!-- bench:<id> start -->` and
 * `<!-- bench:<id> end -->`, replacing an existing section with that id or
 * appending a new one.
 */
export function writeSection(file: string, id: string, content: string): void {
  const start = `<!-- bench:${id} start -->`;
  const end = `<!-- bench:${id} end -->`;
  const block = `${start}\n${content.trim()}\n${end}`;
  const old = existsSync(file) ? readFileSync(file, "utf8") : "# Benchmarks\n";
  const i = old.indexOf(start);
  const j = old.indexOf(end);
  const next =
    i >= 0 && j > i ? old.slice(0, i) + block + old.slice(j + end.length) : old.replace(/\n*$/, "\n\n") + block + "\n";
  writeFileSync(file, next);
}
