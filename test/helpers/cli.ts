// Helpers for end-to-end tests of the `basin` command: spawn the real CLI in a
// temp folder, write pipelines and data there, parse the printed table.
import { execFile, spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { displayWidth } from "../../engine/cli/format_table.js";
import { csvField as quoteField } from "../../engine/common/csv_field.js";
import { seededRandom } from "../../engine/common/random.js";
export { seededRandom as rng };

/** The repository's bin/basin.js (BASIN_TEST_BIN points the tests at another build). */
export const BASIN_BIN = process.env.BASIN_TEST_BIN ?? fileURLToPath(new URL("../../bin/basin.js", import.meta.url));

export interface CliResult {
  /** Exit code; null when the process was killed (e.g. by the timeout). */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * Runs `node bin/basin.js ...args` in `cwd`; never rejects on a non-zero exit.
 *
 * @example
 * const r = await runBasin(["run", "p.ts"], { cwd: dir });
 */
export function runBasin(
  args: string[],
  opts: { cwd: string; timeoutMs?: number; env?: NodeJS.ProcessEnv },
): Promise<CliResult> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--expose-gc", BASIN_BIN, ...args], // for the leak check (BASIN_CHECK_LEAKS)
      {
        cwd: opts.cwd,
        timeout: opts.timeoutMs ?? 30_000,
        killSignal: "SIGKILL",
        maxBuffer: 64 << 20,
        encoding: "utf8",
        // No TTY, no colour; a fixed worker count unless a test passes --workers.
        env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0", BASIN_CHECK_LEAKS: "1", ...opts.env },
      },
      (err, stdout, stderr) => {
        const e = err as (Error & { code?: number | string; signal?: NodeJS.Signals | null }) | null;
        resolve({
          code: e ? (typeof e.code === "number" ? e.code : null) : 0,
          signal: e?.signal ?? null,
          stdout,
          stderr,
          ms: performance.now() - t0,
        });
      },
    );
  });
}

/**
 * The URL a spawned `basin serve` prints, and what it printed so far; fails after
 * `ms` with its output.
 *
 * @example
 * const { url } = await printedUrl(spawn(process.execPath, [BASIN_BIN, "serve", dir, "--port", "0"]), 20_000);
 */
export function printedUrl(child: ChildProcessWithoutNullStreams, ms: number): Promise<{ url: URL; out: string }> {
  let out = "",
    err = "";
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL printed in ${ms} ms: ${out}\n${err}`)), ms);
    child.once(
      "exit",
      (code) => (
        clearTimeout(timer),
        reject(new Error(`basin serve exited with ${code} before printing a URL: ${out}\n${err}`))
      ),
    );
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+/.exec(out);
      if (m) (clearTimeout(timer), resolve({ url: new URL(m[0]), out }));
    });
  });
}

/**
 * Starts `node bin/basin.js ...args` in `cwd` with `env` added, collecting its output
 * as it comes (for tests that act while it runs).
 *
 * @example
 * const run = spawnBasin(["run", "p.ts", "--cluster", "hpc"], { cwd: dir });
 * await until("it prints", 10_000, () => run.err().includes("submitted"));
 */
export function spawnBasin(
  args: string[],
  opts: { cwd: string; env?: NodeJS.ProcessEnv },
): { child: ChildProcessWithoutNullStreams; out: () => string; err: () => string } {
  const child = spawn(process.execPath, [BASIN_BIN, ...args], { cwd: opts.cwd, env: { ...process.env, ...opts.env } });
  let out = "",
    err = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  return { child, out: () => out, err: () => err };
}

/** Resolves with how a spawned process ended (its code, or the signal that killed it). */
export function exited(
  child: ChildProcessWithoutNullStreams,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
}

/** A fresh folder under the OS temp dir (outside the repository). */
export function makeTempDir(prefix = "basin-cli-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** Writes `text` to `dir/name` and returns the full path. */
export function writeText(dir: string, name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

/** The lines of stderr that report an error (`error [CODE]: ...`). */
export function errorLines(stderr: string): string[] {
  return stderr.split("\n").filter((l) => /^error \[/.test(l));
}

/** One CSV field with RFC 4180 quoting; null is the empty field. */
export function csvField(v: string | number | null): string {
  if (v === null) return "";
  return quoteField(String(v));
}

export interface PrintedTable {
  names: string[];
  types: string[];
  /** Data rows as printed (cells trimmed); a "…" row marks elided rows. */
  rows: string[][];
  footer: string;
}

/** A line as terminal cells: a wide character takes two (the second is a placeholder). */
function cells(line: string): string[] {
  const out: string[] = [];
  for (const ch of line) {
    out.push(ch);
    if (displayWidth(ch) === 2) out.push("");
  }
  return out;
}

/**
 * Parses the aligned table `basin run` prints: a header, a types line, a rule of
 * "─" runs separated by two spaces, the rows, and an "N rows × M columns" footer.
 * Columns are cut at the rule's terminal-cell offsets, so cells may contain spaces.
 */
export function parseTable(stdout: string): PrintedTable {
  const lines = stdout.replace(/\n+$/, "").split("\n");
  const ruleAt = lines.findIndex((l) => /^─[─ ]*$/.test(l));
  if (ruleAt < 2) throw new Error(`no table in output:\n${stdout}`);
  const rule = [...lines[ruleAt]];
  const spans: [number, number][] = [];
  for (let i = 0; i < rule.length;) {
    if (rule[i] !== "─") {
      i++;
      continue;
    }
    let j = i;
    while (j < rule.length && rule[j] === "─") j++;
    spans.push([i, j]);
    i = j;
  }
  const cut = (line: string) => {
    const cps = cells(line);
    return spans.map(([a, b], k) =>
      cps
        .slice(a, k === spans.length - 1 ? cps.length : b)
        .join("")
        .trim(),
    );
  };
  const footer = lines[lines.length - 1];
  return {
    names: cut(lines[ruleAt - 2]),
    types: cut(lines[ruleAt - 1]),
    rows: lines.slice(ruleAt + 1, lines.length - 1).map(cut),
    footer,
  };
}

/**
 * Checks that a printed table is aligned, counting terminal cells (wide characters take two): every
 * line is at most as long as the rule, and each column gap of the rule (two spaces)
 * is blank in every line, with numeric columns right-aligned (their last
 * character is not blank) and other columns left-aligned. Returns problems found.
 */
export function alignmentProblems(stdout: string): string[] {
  const lines = stdout.replace(/\n+$/, "").split("\n");
  const ruleAt = lines.findIndex((l) => /^─[─ ]*$/.test(l));
  if (ruleAt < 2) return ["no rule line"];
  const rule = [...lines[ruleAt]];
  const types = parseTable(stdout).types;
  const ends: number[] = [];
  const starts: number[] = [0];
  for (let i = 1; i < rule.length; i++) {
    if (rule[i - 1] === "─" && rule[i] === " ") ends.push(i);
    if (rule[i - 1] === " " && rule[i] === "─") starts.push(i);
  }
  ends.push(rule.length);
  const problems: string[] = [];
  const body = lines.slice(0, lines.length - 1);
  body.forEach((line, n) => {
    if (n === ruleAt) return;
    const cps = cells(line);
    if (cps.length > rule.length) problems.push(`line ${n + 1} is longer than the rule: ${JSON.stringify(line)}`);
    for (let c = 0; c < ends.length - 1; c++) {
      const gap = cps.slice(ends[c], starts[c + 1]).join("");
      if (gap.trim() !== "")
        problems.push(`line ${n + 1}: no gap between columns ${c + 1} and ${c + 2}: ${JSON.stringify(line)}`);
    }
    types.forEach((t, c) => {
      const numeric = t === "int64" || t === "float64";
      const cell = cps.slice(starts[c], ends[c]);
      if (n === ruleAt - 1 || cell.every((ch) => ch === " " || ch === "…")) return;
      if (numeric && (cell[cell.length - 1] ?? " ") === " ")
        problems.push(`line ${n + 1}: numeric column ${c + 1} is not right-aligned: ${JSON.stringify(line)}`);
      if (!numeric && cell[0] === " ")
        problems.push(`line ${n + 1}: column ${c + 1} is not left-aligned: ${JSON.stringify(line)}`);
    });
  });
  return problems;
}
