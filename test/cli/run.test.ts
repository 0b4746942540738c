// `basin run` end to end: the real CLI in a temp folder outside the repository,
// a generated CSV, and DuckDB as the oracle for the printed, CSV and Arrow results.
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import { tableFromIPC, Type } from "apache-arrow";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { native } from "../../engine/native/addon.js";
import {
  alignmentProblems,
  csvField,
  errorLines,
  makeTempDir,
  parseTable,
  removeDir,
  rng,
  runBasin,
  writeText,
} from "../helpers/cli.js";

// ---------- data ----------

const CITIES = ["Zürich, CH", "東京", "🙂 emoji", "São Paulo", 'say "hi"', "x y", "Ωmega"];
const NO_V = "∅ no v"; // v is always null in this group: sum/min/max are null
const NO_F = "no f"; // f is always null in this group: mean is null
const ROWS = 6000;

interface Row {
  id: number;
  city: string | null;
  v: number | null;
  f: number | null;
}

function makeRows(): Row[] {
  const r = rng(42);
  const rows: Row[] = [];
  for (let id = 0; id < ROWS; id++) {
    const u = r();
    const city = u < 0.05 ? null : u < 0.1 ? NO_V : u < 0.15 ? NO_F : CITIES[Math.floor(r() * CITIES.length)];
    const v = city === NO_V || r() < 0.1 ? null : Math.floor(r() * 2_000_000) - 1_000_000;
    const f = city === NO_F || r() < 0.1 ? null : Math.round((r() * 200 - 100) * 100) / 100;
    rows.push({ id, city, v, f });
  }
  return rows;
}

function toCsvText(rows: Row[]): string {
  return "id,city,v,f\n" + rows.map((x) => [x.id, x.city, x.v, x.f].map(csvField).join(",")).join("\n") + "\n";
}

// ---------- the pipeline and its SQL twin ----------

// Small blocks so the scan has many partitions and the group-by really merges.
const PIPELINE = `import { readCsv, col, count } from "basin";

export default readCsv("data.csv", { blocksize: "16KB" })
  .filter(col("f").gt(-50).or(col("f").isNull()))
  .withColumns({ fv: col("f").mul(2).add(col("v")), positive: col("v").gt(0) })
  .groupBy("city")
  .agg(
    count().alias("n"),
    col("v").sum().alias("sum_v"),
    col("f").mean().alias("mean_f"),
    col("fv").max().alias("max_fv"),
    col("v").min().alias("min_v"),
    col("f").count().alias("n_f"),
  );
`;

const NAMES = ["city", "n", "sum_v", "mean_f", "max_fv", "min_v", "n_f"];
const TYPES = ["string", "int64", "int64", "float64", "float64", "int64", "int64"];
const DUCK_TYPES =
  "{'city': 'VARCHAR', 'n': 'BIGINT', 'sum_v': 'BIGINT', 'mean_f': 'DOUBLE', 'max_fv': 'DOUBLE', 'min_v': 'BIGINT', 'n_f': 'BIGINT'}";

function oracleSql(csv: string): string {
  return `SELECT city, count(*) AS n, sum(v) AS sum_v, avg(f) AS mean_f, max(f * 2 + v) AS max_fv, min(v) AS min_v, count(f) AS n_f
    FROM read_csv('${csv}', header = true, delim = ',', quote = '"', escape = '"',
                  columns = {'id': 'BIGINT', 'city': 'VARCHAR', 'v': 'BIGINT', 'f': 'DOUBLE'})
    WHERE f > -50 OR f IS NULL
    GROUP BY city`;
}

type Cell = string | number | null;

/** DuckDB's JS values as plain numbers/strings/null (bigints become numbers; they are small here). */
function plain(v: unknown): Cell {
  if (v === null || v === undefined) return null;
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "number" || typeof v === "string") return v;
  throw new Error(`unexpected value ${String(v)}`);
}

async function query(con: DuckDBConnection, sql: string): Promise<Cell[][]> {
  const reader = await con.runAndReadAll(sql);
  return (reader.getRowsJS() as unknown[][]).map((row) => row.map(plain));
}

const byKey = (a: Cell[], b: Cell[]) => String(a[0] ?? "\u0000null").localeCompare(String(b[0] ?? "\u0000null"));

function closeTo(actual: number, expected: number): boolean {
  return Math.abs(actual - expected) <= 1e-9 * Math.max(1, Math.abs(expected));
}

/** Compares rows cell by cell: floats within 1e-9 relative, everything else exactly. */
function expectSameRows(actual: Cell[][], expected: Cell[][], floatCols: number[]): void {
  expect(actual.length).toBe(expected.length);
  const a = [...actual].sort(byKey);
  const e = [...expected].sort(byKey);
  for (let r = 0; r < e.length; r++) {
    for (let c = 0; c < e[r].length; c++) {
      const x = a[r][c],
        y = e[r][c];
      if (floatCols.includes(c) && typeof x === "number" && typeof y === "number") {
        if (!closeTo(x, y)) expect.fail(`row ${JSON.stringify(e[r][0])} column ${NAMES[c]}: ${x} != ${y}`);
      } else {
        expect(x, `row ${JSON.stringify(e[r][0])} column ${NAMES[c]}`).toStrictEqual(y);
      }
    }
  }
}

/** A printed cell back to a value, by the printed column type. */
function fromPrinted(s: string, type: string): Cell {
  if (s === "null") return null;
  if (type === "int64" || type === "float64") {
    const n = Number(s);
    if (!Number.isFinite(n)) throw new Error(`not a number: ${s}`);
    return n;
  }
  return s;
}

// ---------- setup ----------

let dir: string;
let db: DuckDBInstance;
let con: DuckDBConnection;
let oracle: Cell[][];

beforeAll(async () => {
  dir = makeTempDir();
  writeText(dir, "data.csv", toCsvText(makeRows()));
  writeText(dir, "pipeline.ts", PIPELINE);
  db = await DuckDBInstance.create(":memory:");
  con = await db.connect();
  oracle = await query(con, oracleSql(join(dir, "data.csv")));
  // The data must exercise what the tests claim: a null key, all-null groups.
  expect(oracle.some((r) => r[0] === null)).toBe(true);
  expect(oracle.find((r) => r[0] === NO_V)?.[2]).toBeNull();
  expect(oracle.find((r) => r[0] === NO_F)?.[3]).toBeNull();
  expect(oracle.length).toBeLessThanOrEqual(20); // the whole result is printed
});

afterAll(() => {
  con?.closeSync();
  db?.closeSync();
  if (dir) removeDir(dir);
});

// ---------- tests ----------

describe("basin run", () => {
  it("prints an aligned table that matches DuckDB for filter + withColumns + groupBy", async () => {
    const r = await runBasin(["run", "pipeline.ts"], { cwd: dir });
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.code).toBe(0);
    // Aligned by characters (code points): "🙂 emoji" must not shift its row.
    expect(alignmentProblems(r.stdout)).toEqual([]);
    const t = parseTable(r.stdout);
    expect(t.names).toEqual(NAMES);
    expect(t.types).toEqual(TYPES);
    expect(t.footer).toBe(`${oracle.length} rows × ${NAMES.length} columns`);
    const printed = t.rows.map((row) => row.map((s, c) => fromPrinted(s, TYPES[c])));
    expectSameRows(printed, oracle, [3, 4]);
    expect(r.stderr).toMatch(/\d+ tasks in [\d.]+ s/);
  });

  it("--worker-processes all prints the same table as worker threads; a bad value is a usage error", async () => {
    const threads = await runBasin(["run", "pipeline.ts", "--workers", "2"], { cwd: dir });
    const processes = await runBasin(["run", "pipeline.ts", "--workers", "2", "--worker-processes", "all"], {
      cwd: dir,
    });
    expect(processes.code, processes.stderr).toBe(0);
    expect(parseTable(processes.stdout).rows).toEqual(parseTable(threads.stdout).rows);
    const bad = await runBasin(["run", "pipeline.ts", "--worker-processes", "some"], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--worker-processes needs one of none, gpu, all, got "some"');
  });

  it("--cpu-tasks takes all or reads; another value is a usage error, reads without GPUs a plan error", async () => {
    const bad = await runBasin(["run", "pipeline.ts", "--cpu-tasks", "some"], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--cpu-tasks needs one of all, reads, got "some"');
    const noGpu = await runBasin(["run", "pipeline.ts", "--gpus", "none", "--cpu-tasks", "reads"], { cwd: dir });
    expect(noGpu.code).not.toBe(0);
    expect(noGpu.stderr).toContain(
      'cpuTasks "reads" (--cpu-tasks reads) leaves every task but file reads to GPU workers',
    );
  });

  it("--output out.csv writes a CSV that DuckDB reads back to the same rows", async () => {
    const r = await runBasin(["run", "pipeline.ts", "--output", "out.csv"], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`wrote ${oracle.length} rows to out.csv`);
    const csv = join(dir, "out.csv");
    expect(readFileSync(csv, "utf8").split("\n")[0]).toBe(NAMES.join(","));
    const back = await query(
      con,
      `SELECT * FROM read_csv('${csv}', header = true, delim = ',', quote = '"', escape = '"', columns = ${DUCK_TYPES})`,
    );
    expectSameRows(back, oracle, [3, 4]);
    expect(readdirSync(dir).filter((f) => f.includes(".partial"))).toEqual([]);
  });

  it("--output out.parquet writes Parquet that DuckDB reads back to the same rows and types", async () => {
    const r = await runBasin(["run", "pipeline.ts", "--output", "out.parquet"], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`wrote ${oracle.length} rows to out.parquet`);
    const back = await query(con, `SELECT * FROM read_parquet('${join(dir, "out.parquet")}')`);
    expectSameRows(back, oracle, [3, 4]);
    expect(readdirSync(dir).filter((f) => f.includes(".partial"))).toEqual([]);
  });

  it("--output out.arrow writes Arrow IPC with the right column types and nulls", async () => {
    const r = await runBasin(["run", "pipeline.ts", "--output", "out.arrow"], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("");
    const table = tableFromIPC(readFileSync(join(dir, "out.arrow")));
    expect(table.numRows).toBe(oracle.length);
    expect(table.schema.fields.map((f) => f.name)).toEqual(NAMES);
    const types = table.schema.fields.map((f) => {
      const t = f.type as { typeId: Type; bitWidth?: number; precision?: number };
      if (t.typeId === Type.Int) return `int${t.bitWidth}`;
      if (t.typeId === Type.Float) return `float${t.precision === 2 ? 64 : "?"}`;
      if (t.typeId === Type.Utf8) return "utf8";
      return Type[t.typeId];
    });
    expect(types).toEqual(["utf8", "int64", "int64", "float64", "float64", "int64", "int64"]);
    const rows: Cell[][] = [];
    for (let i = 0; i < table.numRows; i++) rows.push(NAMES.map((n) => plain(table.getChild(n)!.get(i))));
    expectSameRows(rows, oracle, [3, 4]);
    // Nulls travel as nulls (validity bitmaps), not as 0 or "".
    const nullsIn = (c: number) => oracle.filter((row) => row[c] === null).length;
    for (const [c, name] of NAMES.entries()) expect(table.getChild(name)!.nullCount, name).toBe(nullsIn(c));
    expect(table.getChild("city")!.nullCount).toBe(1);
    expect(table.getChild("sum_v")!.nullCount).toBeGreaterThanOrEqual(1);
  });

  it("--output parts/ writes a Parquet file per partition (parts.csv/: CSV) that DuckDB reads back; a second run replaces them", async () => {
    for (const [out, read] of [
      ["parts/", (d: string) => `read_parquet('${d}/*.parquet')`],
      [
        "parts.csv/",
        (d: string) =>
          `read_csv('${d}/*.csv', header = true, delim = ',', quote = '"', escape = '"', columns = ${DUCK_TYPES})`,
      ],
    ] as const) {
      for (const workers of ["1", "4"]) {
        const r = await runBasin(["run", "pipeline.ts", "--workers", workers, "--output", out], { cwd: dir });
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).toMatch(
          new RegExp(`wrote ${oracle.length} rows to ${out.replace(".", "\\.")} \\(\\d+ part files\\)`),
        );
        const folder = join(dir, out);
        expect(readdirSync(folder).every((f) => /^part-\d{5}\.(parquet|csv)$/.test(f))).toBe(true);
        expectSameRows(await query(con, `SELECT * FROM ${read(folder)}`), oracle, [3, 4]);
      }
    }
    expect(readdirSync(dir).filter((f) => f.includes(".partial") || f.includes(".old-"))).toEqual([]);
  });

  it("--workers 1 and --workers 4 print identical output", async () => {
    const ordered = `import { readCsv, col } from "basin";
export default readCsv("data.csv", { blocksize: "8KB" })
  .filter(col("v").gt(0))
  .withColumns({ w: col("v").mod(97) })
  .select("id", "city", "w");
`;
    writeText(dir, "ordered.ts", ordered);
    for (const file of ["ordered.ts", "pipeline.ts"]) {
      const one = await runBasin(["run", file, "--workers", "1"], { cwd: dir });
      const four = await runBasin(["run", file, "--workers", "4"], { cwd: dir });
      expect(one.code, one.stderr).toBe(0);
      expect(four.code, four.stderr).toBe(0);
      // Same partitions whatever the worker count, so the very same text (group order included).
      expect(four.stdout, file).toBe(one.stdout);
      expect(parseTable(one.stdout).rows.length).toBeGreaterThan(file === "ordered.ts" ? 20 : 5);
    }
  });

  it("prints the head and tail of a big result and a row × column footer", async () => {
    const lines = ["id,label"];
    for (let i = 0; i < 1000; i++) lines.push(`${i},${csvField(i % 3 === 0 ? "東京" : `r${i}`)}`);
    writeText(dir, "thousand.csv", lines.join("\n") + "\n");
    writeText(
      dir,
      "big.ts",
      `import { readCsv, col } from "basin";
export default readCsv("thousand.csv", { blocksize: 1000 }).withColumns({ sq: col("id").mul(col("id")) });
`,
    );
    const r = await runBasin(["run", "big.ts"], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    const t = parseTable(r.stdout);
    expect(t.names).toEqual(["id", "label", "sq"]);
    expect(t.types).toEqual(["int64", "string", "int64"]);
    expect(t.footer).toBe("1000 rows × 3 columns");
    expect(t.rows).toHaveLength(21);
    expect(t.rows[10]).toEqual(["…", "…", "…"]);
    const ids = [...t.rows.slice(0, 10), ...t.rows.slice(11)].map((row) => Number(row[0]));
    expect(ids).toEqual([...Array(10).keys(), ...Array.from({ length: 10 }, (_, i) => 990 + i)]);
    for (const row of [...t.rows.slice(0, 10), ...t.rows.slice(11)]) {
      const id = Number(row[0]);
      expect(row[1]).toBe(id % 3 === 0 ? "東京" : `r${id}`);
      expect(row[2]).toBe(String(id * id));
    }
  });

  it("--explain prints the optimized plan on stderr and still prints the result", async () => {
    const r = await runBasin(["run", "pipeline.ts", "--explain"], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("ScanCsv");
    expect(r.stderr).toContain("predicate=");
    expect(r.stderr).toContain("data.csv");
    expect(r.stdout).not.toContain("ScanCsv");
    expect(parseTable(r.stdout).footer).toBe(`${oracle.length} rows × ${NAMES.length} columns`);
  });

  it("runs a pipeline from any folder: nested path, local imports, cwd-relative data", async () => {
    const sub = join(dir, "nested", "deeper");
    mkdirSync(sub, { recursive: true });
    writeText(sub, "settings.ts", `export const threshold: number = 500_000;\n`);
    writeText(
      sub,
      "p.ts",
      `import { readCsv, col, count } from "basin";
import { threshold } from "./settings.ts";
export default readCsv("data.csv").filter(col("v").gt(threshold)).agg(count().alias("n"), col("v").max().alias("top"));
`,
    );
    const r = await runBasin(["run", join("nested", "deeper", "p.ts")], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    const t = parseTable(r.stdout);
    const [[n, top]] = await query(
      con,
      `SELECT count(*), max(v) FROM read_csv('${join(dir, "data.csv")}', header = true, columns = {'id': 'BIGINT', 'city': 'VARCHAR', 'v': 'BIGINT', 'f': 'DOUBLE'}) WHERE v > 500000`,
    );
    expect(t.rows).toEqual([[String(n), String(top)]]);
    // The run leaves nothing behind in the user's folders.
    expect(readdirSync(sub).sort()).toEqual(["p.ts", "settings.ts"]);
    expect(existsSync(join(dir, "node_modules"))).toBe(false);
    expect(errorLines(r.stderr)).toEqual([]);
  });

  it("prints each show() frame after the default export, under its name, checked against DuckDB; --output writes only the default export", async () => {
    writeText(
      dir,
      "shown.ts",
      `import { readCsv, col, count, show } from "basin";
const trips = readCsv("data.csv");
show(trips.filter(col("v").gt(900_000)).agg(count().alias("n")), "big v");
show(trips.agg(col("f").min().alias("lo")));
export default trips.agg(count().alias("rows"));
`,
    );
    const r = await runBasin(["run", "shown.ts"], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    const [main, big, second] = r.stdout.split(/\n\n(?=[^\n]+:\n)/);
    expect(parseTable(main).rows).toEqual([[String(ROWS)]]);
    const csv = `read_csv('${join(dir, "data.csv")}', header = true, columns = {'id': 'BIGINT', 'city': 'VARCHAR', 'v': 'BIGINT', 'f': 'DOUBLE'})`;
    const [[n]] = await query(con, `SELECT count(*) FROM ${csv} WHERE v > 900000`);
    const [[lo]] = await query(con, `SELECT min(f) FROM ${csv}`);
    expect(big.split("\n")[0]).toBe("big v:");
    expect(parseTable(big.slice(big.indexOf("\n") + 1)).rows).toEqual([[String(n)]]);
    expect(second.split("\n")[0]).toBe("result 2:");
    expect(parseTable(second.slice(second.indexOf("\n") + 1)).rows).toEqual([[String(lo)]]);

    const out = join(dir, "shown.csv");
    const w = await runBasin(["run", "shown.ts", "--output", out], { cwd: dir });
    expect(w.code, w.stderr).toBe(0);
    expect(readFileSync(out, "utf8")).toBe(`rows\n${ROWS}\n`);
    expect(w.stdout).toContain("big v:");
    expect(errorLines(w.stderr)).toEqual([]);

    // --explain: each shown frame's plan (on stderr) is titled apart from its result's name (on stdout).
    const e = await runBasin(["run", "shown.ts", "--explain"], { cwd: dir });
    expect(e.code, e.stderr).toBe(0);
    expect(e.stderr).toContain("the plan of big v:\n");
    expect(e.stderr).not.toMatch(/^big v:$/m);
    expect(e.stdout.match(/^big v:$/gm)).toHaveLength(1);
  });
});

describe("basin run --gpus all", () => {
  it("runs, and says it runs on the CPU when no GPU is visible (nothing is said where one is)", async () => {
    const r = await runBasin(["run", "pipeline.ts", "--gpus", "all"], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    const noGpu = native().gpuInfo().devices.length === 0;
    expect(/--gpus all: no GPU here \(.+\); running on the CPU/.test(r.stderr)).toBe(noGpu);
  });
});
