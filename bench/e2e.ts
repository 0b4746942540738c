/**
 * The end-to-end suite (`--suite e2e`): each groupby question as a user runs it, a
 * fresh process reading the CSV and writing its answer as CSV. Basin: `basin run
 * <question>.ts --output answer.csv`; DuckDB: a fresh Node process running
 * `COPY (query) TO 'answer.csv'` over the same CSV (bench/e2e_duckdb.ts), alternating,
 * to the same file. Every answer file is read back by DuckDB and compared row by row
 * with DuckDB's (keys exactly, other columns within a relative 1e-9). A last row times
 * writing q10's answer alone, in this process, as CSV, Parquet and Arrow IPC: Basin's
 * writer of a persisted result against DuckDB's COPY of a table.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { DuckDBInstance } from "@duckdb/node-api";
import * as api from "../engine/api/index.js";
import type { Dataset } from "./data_file.js";
import { generateGroupby } from "./generate.js";
import { GROUPBY_QUESTIONS, type Question } from "./questions.js";
import { machineInfo } from "./report.js";

export interface E2eOptions {
  rows: number;
  k: number;
  dataDir: string;
  questions: string[];
  runs: number;
  log: (msg: string) => void;
}

const ROOT = resolve(fileURLToPath(import.meta.url), "../../..");
const BASIN = join(ROOT, "bin/basin.js");
const DUCKDB_SCRIPT = join(ROOT, "dist/bench/e2e_duckdb.js");

const sql = (s: string) => `'${s.replaceAll("'", "''")}'`;

const DUCK_TYPES = { string: "VARCHAR", int64: "BIGINT", float64: "DOUBLE", date: "DATE" } as const;

function readCsvSql(data: Dataset): string {
  const t = data.tables[0]!;
  const cols = Object.entries(t.schema)
    .map(([k, type]) => `${sql(k)}: ${sql(DUCK_TYPES[type])}`)
    .join(", ");
  return `read_csv(${sql(resolve(t.path))}, header = true, delim = ',', columns = {${cols}})`;
}

/** The question as a pipeline file: its Basin query over readCsv, the default export. */
function pipelineText(q: Question, data: Dataset): string {
  const t = data.tables[0]!;
  return (
    `import * as api from "basin";\n` +
    `const question = ${q.basin!.toString()};\n` +
    `const x = api.readCsv(${JSON.stringify(resolve(t.path))}, { dtypes: ${JSON.stringify(t.schema)} });\n` +
    `export default question({ x }, api);\n`
  );
}

/** Runs a command to its end; resolves with its wall seconds, rejects with its stderr on failure. */
function timed(cmd: string, args: string[]): Promise<number> {
  return new Promise((ok, fail) => {
    const t0 = performance.now();
    const child = spawn(cmd, args, { stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("error", fail);
    child.on("close", (code) => {
      const s = (performance.now() - t0) / 1000;
      if (code === 0) ok(s);
      else fail(new Error(`${cmd} ${args.join(" ")} exited with ${code}: ${err.slice(-2000)}`));
    });
  });
}

/**
 * Rows of `a` and `b` (CSV answers, read by DuckDB) that differ: keys compared exactly,
 * other columns as numbers within 1e-9 relative (NaN equals NaN). 0 when they agree.
 */
async function differingRows(
  a: string,
  b: string,
  keys: string[],
  others: string[],
): Promise<{ rows: number; bad: number }> {
  const db = await DuckDBInstance.create(":memory:");
  const conn = await db.connect();
  try {
    // Rows with equal keys (q8's two per key) are paired in the order of their other columns.
    const on = [...keys, "__rn"].map((k) => `a."${k}" IS NOT DISTINCT FROM b."${k}"`).join(" AND ");
    const numbered = (path: string) =>
      `SELECT *, row_number() OVER (PARTITION BY ${keys.map((k) => `"${k}"`).join(", ")}` +
      `${others.length ? ` ORDER BY ${others.map((c) => `"${c}"`).join(", ")}` : ""}) AS __rn ` +
      `FROM read_csv(${sql(path)}, header = true)`;
    const same = others
      .map(
        (c) =>
          `((a."${c}" IS NULL AND b."${c}" IS NULL) OR (isnan(a."${c}"::DOUBLE) AND isnan(b."${c}"::DOUBLE)) OR ` +
          `abs(a."${c}"::DOUBLE - b."${c}"::DOUBLE) <= 1e-9 * greatest(abs(a."${c}"::DOUBLE), abs(b."${c}"::DOUBLE), 1))`,
      )
      .join(" AND ");
    const r = await conn.runAndReadAll(
      `WITH a AS (${numbered(a)}), b AS (${numbered(b)}) ` +
        `SELECT (SELECT count(*) FROM a) AS na, (SELECT count(*) FROM b) AS nb, ` +
        `(SELECT count(*) FROM a FULL OUTER JOIN b ON ${on} WHERE a."${keys[0]}" IS NULL AND b."${keys[0]}" IS NULL OR NOT (${same || "true"}) OR a IS NULL OR b IS NULL) AS bad`,
    );
    const [na, nb, bad] = r.getRows()[0]!.map(Number);
    return { rows: nb, bad: na !== nb ? Math.max(1, Math.abs(na - nb)) : bad };
  } finally {
    conn.closeSync();
  }
}

async function columnsOf(path: string): Promise<string[]> {
  const db = await DuckDBInstance.create(":memory:");
  const conn = await db.connect();
  try {
    const r = await conn.runAndReadAll(`SELECT * FROM read_csv(${sql(path)}, header = true) LIMIT 0`);
    return r.columnNames();
  } finally {
    conn.closeSync();
  }
}

interface Row {
  id: string;
  basin: number[];
  duckdb: number[];
  rows: number;
  check: string;
}

/** How each format's write-only row is timed: Basin's writer, and the DuckDB COPY it is held against. */
const WRITE_FORMATS = [
  { format: "csv", ext: "csv", copy: "(HEADER, DELIMITER ',')" },
  { format: "parquet", ext: "parquet", copy: "(FORMAT parquet)" },
  // DuckDB writes no Arrow IPC: its Parquet COPY is the yardstick.
  { format: "arrow", ext: "arrow", copy: "(FORMAT parquet)" },
] as const;

/**
 * Times writing q10's answer alone, as CSV, Parquet and Arrow IPC: Basin's writer of a
 * persisted result against DuckDB's COPY of a table, alternating; the check column
 * gives both files' sizes.
 */
async function writeOnly(data: Dataset, dir: string, runs: number, log: (m: string) => void): Promise<Row[]> {
  const q = GROUPBY_QUESTIONS.find((x) => x.id === "q10")!;
  const t = data.tables[0]!;
  const x = api.readCsv(t.path, { dtypes: t.schema });
  const answer = await q.basin!({ x }, api).persist();
  const rows: Row[] = [];
  const db = await DuckDBInstance.create(":memory:");
  const conn = await db.connect();
  try {
    await conn.run(`CREATE TABLE ans AS WITH x AS (SELECT * FROM ${readCsvSql(data)}) ${q.duckdb}`);
    for (const w of WRITE_FORMATS) {
      const out = join(dir, `write.${w.ext}`),
        duckOut = join(dir, `write.duckdb.${w.format === "arrow" ? "parquet" : w.ext}`);
      const row: Row = { id: `q10 write only, ${w.format}`, basin: [], duckdb: [], rows: 0, check: "" };
      for (let r = 0; r < runs; r++) {
        let t0 = performance.now();
        const s =
          w.format === "csv"
            ? await answer.writeCsv(out)
            : w.format === "parquet"
              ? await answer.writeParquet(out)
              : await answer.writeArrow(out);
        row.rows = s.rows;
        row.basin.push((performance.now() - t0) / 1000);
        t0 = performance.now();
        await conn.run(`COPY ans TO ${sql(duckOut)} ${w.copy}`);
        row.duckdb.push((performance.now() - t0) / 1000);
        log(
          `q10 write ${w.format}: basin ${row.basin.at(-1)!.toFixed(2)} s, duckdb ${row.duckdb.at(-1)!.toFixed(2)} s`,
        );
      }
      const mb = (p: string) => (statSync(p).size / 1e6).toFixed(0);
      row.check = `${mb(out)} MB vs ${mb(duckOut)} MB${w.format === "arrow" ? " (DuckDB's Parquet)" : ""}`;
      log(`q10 write ${w.format}: ${row.check}`);
      rows.push(row);
    }
  } finally {
    conn.closeSync();
    answer.unpersist();
  }
  return rows;
}

/**
 * Runs the e2e suite; returns its section (title, notes, table).
 *
 * @example
 * const text = await runE2e({ rows: 1e7, k: 100, dataDir: ".bench-data", questions: ["q1"], runs: 2, log });
 */
export async function runE2e(o: E2eOptions): Promise<string> {
  const data = await generateGroupby({ rows: o.rows, k: o.k, dir: o.dataDir, log: o.log });
  const dir = mkdtempSync(join(o.dataDir, "e2e-"));
  const answer = join(dir, "answer.csv");
  const rows: Row[] = [];
  try {
    for (const q of GROUPBY_QUESTIONS) {
      if (!o.questions.includes(q.id) || !q.basin) continue;
      const pipeline = join(dir, `${q.id}.ts`);
      writeFileSync(pipeline, pipelineText(q, data));
      const copy = `COPY (WITH x AS (SELECT * FROM ${readCsvSql(data)}) ${q.duckdb}) TO ${sql(answer)} (HEADER, DELIMITER ',')`;
      const row: Row = { id: q.id, basin: [], duckdb: [], rows: 0, check: "" };
      for (let r = 0; r < o.runs; r++) {
        // Alternating, to the same file: each system's answer is moved aside for the check.
        row.basin.push(await timed(process.execPath, [BASIN, "run", pipeline, "--output", answer]));
        renameSync(answer, join(dir, `${q.id}.basin.csv`));
        row.duckdb.push(await timed(process.execPath, [DUCKDB_SCRIPT, copy]));
        renameSync(answer, join(dir, `${q.id}.duckdb.csv`));
        o.log(`${q.id}: basin ${row.basin.at(-1)!.toFixed(2)} s, duckdb ${row.duckdb.at(-1)!.toFixed(2)} s`);
      }
      const b = join(dir, `${q.id}.basin.csv`),
        d = join(dir, `${q.id}.duckdb.csv`);
      const cols = await columnsOf(d);
      const { rows: n, bad } = await differingRows(
        b,
        d,
        q.keys,
        cols.filter((c) => !q.keys.includes(c)),
      );
      row.rows = n;
      row.check = bad === 0 ? "same" : `${bad} rows differ`;
      o.log(`${q.id}: ${row.check} (${row.rows} rows, ${(statSync(b).size / 1e6).toFixed(1)} MB)`);
      rows.push(row);
    }
    if (o.questions.includes("q10")) rows.push(...(await writeOnly(data, dir, o.runs, o.log)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return render(rows, o, data);
}

const best = (xs: number[]) => Math.min(...xs);

function render(rows: Row[], o: E2eOptions, data: Dataset): string {
  const f = (s: number) => s.toFixed(2);
  const lines = [
    `### e2e ${data.name} (${o.rows} rows, K=${o.k}), fresh processes writing CSV, ${new Date().toISOString().slice(0, 10)}`,
    "",
    `Machine: ${machineInfo()}. Wall seconds of each question as a fresh process: \`basin run q.ts --output answer.csv\` ` +
      `against a fresh Node process running DuckDB's \`COPY (query) TO 'answer.csv'\` over the same CSV, alternating, ` +
      `${o.runs} runs each (first / best). check: both answers read back by DuckDB, every row compared. ` +
      "`q10 write only, <format>`: writing q10's persisted answer in one process (Basin's writeCsv/writeParquet/writeArrow, " +
      "DuckDB's COPY of a table as CSV/Parquet, its Parquet COPY against Arrow), alternating; check: the files' sizes.",
    "",
    "| question | rows | basin first | duckdb first | basin best | duckdb best | basin/duckdb (best) | check |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
  ];
  for (const r of rows)
    lines.push(
      `| ${r.id} | ${r.rows} | ${f(r.basin[0]!)} | ${f(r.duckdb[0]!)} | ${f(best(r.basin))} | ${f(best(r.duckdb))} | ` +
        `${(best(r.basin) / best(r.duckdb)).toFixed(2)}x | ${r.check} |`,
    );
  const qs = rows.filter((r) => r.id.startsWith("q") && !r.id.includes(" "));
  const tb = qs.reduce((a, r) => a + best(r.basin), 0),
    td = qs.reduce((a, r) => a + best(r.duckdb), 0);
  const fb = qs.reduce((a, r) => a + r.basin[0]!, 0),
    fd = qs.reduce((a, r) => a + r.duckdb[0]!, 0);
  lines.push(`| total | | ${f(fb)} | ${f(fd)} | ${f(tb)} | ${f(td)} | ${(tb / td).toFixed(2)}x | |`);
  return lines.join("\n") + "\n";
}
