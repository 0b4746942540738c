// CSV kernel (csvSplit / csvInfer / csvScan) against DuckDB's read_csv as the oracle.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import { decodeStrings, native, type JsStrings, type Handle } from "../../engine/native/addon.js";
import type { CsvOptions, CsvScanOptions } from "../../engine/graph/kernel_args.js";
import type { DType } from "../../engine/common/types.js";
import { seededRandom } from "../../engine/common/random.js";

const OPTS: CsvOptions = { delimiter: ",", header: true, nullValues: [""] };

let dir: string;
let conn: DuckDBConnection;
let fileNo = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "basin-csv-"));
  const db = await DuckDBInstance.create(":memory:");
  conn = await db.connect();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const handles: Handle[] = [];
afterEach(() => {
  for (const h of handles.splice(0)) native().release(h);
  const s = native().storeStats();
  expect(s.handles).toBe(0);
  expect(s.buffers).toBe(0);
});

function write(content: string | Buffer): string {
  const p = join(dir, `f${fileNo++}.csv`);
  writeFileSync(p, content);
  return p;
}

type Cell = bigint | number | boolean | string | null;

/** Scans one byte range and returns its rows as JS values (date: days, timestamp: µs as bigint). */
function scanRows(path: string, start: number, end: number, opts: CsvScanOptions) {
  const r = native().csvScan(path, start, end, opts);
  handles.push(r.handle);
  const t = native().tableToJs(r.handle);
  expect(t.rows).toBe(r.rows);
  const rows: Cell[][] = [];
  const values = t.columns.map((c) =>
    c.type === "string" ? decodeStrings(c.values as JsStrings, c.validity) : (c.values as ArrayLike<unknown>),
  );
  for (let i = 0; i < t.rows; i++) {
    rows.push(
      t.columns.map((c, j) => {
        if (c.validity && !c.validity[i]) return null;
        const v = values[j][i];
        return c.type === "bool" ? v === 1 : (v as Cell);
      }),
    );
  }
  return { rows, names: t.names, skipped: r.skipped };
}

function scanOpts(names: string[], types: DType[], extra: Partial<CsvScanOptions> = {}): CsvScanOptions {
  return { ...OPTS, names, types, columns: names.map((_, i) => i), line: 1, onBadLines: "error", ...extra };
}

/** Splits with `blocksize`, checks the block invariants, scans every block and concatenates. */
function scanAll(path: string, blocksize: number, opts: CsvScanOptions) {
  const blocks = native().csvSplit(path, blocksize, opts);
  const bytes = readFileSync(path);
  expect(blocks[0].start).toBe(0);
  expect(blocks[blocks.length - 1].end).toBe(bytes.length);
  let rows: Cell[][] = [];
  let skipped = 0;
  let names: string[] = [];
  blocks.forEach((b, i) => {
    if (i > 0) {
      expect(b.start).toBe(blocks[i - 1].end);
      expect(bytes[b.start - 1]).toBe(0x0a); // a row boundary follows a newline
    }
    if (i < blocks.length - 1) expect(b.end - b.start).toBeGreaterThanOrEqual(blocksize);
    let nl = 0;
    for (let k = 0; k < b.start; k++) if (bytes[k] === 0x0a) nl++;
    expect(b.line).toBe(nl + 1);
    const r = scanRows(path, b.start, b.end, { ...opts, line: b.line });
    rows = rows.concat(r.rows);
    skipped += r.skipped;
    names = r.names;
  });
  return { rows, skipped, blocks, names };
}

// ---------------------------------------------------------------------------------------
// Random files

const NAMES = ["id", "i", "f", "b", "s", "d", "t"];
const TYPES: DType[] = ["int64", "int64", "float64", "bool", "string", "date", "timestamp"];
const DUCK_TYPES = ["BIGINT", "BIGINT", "DOUBLE", "BOOLEAN", "VARCHAR", "DATE", "TIMESTAMP"];
const STRINGS = [
  "zürich",
  "東京",
  "emoji 🎉🐍",
  "plain",
  "has,comma",
  'has "quotes"',
  "multi\nline",
  "crlf\r\ninside",
  '"',
  ",",
  'a,"b"\n,c',
  "x".repeat(150),
  "ünïcödé, with comma",
  "tab\there",
];

function pad(n: number, w: number) {
  return String(n).padStart(w, "0");
}

interface GenOptions {
  rows: number;
  seed: number;
  header?: boolean;
  crlf?: boolean;
  bom?: boolean;
  trailingNewline?: boolean;
}

function genCsv(o: GenOptions): string {
  const r = seededRandom(o.seed);
  const nl = o.crlf ? "\r\n" : "\n";
  const pick = <T>(a: T[]) => a[Math.floor(r() * a.length)];
  const quote = (s: string) => `"${s.replaceAll('"', '""')}"`;
  const lines: string[] = [];
  if (o.header !== false) lines.push(NAMES.map((n, i) => (i === 4 ? quote(n) : n)).join(","));
  for (let k = 0; k < o.rows; k++) {
    const f: string[] = [String(k)];
    const nul = () => r() < 0.1;
    f.push(
      nul()
        ? ""
        : pick([String(Math.floor((r() - 0.5) * 2e6)), "9223372036854775807", "-9223372036854775808", "+42", "007"]),
    );
    f.push(
      nul()
        ? ""
        : pick([
            String((r() - 0.5) * 1e6),
            (r() * 100).toFixed(3),
            `${(r() * 10).toFixed(2)}e-${Math.floor(r() * 20)}`,
            `${Math.floor(r() * 1000)}`,
            "-0.5",
            "1E10",
            ".25",
          ]),
    );
    f.push(nul() ? "" : pick(["true", "false", "TRUE", "False"]));
    if (nul()) f.push(r() < 0.5 ? "" : '""');
    else {
      const s = pick(STRINGS);
      f.push(/[,"\n\r]/.test(s) || r() < 0.3 ? quote(s) : s);
    }
    const day = new Date(Date.UTC(1900, 0, 1) + Math.floor(r() * 73000) * 86400000);
    const ymd = `${day.getUTCFullYear()}-${pad(day.getUTCMonth() + 1, 2)}-${pad(day.getUTCDate(), 2)}`;
    f.push(nul() ? "" : r() < 0.2 ? quote(ymd) : ymd);
    if (nul()) f.push("");
    else {
      const hms = `${pad(Math.floor(r() * 24), 2)}:${pad(Math.floor(r() * 60), 2)}:${pad(Math.floor(r() * 60), 2)}`;
      const frac =
        r() < 0.5
          ? ""
          : "." +
            String(Math.floor(r() * 1e6))
              .padStart(6, "0")
              .slice(0, 1 + Math.floor(r() * 6));
      f.push(`${ymd}${r() < 0.5 ? "T" : " "}${hms}${frac}`);
    }
    lines.push(f.join(","));
  }
  let s = lines.join(nl);
  if (o.trailingNewline !== false && lines.length) s += nl;
  return (o.bom ? "\ufeff" : "") + s;
}

async function duckRows(path: string, header: boolean, columns = NAMES.map((_, i) => i)): Promise<Cell[][]> {
  const cols = NAMES.map((n, i) => `'${n}': '${DUCK_TYPES[i]}'`).join(", ");
  const sel = columns
    .map((i) => {
      const n = NAMES[i];
      if (TYPES[i] === "date") return `CAST(${n} - DATE '1970-01-01' AS INTEGER) AS ${n}`;
      if (TYPES[i] === "timestamp") return `epoch_us(${n}) AS ${n}`;
      return n;
    })
    .join(", ");
  const sql =
    `SELECT ${sel} FROM read_csv('${path}', header=${header}, delim=',', quote='"', escape='"', ` +
    `nullstr='', auto_detect=false, columns={${cols}})`;
  const r = await conn.runAndReadAll(sql);
  return r.getRowsJS() as Cell[][];
}

describe("csv against DuckDB", () => {
  const cases: [string, GenOptions][] = [
    ["LF with header", { rows: 300, seed: 1 }],
    ["CRLF, BOM, no final newline", { rows: 300, seed: 2, crlf: true, bom: true, trailingNewline: false }],
    ["no header", { rows: 200, seed: 3, header: false }],
    ["one row", { rows: 1, seed: 4 }],
  ];
  for (const [label, g] of cases) {
    it(label, async () => {
      const path = write(genCsv(g));
      const header = g.header !== false;
      const expected = await duckRows(path, header);
      expect(expected.length).toBe(g.rows);
      const opts = scanOpts(NAMES, TYPES, { header });
      for (const bs of [1, 64, 333, 4096, 1 << 24]) {
        const got = scanAll(path, bs, opts);
        expect(got.skipped).toBe(0);
        expect(got.rows).toEqual(expected);
        if (bs === 64 && g.rows > 10) expect(got.blocks.length).toBeGreaterThan(10);
      }
      const inferred = native().csvInfer(path, { ...opts, sampleBytes: 1 << 20 });
      expect(inferred.names).toEqual(header ? NAMES : NAMES.map((_, i) => `column_${i}`));
    });
  }

  it("projects a reordered subset of columns", async () => {
    const path = write(genCsv({ rows: 150, seed: 5 }));
    const cols = [4, 0, 6, 2];
    const expected = await duckRows(path, true, cols);
    const got = scanAll(path, 100, scanOpts(NAMES, TYPES, { columns: cols }));
    expect(got.names).toEqual(["s", "id", "t", "f"]);
    expect(got.rows).toEqual(expected);
  });

  it("infers the generated types from a clean sample", () => {
    // Column i holds "+42"/"007" (ints); s holds strings; d dates; t timestamps.
    const path = write(genCsv({ rows: 200, seed: 6 }));
    const s = native().csvInfer(path, { ...OPTS, sampleBytes: 1 << 20 });
    expect(s.types).toEqual(TYPES);
  });
});

describe("csvSplit", () => {
  it("never starts a block inside a quoted newline", () => {
    const row = '1,"a\nb\nc\nd\ne\nf\ng\nh",2\n';
    const path = write("x,y,z\n" + row.repeat(50));
    for (const bs of [1, 3, 7, 20]) {
      const blocks = native().csvSplit(path, bs, OPTS);
      const bytes = readFileSync(path, "utf8");
      for (const b of blocks.slice(1)) expect(bytes.slice(b.start, b.start + 3)).toBe('1,"');
      if (bs <= 6) {
        expect(blocks[1].start).toBe(6);
        expect(blocks[2].line).toBe(10);
      }
      expect(scanAll(path, bs, scanOpts(["x", "y", "z"], ["int64", "string", "int64"])).rows.length).toBe(50);
    }
  });

  it("tracks quotes across its 4 MiB read chunks", () => {
    const chunk = 4 << 20;
    for (let k = -2; k <= 6; k++) {
      // The escaped quote `""` of the critical row sits around the chunk boundary.
      const critical = '1,"p""\n,q"\n';
      const target = chunk - 1 - k - 4;
      const m = 1_000_000;
      const pad = target - 4 - 3 - 4 * m;
      const content = "a,b\n" + "x".repeat(pad) + ",y\n" + "x,y\n".repeat(m) + critical + "z,w\n".repeat(10);
      const path = write(content);
      // The first block must end after the critical row, not at the newline inside its quotes.
      const got = scanAll(path, target + 1, scanOpts(["a", "b"], ["string", "string"], { columns: [1] }));
      expect(got.blocks[0].end).toBe(target + critical.length);
      expect(got.rows.length).toBe(m + 12);
      expect(got.rows[m + 1]).toEqual(['p"\n,q']);
      expect(got.blocks.length).toBe(2);
      rmSync(path);
    }
  });

  it("returns one empty block for an empty file", () => {
    const path = write("");
    expect(native().csvSplit(path, 64, OPTS)).toEqual([{ start: 0, end: 0, line: 1 }]);
  });

  it("handles escaped quotes around chunk-like boundaries", () => {
    const path = write('a,b\n"x""\n""y",1\n"""",2\n');
    const blocks = native().csvSplit(path, 1, OPTS);
    expect(blocks.map((b) => b.start)).toEqual([0, 4, 16]);
    expect(blocks.map((b) => b.line)).toEqual([1, 2, 4]);
  });
});

describe("csvScan", () => {
  it("reads rows longer than 64 bytes, and rows with quotes or CR among plain ones, field by field", () => {
    const long = "y".repeat(70);
    const text =
      `a,b,c\n1,${long},${"z".repeat(130)}\n2,"q,${long}",x\n3,p,${long}\r\n4,,\n` +
      `5,${"w".repeat(60)},"tail"\n6,"a\rb",c\n7,${long},last`;
    const path = write(text);
    const opts = scanOpts(["a", "b", "c"], ["int64", "string", "string"]);
    const want = [
      [1n, long, "z".repeat(130)],
      [2n, `q,${long}`, "x"],
      [3n, "p", long],
      [4n, null, null],
      [5n, "w".repeat(60), "tail"],
      [6n, "a\rb", "c"],
      [7n, long, "last"],
    ];
    expect(scanRows(path, 0, text.length, opts).rows).toEqual(want);
    expect(() => scanRows(write("a,b\n1,2,3\n"), 0, 10, scanOpts(["a", "b"], ["int64", "int64"]))).toThrow(
      "expected 2 fields, found 3",
    );
    // A lone CR in an unquoted field: DuckDB, pandas and Python's csv end the line there.
    expect(() => scanRows(write("a,b\n1,x\ry\n"), 0, 10, scanOpts(["a", "b"], ["int64", "string"]))).toThrow(
      ":2:4: a carriage return inside an unquoted field",
    );
  });

  it("reads blocks of 1 MiB and more (mapped) the same as small ones, whatever the file ends on", () => {
    // A file whose size is a multiple of the page size (no room after its end: read, not
    // mapped), one 64 bytes short of it (mapped to the page end), 16 short, and one past it.
    for (const size of [3 << 20, (3 << 20) - 64, (3 << 20) - 16, (3 << 20) + 5]) {
      let text = "k,v,s\n";
      let i = 0;
      while (text.length < size - 40) text += `${i},${i * 0.5},s${i++}\n`;
      text += "x".repeat(size - text.length - 1) + "\n"; // a last row of one long field
      text = text.replace(/\n(x+)\n$/, `\n${i},0,$1\n`);
      const path = write(text.slice(0, size));
      expect(readFileSync(path).length).toBe(size);
      const opts = scanOpts(["k", "v", "s"], ["int64", "float64", "string"]);
      const big = scanAll(path, 1 << 20, opts);
      expect(big.blocks.length).toBeGreaterThan(1);
      const small = scanAll(path, 1 << 16, opts);
      expect(big.rows).toEqual(small.rows);
      expect(big.rows.length).toBe(i + 1);
      expect(big.rows[i - 1]).toEqual([BigInt(i - 1), (i - 1) * 0.5, `s${i - 1}`]);
    }
  });

  it("skips blank lines and a BOM, and reads a last line without newline", () => {
    const path = write('\ufeffa,b\n\n1,x\r\n\r\n\n2,"y"\n\n3,z');
    const got = scanAll(path, 2, scanOpts(["a", "b"], ["int64", "string"]));
    expect(got.rows).toEqual([
      [1n, "x"],
      [2n, "y"],
      [3n, "z"],
    ]);
    expect(native().csvInfer(path, { ...OPTS, sampleBytes: 100 })).toEqual({
      names: ["a", "b"],
      types: ["int64", "string"],
      seen: [true, true],
    });
  });

  it("reads an empty file as no columns and no rows", () => {
    const path = write("");
    const none = { names: [], types: [], seen: [] };
    expect(native().csvInfer(path, { ...OPTS, header: false, sampleBytes: 100 })).toEqual(none);
    expect(native().csvInfer(path, { ...OPTS, sampleBytes: 100 })).toEqual(none);
    const r = scanRows(path, 0, 0, scanOpts([], []));
    expect(r.rows).toEqual([]);
  });

  it("reads a header-only file as zero rows of strings", () => {
    const path = write("a,b\n");
    // Strings, as a guess: no value was seen (readCsv takes the type from another file that has one).
    expect(native().csvInfer(path, { ...OPTS, sampleBytes: 100 })).toEqual({
      names: ["a", "b"],
      types: ["string", "string"],
      seen: [false, false],
    });
    expect(scanRows(path, 0, 4, scanOpts(["a", "b"], ["string", "string"])).rows).toEqual([]);
  });

  it("reports a wrong field count with its line, or skips and counts it", () => {
    const path = write('a,b\n1,2\n"multi\nline",3\n4,5,6\n7\n8,9\n');
    const opts = scanOpts(["a", "b"], ["string", "int64"]);
    expect(() => scanAll(path, 1 << 20, opts)).toThrow(
      `${path}:5:1: expected 2 fields, found 3 (fix the line, or pass onBadLines: "skip" to drop such lines)`,
    );
    // The same line number when the bad row sits in a later block.
    expect(() => scanAll(path, 8, opts)).toThrow(`${path}:5:1: expected 2 fields, found 3`);
    try {
      scanAll(path, 1 << 20, opts);
    } catch (e) {
      expect((e as { code: string }).code).toBe("BASIN_PARSE");
    }
    const got = scanAll(path, 8, { ...opts, onBadLines: "skip" });
    expect(got.skipped).toBe(2);
    expect(got.rows).toEqual([
      ["1", 2n],
      ["multi\nline", 3n],
      ["8", 9n],
    ]);
  });

  it("reports an unparsable value with line, column, and a hint", () => {
    const path = write('name,n,x\n"a\nb",1,2\nc,  ,3\nd,4.5,6\n');
    const opts = scanOpts(["name", "n", "x"], ["string", "int64", "int64"], { nullValues: ["", "  "] });
    const msg =
      `${path}:5:3: cannot parse "4.5" as int64 in column "n" ` +
      `(pass dtypes: { n: "string" } to read it as text, or fix the value)`;
    expect(() => scanAll(path, 1 << 20, opts)).toThrow(msg);
    expect(() => scanAll(path, 1, opts)).toThrow(msg);
    const got = scanAll(path, 1, { ...opts, onBadLines: "skip" });
    expect(got.skipped).toBe(1);
    expect(got.rows).toEqual([
      ["a\nb", 1n, 2n],
      ["c", null, 3n],
    ]);
    // A skipped row inside a block drops the fields written before the bad one (a null too).
    const mid = write("name,n,x\nq,1,2\nbad,,x\n,7,8\nr,,9\n");
    const skipMid = scanAll(mid, 1 << 20, { ...opts, onBadLines: "skip" });
    expect(skipMid.skipped).toBe(1);
    expect(skipMid.rows).toEqual([
      ["q", 1n, 2n],
      [null, 7n, 8n],
      ["r", null, 9n],
    ]);
  });

  it("truncates long unparsable text to 40 characters", () => {
    const long = "ü".repeat(50);
    const path = write(`v\n${long}\n`);
    expect(() => scanAll(path, 1 << 20, scanOpts(["v"], ["float64"]))).toThrow(
      `${path}:2:1: cannot parse "${"ü".repeat(40)}" as float64 in column "v"`,
    );
  });

  it("fails clearly on a missing file or a directory", () => {
    const missing = join(dir, "nope.csv");
    const check = (fn: () => unknown, msg: string) => {
      try {
        fn();
        expect.unreachable();
      } catch (e) {
        expect((e as Error).message).toBe(msg);
        expect((e as { code: string }).code).toBe("BASIN_IO");
      }
    };
    const gone = `${missing}: no such file (check the path or glob)`;
    check(() => native().csvSplit(missing, 1024, OPTS), gone);
    check(() => native().csvInfer(missing, { ...OPTS, sampleBytes: 10 }), gone);
    check(() => native().csvScan(missing, 0, 10, scanOpts(["a"], ["string"])), gone);
    const sub = join(dir, "adir");
    mkdirSync(sub, { recursive: true });
    expect(() => native().csvSplit(sub, 1024, OPTS)).toThrow("is a directory");
  });

  it("parses edge values of every type", () => {
    const path = write(
      "i,f,b,d,t\n" +
        "9223372036854775807,nan,1,1970-01-01,2024-02-29T23:59:59.123456789Z\n" +
        "-9223372036854775808,-inf,0,1969-12-31,1969-12-31 23:59:59.5\n" +
        "+7,1e308,TRUE,2000-02-29,2000-01-01\n" +
        "-0,-1.5E-3,fAlSe,1600-03-01,1970-01-01T00:00:00\n",
    );
    const got = scanAll(
      path,
      1 << 20,
      scanOpts(["i", "f", "b", "d", "t"], ["int64", "float64", "bool", "date", "timestamp"]),
    );
    expect(got.rows[0][1]).toBeNaN();
    got.rows[0][1] = 0;
    expect(got.rows).toEqual([
      [9223372036854775807n, 0, true, 0, 1709251199123456n],
      [-9223372036854775808n, -Infinity, false, -1, -500000n],
      [7n, 1e308, true, 11016, 946684800000000n],
      [0n, -1.5e-3, false, -135080, 0n],
    ]);
  });

  it("rejects invalid values per type", () => {
    const cases: [DType, string][] = [
      ["int64", "9223372036854775808"],
      ["int64", "1.0"],
      ["int64", "1e3"],
      ["int64", "-"],
      ["int64", " 1"],
      ["float64", "1.2.3"],
      ["float64", "abc"],
      ["float64", "0x10"],
      ["bool", "yes"],
      ["bool", "2"],
      ["date", "2023-02-29"],
      ["date", "2023-13-01"],
      ["date", "2023-1-01"],
      ["timestamp", "2023-01-01 24:00:00"],
      ["timestamp", "2023-01-01T00:00:00.1234567890"],
      ["timestamp", "2023-01-01T00:00"],
    ];
    for (const [t, v] of cases) {
      const path = write(`c\n${v}\n`);
      expect(() => scanRows(path, 0, v.length + 3, scanOpts(["c"], [t])), `${t} ${v}`).toThrow(`as ${t} in column "c"`);
    }
  });

  it("supports other delimiters and null values", () => {
    const path = write('a;b;c\n1;NA;"x;y"\n;2.5;NA\n');
    const opts = scanOpts(["a", "b", "c"], ["int64", "float64", "string"], { delimiter: ";", nullValues: ["NA"] });
    // "" is not a null value here, so the empty int is unparsable.
    expect(() => scanAll(path, 1 << 20, opts)).toThrow(`${path}:3:1: cannot parse "" as int64 in column "a"`);
    const got = scanAll(path, 1 << 20, { ...opts, nullValues: ["NA", ""] });
    expect(got.rows).toEqual([
      [1n, null, "x;y"],
      [null, 2.5, null],
    ]);
    const tab = write("a\tb\n1\tx y\n");
    expect(native().csvInfer(tab, { ...OPTS, delimiter: "\t", sampleBytes: 100 })).toEqual({
      names: ["a", "b"],
      types: ["int64", "string"],
      seen: [true, true],
    });
  });

  it("keeps quotes inside unquoted fields literally", () => {
    const path = write('a,b\nx,ab"c\n"p""q","s"\r\n');
    const got = scanAll(path, 1, scanOpts(["a", "b"], ["string", "string"]));
    expect(got.rows).toEqual([
      ["x", 'ab"c'],
      ['p"q', "s"],
    ]);
  });

  it("reports text after a closing quote at its line and column, or skips the line when asked", () => {
    const path = write('a,b\n"x",1\n"p""q"r,"s"\n"ok",2\n');
    expect(() => scanAll(path, 1, scanOpts(["a", "b"], ["string", "string"]))).toThrow(
      /:3:7: text after a closing quote/,
    );
    const got = scanAll(path, 1, scanOpts(["a", "b"], ["string", "string"], { onBadLines: "skip" }));
    expect(got.rows).toEqual([
      ["x", "1"],
      ["ok", "2"],
    ]);
  });
});

describe("csvScan, an unterminated quote", () => {
  it("is an error at its line and column, or with skip drops only its line and reads every row after it", () => {
    const lines = [
      "a,b",
      "1,x",
      '2,"multi',
      'line ok"',
      '3,"oops',
      ...Array.from({ length: 200 }, (_, i) => `${i + 4},y`),
    ];
    const path = write(lines.join("\n") + "\n");
    const types: DType[] = ["int64", "string"];
    expect(() => scanAll(path, 1 << 20, scanOpts(["a", "b"], types))).toThrow(/:5:3: unterminated quoted field/);
    for (const blocksize of [1 << 20, 64, 1]) {
      const got = scanAll(path, blocksize, scanOpts(["a", "b"], types, { onBadLines: "skip" }));
      expect(got.skipped, `blocksize ${blocksize}`).toBe(1);
      expect(got.rows).toEqual([
        [1n, "x"],
        [2n, "multi\nline ok"],
        ...Array.from({ length: 200 }, (_, i) => [BigInt(i + 4), "y"]),
      ]);
    }
  });
});

describe("csvInfer", () => {
  const infer = (content: string, extra: Partial<CsvOptions & { sampleBytes: number }> = {}) =>
    native().csvInfer(write(content), { ...OPTS, sampleBytes: 1 << 20, ...extra });

  it("infers each type over non-null values", () => {
    const s = infer(
      "int,float,bool,date,ts,str,nul,big,mixed\n" +
        "1,1.5,true,2020-01-01,2020-01-01T10:00:00,a,,9223372036854775808,2020-01-01\n" +
        ",NaN,FALSE,,2020-01-01 10:00:00.123456789Z,,,1,2020-01-01 00:00:00\n" +
        "-3,-Inf,,1999-12-31,,b,,2,\n" +
        "+4,7,True,2000-02-29,2020-01-01T10:00:00Z,3,,3,\n",
    );
    expect(s.types).toEqual(["int64", "float64", "bool", "date", "timestamp", "string", "string", "float64", "string"]);
  });

  it("respects nullValues", () => {
    expect(infer("a,b\nNA,1\n2,NA\n", { nullValues: ["NA"] }).types).toEqual(["int64", "int64"]);
    expect(infer("a,b\nNA,1\n2,NA\n").types).toEqual(["string", "string"]);
  });

  it("names empty header fields and rejects duplicates", () => {
    expect(infer('a,,"",b\n1,2,3,4\n').names).toEqual(["a", "column_1", "column_2", "b"]);
    expect(infer("a,b,c\n").types).toEqual(["string", "string", "string"]);
    expect(infer("1,x\n2,y\n", { header: false })).toEqual({
      names: ["column_0", "column_1"],
      types: ["int64", "string"],
      seen: [true, true],
    });
    const path = write("a,b,a\n1,2,3\n");
    try {
      native().csvInfer(path, { ...OPTS, sampleBytes: 100 });
      expect.unreachable();
    } catch (e) {
      expect((e as { code: string }).code).toBe("BASIN_PARSE");
      expect((e as Error).message).toContain(`${path}:1:`);
      expect((e as Error).message).toContain(`duplicate column name "a"`);
    }
  });

  it("samples only the first sampleBytes, cut at a complete row", () => {
    const content = "a,b\n" + "1,2\n".repeat(100) + "x,2.5\n";
    expect(infer(content, { sampleBytes: 64 }).types).toEqual(["int64", "int64"]);
    expect(infer(content, { sampleBytes: 1 << 20 }).types).toEqual(["string", "float64"]);
    // A sample that ends mid-row drops the partial row ("1" would otherwise look like an int).
    expect(infer("a\nx\n1234567", { sampleBytes: 5 }).types).toEqual(["string"]);
    // The first rows are longer than the sample: read on until a complete data row.
    const wide = "col_" + "x".repeat(200) + ",b\n" + '"' + "y".repeat(300) + '",1\n';
    expect(infer(wide, { sampleBytes: 10 })).toEqual({
      names: ["col_" + "x".repeat(200), "b"],
      types: ["string", "int64"],
      seen: [true, true],
    });
  });
});
