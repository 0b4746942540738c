// Mutated files of every format Basin reads (Arrow IPC, Parquet, CSV, NDJSON, spill
// files), seeded: each read gives a clear error naming the file or the right answer
// (the oracle's, or the original's where the oracle rejects the file), never a crash,
// an engine error or a silently wrong answer.
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tableFromArrays, tableToIPC } from "apache-arrow";
import pl from "nodejs-polars";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BasinError,
  col,
  LocalCluster,
  type Field,
  type Table,
  readArrow,
  readCsv,
  readJson,
  readParquet,
} from "../../engine/api/index.js";
import { native, type JsTable } from "../../engine/native/addon.js";
import { arrowLayout } from "../../engine/io/arrow_ipc.js";
import { applyMemory, resolveMemory } from "../../engine/memory/limits.js";
import { Duck, tableRows } from "../helpers/oracle.js";
import { cellsOf } from "../helpers/native_rows.js";
import { seededRandom as seeded } from "../../engine/common/random.js";
import { canonicalRows, mutate } from "./mutate.js";

/** FUZZ_SEED=n runs other cases than CI's (to look further; CI runs the fixed ones). */
const SEED_SHIFT = 1000 * Number(process.env.FUZZ_SEED ?? 0);
const dir = mkdtempSync(join(tmpdir(), "basin-fuzz-"));
let cluster: LocalCluster;
let duck: Duck;

beforeAll(async () => {
  cluster = new LocalCluster({ workers: 1 });
  duck = await Duck.open();
});
afterAll(async () => {
  await cluster.close();
  duck.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The sample table: nulls, unicode, empty strings, NaN, -0, dates. */
function sample(n: number, seed: number) {
  const r = seeded(seed);
  const words = ["Zürich", "東京", "", "a,b", 'say "hi"', "naïve café", "x"];
  return Array.from({ length: n }, (_, k) => ({
    i: r() < 0.15 ? null : Math.floor(r() * 2e6) - 1e6,
    f: r() < 0.1 ? null : k === 3 ? -0 : Math.round(r() * 1e6) / 64,
    s: r() < 0.15 ? null : words[Math.floor(r() * words.length)] + k,
    d: r() < 0.1 ? null : Math.floor(r() * 20000),
  }));
}

type Verdict = "error" | "same" | "original" | "retyped";
interface Failure {
  how: string;
  why: string;
}

/**
 * Runs `cases` mutations of each base file through Basin and the oracle and returns
 * the tally and the failures (at most 20 kept).
 */
async function fuzz(opts: {
  name: string;
  ext: string;
  bases: Uint8Array[];
  cases: number;
  seed: number;
  basin: (path: string) => Promise<Table>;
  oracle: (path: string) => Promise<unknown[][]>;
  codes?: string[];
  /** The file's schema as written (default: the schema Basin reads). */
  schemaOf?: (path: string, table: Table) => string;
}): Promise<{ tally: Record<Verdict, number>; failures: Failure[] }> {
  const rnd = seeded(opts.seed);
  const tally: Record<Verdict, number> = { error: 0, same: 0, original: 0, retyped: 0 };
  const failures: Failure[] = [];
  const originals: string[] = [];
  const schemas: string[] = [];
  for (const [k, base] of opts.bases.entries()) {
    const p = join(dir, `${opts.name}-base${k}.${opts.ext}`);
    writeFileSync(p, base);
    const table = await opts.basin(p);
    const mine = canonicalRows(tableRows(table));
    schemas.push(opts.schemaOf?.(p, table) ?? JSON.stringify(table.schema));
    const theirs = canonicalRows(await opts.oracle(p));
    expect(mine, `${opts.name}: the unmutated file ${k} reads as the oracle reads it`).toBe(theirs);
    originals.push(mine);
  }
  for (let c = 0; c < opts.cases; c++) {
    const k = c % opts.bases.length;
    const [bytes, how0] = mutate(opts.bases[k], rnd);
    // FUZZ_CONTEXT=1 shows the bytes around a failing case's damage; FUZZ_KEEP=DIR keeps every case's file.
    const at0 = Number(/(?:at|near) (\d+)/.exec(how0)?.[1] ?? 0);
    const how = `${opts.name} case ${c} (base ${k}): ${how0} ${process.env.FUZZ_CONTEXT ? JSON.stringify(Buffer.from(bytes.subarray(Math.max(0, at0 - 40), at0 + 40)).toString("latin1")) : ""}`;
    const path = join(dir, `${opts.name}-${c}.${opts.ext}`);
    writeFileSync(path, bytes);
    if (process.env.FUZZ_KEEP) writeFileSync(join(process.env.FUZZ_KEEP, `${opts.name}-${c}.${opts.ext}`), bytes);
    let mine: string | undefined;
    let schema = "";
    try {
      const table = await opts.basin(path);
      mine = canonicalRows(tableRows(table));
      schema = opts.schemaOf?.(path, table) ?? JSON.stringify(table.schema);
    } catch (e) {
      const ok =
        e instanceof BasinError &&
        (opts.codes ?? ["BASIN_IO", "BASIN_PARSE"]).includes(e.code) &&
        e.message.includes(`${opts.name}-${c}.${opts.ext}`);
      if (ok) tally.error++;
      else failures.push({ how, why: `not a clear error: ${String(e)}`.slice(0, 300) });
    }
    if (mine !== undefined) {
      let theirs: string | undefined;
      let rejected = "";
      try {
        theirs = canonicalRows(await opts.oracle(path));
      } catch (e) {
        theirs = undefined;
        rejected = String(e).slice(0, 120);
      }
      if (theirs !== undefined && mine === theirs) tally.same++;
      else if (theirs === undefined && mine === originals[k]) tally.original++;
      // Damaged metadata can describe another valid file (a float64 column becomes
      // float16): every buffer is bounds-checked, so reading it as written is right.
      else if (theirs === undefined && schema !== schemas[k]) tally.retyped++;
      else
        failures.push({
          how,
          why:
            theirs === undefined
              ? `read ${diff(mine, originals[k])}; the oracle rejects it: ${rejected}`
              : `read ${mine.slice(0, 150)}, the oracle ${theirs.slice(0, 150)}`,
        });
    }
    // FUZZ_KEEP=folder keeps each failing case's file and its base there, to look at.
    if (process.env.FUZZ_KEEP && failures.at(-1)?.how === how) {
      copyFileSync(path, join(process.env.FUZZ_KEEP, `${opts.name}-${c}.${opts.ext}`));
      writeFileSync(join(process.env.FUZZ_KEEP, `${opts.name}-base${k}.${opts.ext}`), opts.bases[k]);
    }
    rmSync(path, { force: true });
  }
  return { tally, failures: failures.slice(0, 20) };
}

/** The first row where two canonical row sets differ. */
function diff(a: string, b: string): string {
  const x = JSON.parse(a) as string[],
    y = JSON.parse(b) as string[];
  const i = x.findIndex((r, j) => r !== y[j]);
  return `${x.length} rows vs ${y.length}: ${x[i]} vs ${y[i]}`;
}

/**
 * No failure, and both outcomes well represented: a harness that turned every case
 * into an error (or read none of them) would prove nothing.
 */
function expectClean(name: string, cases: number, r: { tally: Record<Verdict, number>; failures: Failure[] }): void {
  console.log(name, r.tally);
  expect(r.failures.map((f) => `${f.how} → ${f.why}`)).toEqual([]);
  expect(r.tally.error, `${name}: cases that failed to read`).toBeGreaterThan(cases / 10);
  expect(r.tally.same + r.tally.original, `${name}: cases that read`).toBeGreaterThan(cases / 20);
}

describe("mutated Arrow IPC files (oracle: Polars)", () => {
  it("give a clear error or the right rows", async () => {
    const rows = sample(60, 1);
    const table = tableFromArrays({
      i: Float64Array.from(rows, (x) => x.i ?? 0),
      s: rows.map((x) => x.s),
    });
    const file = tableToIPC(table, "file");
    const stream = tableToIPC(table, "stream");
    const r = await fuzz({
      name: "arrow",
      ext: "arrow",
      bases: [file, stream],
      cases: 1500,
      seed: 11 + SEED_SHIFT,
      basin: (p) => readArrow(p).compute({ cluster }),
      schemaOf: (p) =>
        arrowLayout(p)
          .schema.fields.map((f) => `${f.name}: ${String(f.type)}`)
          .join(", "),
      oracle: async (p) => {
        const bytes = readFileSync(p);
        return (bytes.subarray(0, 6).toString() === "ARROW1" ? pl.readIPC(bytes) : pl.readIPCStream(bytes)).rows();
      },
    });
    expectClean("arrow", 1500, r);
  });
});

/** DuckDB's rows of a query, as arrays in column order. */
const duckRows = (sql: string) => duck.rows(sql);

describe("mutated Parquet files (oracle: DuckDB)", () => {
  it("give a clear error or the right rows", async () => {
    const bases: Uint8Array[] = [];
    // V1 pages (PLAIN and dictionary) and V2 ones (DELTA and BYTE_STREAM_SPLIT encodings).
    for (const [codec, version] of [
      ["uncompressed", "V1"],
      ["snappy", "V1"],
      ["zstd", "V2"],
    ]) {
      const p = join(dir, `parquet-${codec}-${version}.parquet`);
      await duck.run(
        `COPY (SELECT CASE WHEN range % 7 = 0 THEN NULL ELSE range * 7919 % 20011 - 10000 END AS i,
                      CASE WHEN range % 11 = 0 THEN NULL ELSE range * 0.375::DOUBLE END AS f,
                      CASE WHEN range % 5 = 0 THEN NULL ELSE ['Zürich', '東京', '', 'a,b'][range % 4 + 1] || range END AS s,
                      DATE '2000-01-01' + (range * 13 % 9000)::INT AS d
               FROM range(90)) TO '${p}' (FORMAT parquet, COMPRESSION ${codec}, PARQUET_VERSION ${version}, ROW_GROUP_SIZE 40)`,
      );
      bases.push(readFileSync(p));
    }
    const r = await fuzz({
      name: "parquet",
      ext: "parquet",
      bases,
      cases: 1500,
      seed: 12 + SEED_SHIFT,
      // Dates as day numbers (a damaged one may lie beyond what a JS Date holds), by
      // the columns the file has (damaged metadata may rename or retype one).
      basin: (p) => {
        const frame = readParquet(p);
        const days = (f: Field) => (f.type === "date" ? col(f.name).cast("int64").alias(f.name) : col(f.name));
        return frame.select(...frame.schema.map(days)).compute({ cluster });
      },
      oracle: async (p) => {
        const types = await duckRows(
          `SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('${p}'))`,
        );
        const list = types.map(([n, t]) => (t === "DATE" ? `("${n}" - DATE '1970-01-01')::BIGINT` : `"${n}"`));
        return duckRows(`SELECT ${list.join(", ")} FROM read_parquet('${p}')`);
      },
    });
    expectClean("parquet", 1500, r);
  });
});

/** The sample rows as CSV (header-less, so a damaged header cannot rename columns) and NDJSON lines. */
function textBases(): { csv: string[]; json: string[] } {
  const rows = sample(50, 3);
  const iso = (d: number | null) => (d === null ? null : new Date(d * 86_400_000).toISOString().slice(0, 10));
  const field = (v: string | number | null) =>
    v === null ? "" : typeof v === "string" ? `"${v.replaceAll('"', '""')}"` : String(v);
  const lines = rows.map((r) => [r.i, r.f, r.s, iso(r.d)].map(field).join(","));
  const json = rows.map((r) => JSON.stringify({ i: r.i, f: r.f, s: r.s, d: iso(r.d) }));
  return { csv: [lines.join("\n") + "\n", lines.join("\r\n")], json: [json.join("\n") + "\n"] };
}

const CSV_TYPES = { column_0: "int64", column_1: "float64", column_2: "string", column_3: "date" } as const;

describe("mutated CSV files (oracle: DuckDB with the same columns)", () => {
  it("give a clear error or the right rows", async () => {
    const r = await fuzz({
      name: "csv",
      ext: "csv",
      // The columns are given by dtypes: a damaged first line that has fewer fields is
      // BASIN_PLAN naming the file and its columns.
      codes: ["BASIN_IO", "BASIN_PARSE", "BASIN_PLAN"],
      bases: textBases().csv.map((t) => new TextEncoder().encode(t)),
      cases: 1000,
      seed: 13 + SEED_SHIFT,
      basin: (p) =>
        readCsv(p, { header: false, dtypes: CSV_TYPES })
          .select(col("column_0"), col("column_1"), col("column_2"), col("column_3").cast("int64"))
          .compute({ cluster }),
      oracle: (p) =>
        duckRows(
          `SELECT column_0, column_1, column_2, (column_3 - DATE '1970-01-01')::BIGINT FROM read_csv('${p}', header = false, auto_detect = false, delim = ',', quote = '"', escape = '"',
             columns = {'column_0': 'BIGINT', 'column_1': 'DOUBLE', 'column_2': 'VARCHAR', 'column_3': 'DATE'})`,
        ),
    });
    expectClean("csv", 1000, r);
  });
});

describe("mutated NDJSON files (oracle: DuckDB with the same columns)", () => {
  it("give a clear error or the right rows", async () => {
    const r = await fuzz({
      name: "json",
      ext: "ndjson",
      bases: textBases().json.map((t) => new TextEncoder().encode(t)),
      cases: 800,
      seed: 14 + SEED_SHIFT,
      basin: (p) =>
        readJson(p, { dtypes: { i: "int64", f: "float64", s: "string" }, parseDates: ["d"] })
          .select(col("i"), col("f"), col("s"), col("d").cast("int64"))
          .compute({ cluster }),
      oracle: (p) =>
        duckRows(
          `SELECT i, f, s, (d - DATE '1970-01-01')::BIGINT FROM read_json('${p}', format = 'newline_delimited',
             columns = {'i': 'BIGINT', 'f': 'DOUBLE', 's': 'VARCHAR', 'd': 'DATE'})`,
        ),
    });
    expectClean("json", 800, r);
  });
});

describe("mutated spill files (oracle: the table that was spilled)", () => {
  const spillDir = join(dir, "spill");
  afterAll(() => applyMemory(resolveMemory()));

  const table: JsTable = {
    rows: 40,
    names: ["i", "f", "s", "b", "d"],
    columns: [
      { type: "int64", values: BigInt64Array.from({ length: 40 }, (_, k) => BigInt(k * 7919 - 99)), validity: null },
      {
        type: "float64",
        values: Float64Array.from({ length: 40 }, (_, k) => k / 8),
        validity: Uint8Array.from({ length: 40 }, (_, k) => (k % 6 ? 1 : 0)),
      },
      {
        type: "string",
        values: Array.from({ length: 40 }, (_, k) => (k % 5 ? `Zürich 東京 ${k}` : null)),
        validity: null,
      },
      { type: "bool", values: Uint8Array.from({ length: 40 }, (_, k) => (k % 3) & 1), validity: null },
      { type: "date", values: Int32Array.from({ length: 40 }, (_, k) => k * 97 - 3000), validity: null },
    ],
  };
  const rowsOf = (t: JsTable) => canonicalRows(cellsOf(t));

  // Every codec this build has ("none" always; CI's build has lz4 and zstd too, and
  // test/native/build_flavours.test.ts covers a build without them).
  for (const codec of native().buildInfo().spillCompression) {
    it(`${codec}: a damaged file fails to read back with BASIN_SPILL naming it, or reads back unchanged`, async () => {
      applyMemory({ ...resolveMemory({ localDirectory: spillDir }), spillCompression: codec });
      const h0 = native().tableFromJs(table);
      const original = rowsOf(native().tableToJs(h0));
      native().memorySpill(1e12);
      const folder = native().memoryStats().directory;
      expect(readdirSync(folder).filter((f) => f.endsWith(".arrow"))).toHaveLength(1);
      native().release(h0);
      const rnd = seeded(15 + SEED_SHIFT);
      const tally = { error: 0, same: 0 };
      const failures: string[] = [];
      for (let c = 0; c < 300; c++) {
        const h = native().tableFromJs(table);
        native().memorySpill(1e12);
        const path = join(
          folder,
          readdirSync(folder).find((f) => f.endsWith(".arrow"))!,
        );
        const [bytes, how] = mutate(readFileSync(path), rnd);
        writeFileSync(path, bytes);
        try {
          await native().readBack(h);
          const got = rowsOf(native().tableToJs(h));
          if (got === original) tally.same++;
          else failures.push(`case ${c}: ${how} read back different rows`);
        } catch (e) {
          if (e instanceof Error && (e as { code?: string }).code === "BASIN_SPILL" && e.message.includes(path))
            tally.error++;
          else failures.push(`case ${c}: ${how}: ${String(e)}`);
        } finally {
          native().release(h);
        }
      }
      console.log(`spill ${codec}`, tally);
      expect(failures.slice(0, 20)).toEqual([]);
      expect(tally.error).toBeGreaterThan(30);
      expect(tally.same).toBeGreaterThan(15);
    });
  }
});
