// Bad input through the real `basin` command: each mistake gives ONE clear error,
// a non-zero exit code, and names where it is (pipeline file:line:col, data file:line).
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorLines, makeTempDir, removeDir, runBasin, writeText, type CliResult } from "../helpers/cli.js";

let dir: string;

const GOOD = 'id,name,v,f\n1,Zürich,10,1.5\n2,東京,,2.5\n3,"a,b",30,\n4,y,40,4.5\n';

beforeAll(() => {
  dir = makeTempDir();
  writeText(dir, "good.csv", GOOD);
});
afterAll(() => removeDir(dir));

/** "line:col" (1-based) of `needle` in `source`; the needle must occur once. */
function at(source: string, needle: string): string {
  const i = source.indexOf(needle);
  if (i < 0 || source.indexOf(needle, i + 1) >= 0) throw new Error(`"${needle}" must occur exactly once`);
  const before = source.slice(0, i).split("\n");
  return `${before.length}:${before[before.length - 1].length + 1}`;
}

/** Writes a pipeline into the temp folder and runs `basin run <name>` there. */
async function run(name: string, source: string, extra: string[] = []): Promise<CliResult> {
  writeText(dir, name, source);
  return runBasin(["run", name, ...extra], { cwd: dir });
}

/**
 * Exit code 1, exactly one `error [CODE]: …` line, nothing on stdout, no stack
 * trace, and no location inside Basin itself or in a generated module.
 */
function expectOneError(r: CliResult, code: string): string {
  expect(r.signal).toBeNull();
  expect(r.code, r.stderr).toBe(1);
  const lines = errorLines(r.stderr);
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(new RegExp(`^error \\[${code}\\]: `));
  expect(r.stdout).toBe("");
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(r.stderr, "the location must be the user's file, not Basin's source").not.toMatch(
    /engine\/|dist\/|node_modules|data:text\/javascript/,
  );
  return lines[0];
}

describe("basin run: errors in the pipeline's inputs", () => {
  it("(a) readCsv of a missing file: BASIN_IO naming the path and the readCsv call", async () => {
    const src = `import { readCsv, col } from "basin";

const trips = readCsv("no/such/trips.csv");
export default trips.filter(col("v").gt(0));
`;
    const r = await run("missing.ts", src);
    const line = expectOneError(r, "BASIN_IO");
    expect(line).toContain("no/such/trips.csv");
    expect(line).toContain(`error [BASIN_IO]: missing.ts:${at(src, 'readCsv("no')}: `);
  });

  it("(a) a glob that matches nothing: BASIN_IO naming the pattern", async () => {
    const src = `import { readCsv } from "basin";\nexport default readCsv("nothing-*.csv");\n`;
    const line = expectOneError(await run("noglob.ts", src), "BASIN_IO");
    expect(line).toContain('"nothing-*.csv"');
    expect(line).toContain(`noglob.ts:${at(src, 'readCsv("nothing')}: `);
  });

  it("(a) a named pipe or a device: BASIN_IO at once, not a read that never ends", async () => {
    execFileSync("mkfifo", [join(dir, "pipe.csv")]);
    for (const [name, path] of [
      ["pipe", "pipe.csv"],
      ["device", "/dev/zero"],
    ] as const) {
      const src = `import { readCsv } from "basin";\nexport default readCsv("${path}");\n`;
      const line = expectOneError(await run(`${name}.ts`, src), "BASIN_IO");
      expect(line).toContain(`${path} is not a regular file (a ${name === "pipe" ? "named pipe" : "device"})`);
      expect(line).toContain(`${name}.ts:${at(src, "readCsv(")}: `);
    }
    // A glob passes over it: globs match regular files only.
    const src = `import { readCsv } from "basin";\nexport default readCsv("pip*.csv");\n`;
    expect(expectOneError(await run("glob.ts", src), "BASIN_IO")).toContain('no file matches "pip*.csv"');
  });

  it("(b) a row with the wrong number of fields: BASIN_PARSE naming data file:line", async () => {
    writeText(dir, "ragged.csv", "id,name,v\n1,a,10\n2,b,20\n3,c\n4,d,40\n5,e,50,extra\n6,f,60\n");
    const src = `import { readCsv } from "basin";\nexport default readCsv("ragged.csv");\n`;
    const line = expectOneError(await run("ragged.ts", src), "BASIN_PARSE");
    expect(line).toContain(`${join(dir, "ragged.csv")}:4:`);
    expect(line).toMatch(/expected 3 fields, found 2/);
    expect(line).toContain("onBadLines");
    expect(line).toContain(`ragged.ts:${at(src, 'readCsv("ragged')}: `);
  });

  it('(b) with onBadLines: "skip" the run succeeds without the bad rows and reports how many were skipped', async () => {
    const src = `import { readCsv } from "basin";\nexport default readCsv("ragged.csv", { onBadLines: "skip" });\n`;
    const r = await run("skip.ts", src);
    expect(r.code, r.stderr).toBe(0);
    expect(errorLines(r.stderr)).toEqual([]);
    expect(r.stderr).toMatch(/skipped 2 malformed line/);
    const ids = r.stdout
      .split("\n")
      .slice(3, -2)
      .map((l) => l.trim().split(/\s+/)[0]);
    expect(ids).toEqual(["1", "2", "4", "6"]);
    expect(r.stdout).toContain("4 rows × 3 columns");
    expect(r.stdout).not.toContain("extra");
  });

  it("(c) an unparsable number after the type-inference sample: BASIN_PARSE with file:line:column and a dtypes hint", async () => {
    // Over 1 MiB of integers, so the default 1 MiB sample sees only ints; then "abc".
    const rows = 200_000;
    let text = "a,b\n";
    for (let i = 0; i < rows; i++) text += `${i},${i % 7}\n`;
    expect(text.length).toBeGreaterThan(1 << 20);
    text += `${rows},abc\n${rows + 1},1\n`;
    writeFileSync(join(dir, "deep.csv"), text);
    const src = `import { readCsv, col } from "basin";\nexport default readCsv("deep.csv").select(col("b").sum());\n`;
    const line = expectOneError(await run("deep.ts", src), "BASIN_PARSE");
    // Header is line 1, so row i is on line i + 2; "abc" starts at column 8 ("200000," is 7 characters).
    expect(line).toContain(`${join(dir, "deep.csv")}:${rows + 2}:8: `);
    expect(line).toContain('"abc"');
    expect(line).toContain('column "b"');
    expect(line).toMatch(/dtypes/);
  });

  it("(c) the sampleBytes option bounds inference: a bad value just past a small sample", async () => {
    writeText(dir, "late.csv", "id,v\n1,2\n2,3\n3,4\n4,x5\n");
    const src = `import { readCsv } from "basin";\nexport default readCsv("late.csv", { sampleBytes: 12 });\n`;
    const line = expectOneError(await run("late.ts", src), "BASIN_PARSE");
    expect(line).toContain(`${join(dir, "late.csv")}:5:3: `);
    expect(line).toMatch(/"x5".*int64.*dtypes: \{ v: "string" \}/);
    // The hint works: with the dtype the same file reads.
    const ok = await run(
      "late_ok.ts",
      `import { readCsv } from "basin";\nexport default readCsv("late.csv", { sampleBytes: 12, dtypes: { v: "string" } });\n`,
    );
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^\s*4\s+x5$/m);
  });
});

describe("basin run: errors in the pipeline itself (found before anything runs)", () => {
  it("(d) summing a string column: BASIN_PLAN at the .sum() call, naming the type", async () => {
    const src = `import { readCsv, col } from "basin";

const df = readCsv("good.csv");
export default df
  .filter(col("v").gt(0))
  .select(col("name").sum());
`;
    const r = await run("sumstr.ts", src);
    const line = expectOneError(r, "BASIN_PLAN");
    expect(line).toContain(`error [BASIN_PLAN]: sumstr.ts:${at(src, "sum()")}: `);
    expect(line).toMatch(/sum\(\).*"name".*string/);
    // Nothing ran: no tasks, no progress.
    expect(r.stderr).not.toMatch(/tasks in/);
  });

  it("(d) DataFrame.sum() over only string columns: BASIN_PLAN at the call, listing the columns", async () => {
    const src = `import { readCsv } from "basin";\nexport default readCsv("good.csv").select("name").sum();\n`;
    const r = await run("framesum.ts", src);
    const line = expectOneError(r, "BASIN_PLAN");
    expect(line).toContain(`framesum.ts:${at(src, "sum()")}: `);
    expect(line).toMatch(/numeric/);
    expect(line).toMatch(/name/);
    expect(r.stderr).not.toMatch(/tasks in/);
  });

  it("(e) a column that does not exist: BASIN_PLAN listing the existing columns", async () => {
    const src = `import { readCsv, col } from "basin";
export default readCsv("good.csv")
  .withColumns({ w: col("v").mul(2) })
  .filter(col("nmae").eq("x"));
`;
    const r = await run("nocol.ts", src);
    const line = expectOneError(r, "BASIN_PLAN");
    expect(line).toContain('"nmae"');
    expect(line).toContain("id, name, v, f, w");
    expect(line).toContain(`nocol.ts:${at(src, 'col("nmae")')}: `);
    expect(r.stderr).not.toMatch(/tasks in/);
  });

  it("(e) a groupBy key that does not exist: BASIN_PLAN listing the existing columns", async () => {
    const src = `import { readCsv, count } from "basin";\nexport default readCsv("good.csv").groupBy("city").agg(count());\n`;
    const line = expectOneError(await run("nokey.ts", src), "BASIN_PLAN");
    expect(line).toContain('"city"');
    expect(line).toContain("id, name, v, f");
    expect(line).toContain(`nokey.ts:${at(src, "groupBy")}: `);
  });

  it("(f) a syntax error: BASIN_SYNTAX with pipeline file:line:column", async () => {
    const src = `import { readCsv } from "basin";\nconst df = readCsv("good.csv"\nexport default df;\n`;
    const r = await run("syntax.ts", src);
    const line = expectOneError(r, "BASIN_SYNTAX");
    // esbuild stops at "export" on line 3, column 1.
    expect(line).toMatch(/^error \[BASIN_SYNTAX\]: syntax\.ts:3:1: /);
    expect(line).toMatch(/Expected "\)"/);
  });

  it("(f) a syntax error in a pipeline named by absolute path, run from another folder", async () => {
    const other = makeTempDir();
    try {
      const file = join(dir, "syntax.ts");
      const r = await runBasin(["run", file], { cwd: other });
      const line = expectOneError(r, "BASIN_SYNTAX");
      expect(line).toContain(`error [BASIN_SYNTAX]: ${file}:3:1: `);
    } finally {
      removeDir(other);
    }
  });

  it("(f) an import that cannot be resolved: BASIN_SYNTAX naming the import", async () => {
    const src = `import { readCsv } from "basin";\nimport { x } from "./nowhere.ts";\nexport default readCsv("good.csv").head(x);\n`;
    const line = expectOneError(await run("badimport.ts", src), "BASIN_SYNTAX");
    expect(line).toContain("nowhere.ts");
    expect(line).toMatch(/badimport\.ts:2:\d+: /);
  });

  it("(g) a pipeline without a default export", async () => {
    const src = `import { readCsv } from "basin";\nexport const trips = readCsv("good.csv");\n`;
    const line = expectOneError(await run("nodefault.ts", src), "BASIN_PLAN");
    expect(line).toContain("nodefault.ts");
    expect(line).toMatch(/no default export/);
    expect(line).toContain("export default");
  });

  it("(g) a default export that is not a DataFrame", async () => {
    const src = `export default { rows: 3 };\n`;
    const line = expectOneError(await run("notframe.ts", src), "BASIN_PLAN");
    expect(line).toContain("notframe.ts");
    expect(line).toMatch(/must be a DataFrame/);
  });

  it("a pipeline file that does not exist: BASIN_IO naming it", async () => {
    const r = await runBasin(["run", "nope.ts"], { cwd: dir });
    const line = expectOneError(r, "BASIN_IO");
    expect(line).toContain("nope.ts");
  });

  it("an error thrown by the user's own code names the user's file, not Basin's", async () => {
    const src = `import { readCsv } from "basin";\nif (readCsv("good.csv").columns.length > 0) throw new Error("my own check failed");\nexport default readCsv("good.csv");\n`;
    const r = await run("throws.ts", src);
    expect(r.code).toBe(1);
    expect(errorLines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toContain("my own check failed");
    // Its stack trace points at the pipeline's own line, not at a generated module.
    expect(r.stderr).toMatch(/throws\.ts:2:\d+/);
    expect(r.stderr).not.toContain("data:text/javascript");
  });
});

describe("basin: usage errors exit with code 2 and print the usage", () => {
  const usage = (r: CliResult) => {
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain("usage:");
    expect(r.stderr).toContain("basin run <pipeline.ts>");
    expect(errorLines(r.stderr)).toEqual([]);
  };

  it("(h) an unknown command", async () => {
    const r = await runBasin(["frobnicate"], { cwd: dir });
    usage(r);
    expect(r.stderr).toContain('unknown command "frobnicate"');
  });

  it.each([["0"], ["-2"], ["1.5"], ["abc"], [""]])("(h) --workers %j", async (w) => {
    writeText(dir, "ok.ts", `import { readCsv } from "basin";\nexport default readCsv("good.csv");\n`);
    const r = await runBasin(["run", "ok.ts", "--workers", w], { cwd: dir });
    usage(r);
    // "-2" looks like an option to the argument parser, which says so in its own words.
    if (w.startsWith("-")) expect(r.stderr).toContain("--workers");
    else expect(r.stderr).toContain(`--workers needs a positive integer, got "${w}"`);
    expect(r.stdout).toBe("");
  });

  it("(h) --workers without a value, and --workers=-2", async () => {
    const missing = await runBasin(["run", "ok.ts", "--workers"], { cwd: dir });
    usage(missing);
    expect(missing.stderr).toContain("--workers");
    const eq = await runBasin(["run", "ok.ts", "--workers=-2"], { cwd: dir });
    usage(eq);
    expect(eq.stderr).toContain('--workers needs a positive integer, got "-2"');
  });

  it("(h) an unknown option", async () => {
    const r = await runBasin(["run", "ok.ts", "--wrokers", "2"], { cwd: dir });
    usage(r);
    expect(r.stderr).toContain("--wrokers");
  });

  it("(h) run without a file, and run with two files", async () => {
    usage(await runBasin(["run"], { cwd: dir }));
    usage(await runBasin(["run", "a.ts", "b.ts"], { cwd: dir }));
  });

  it("(h) no command at all prints the usage with code 2; help prints it with code 0", async () => {
    const none = await runBasin([], { cwd: dir });
    expect(none.code).toBe(2);
    expect(none.stdout + none.stderr).toContain("usage:");
    const help = await runBasin(["help"], { cwd: dir });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("usage:");
  });
});

describe("basin run --output", () => {
  it("(i) an unsupported format: a clear error naming the formats, and no file left behind", async () => {
    writeText(dir, "ok.ts", `import { readCsv } from "basin";\nexport default readCsv("good.csv");\n`);
    const before = readdirSync(dir).sort();
    const r = await runBasin(["run", "ok.ts", "--output", "x.xlsx"], { cwd: dir });
    const line = expectOneError(r, "BASIN_\\w+");
    expect(line).toContain("x.xlsx");
    expect(line).toContain(".csv");
    expect(line).toContain(".parquet");
    expect(line).toContain(".arrow");
    expect(existsSync(join(dir, "x.xlsx"))).toBe(false);
    expect(readdirSync(dir).sort()).toEqual(before);
  });

  it("(i) a folder that does not exist: BASIN_IO naming the path, and no partial file", async () => {
    const r = await runBasin(["run", "ok.ts", "--output", join("missing-dir", "out.csv")], { cwd: dir });
    const line = expectOneError(r, "BASIN_IO");
    expect(line).toContain(join("missing-dir", "out.csv"));
    expect(existsSync(join(dir, "missing-dir"))).toBe(false);
    expect(readdirSync(dir).filter((f) => f.includes("partial"))).toEqual([]);
  });
});

describe("basin run: mistakes in the pipeline's own code are the user's, not Basin's", () => {
  it("(j) a misspelt method, a throw and a missing import: BASIN_PIPELINE at the user's line, never BASIN_INTERNAL", async () => {
    const typo = `import { readCsv, col } from "basin";
const trips = readCsv("good.csv");
export default trips.fliter(col("v").gt(0));
`;
    const t = expectOneError(await run("typo.ts", typo), "BASIN_PIPELINE");
    expect(t).toContain(`typo.ts:${at(typo, "trips.fliter").split(":")[0]}:`);
    expect(t).toContain("TypeError");
    expect(t).toContain("fliter is not a function");

    const thrower = `import { readCsv } from "basin";
if (readCsv("good.csv").columns.length < 10) throw new Error("need ten columns");
export default readCsv("good.csv");
`;
    const th = expectOneError(await run("thrower.ts", thrower), "BASIN_PIPELINE");
    expect(th).toContain(`thrower.ts:${at(thrower, "throw new").split(":")[0]}:`);
    expect(th).toContain("Error: need ten columns");

    const missing = `import { col,
  readCsvv } from "basin";
export default readCsvv("good.csv").filter(col("v").gt(0));
`;
    const m = expectOneError(await run("missing_import.ts", missing), "BASIN_PIPELINE");
    expect(m).toContain(`missing_import.ts:${at(missing, "readCsvv }")}:`);
    expect(m).toContain("does not provide an export named 'readCsvv'");
    expect(m).toContain("'basin'");
  });

  it("(j3) a default export that rejects is BASIN_PIPELINE at its line; one that never settles says so, not exit 13", async () => {
    const rej = `export default Promise.reject(new Error("boom"));\n`;
    const r = expectOneError(await run("rejects.ts", rej), "BASIN_PIPELINE");
    expect(r).toContain(`rejects.ts:${at(rej, "new Error")}`);
    expect(r).toContain("Error: boom");
    for (const [file, source] of [
      ["never.ts", `export default new Promise(() => {});\n`],
      [
        "never_await.ts",
        `import { fromColumns } from "basin";\nawait new Promise(() => {});\nexport default fromColumns({ a: [1] });\n`,
      ],
    ]) {
      const e = expectOneError(await run(file, source), "BASIN_PIPELINE");
      expect(e, file).toContain(`${file}: the pipeline waits on a Promise that never settles`);
    }
  });

  it("(j2) a thrown value that is not an Error is shown as written, and how to get its line", async () => {
    const cases: [string, string, string][] = [
      ["string.ts", `throw "boom";\n`, `threw "boom", which is not an Error`],
      [
        "object.ts",
        `await Promise.reject({ why: "no" });\nexport default 1;\n`,
        `threw {"why":"no"}, which is not an Error`,
      ],
      ["null.ts", `throw null;\n`, "threw null, which is not an Error"],
      [
        "map.ts",
        `import { bag } from "basin";\nexport default bag.fromItems([1, 2]).map((x: number) => { if (x > 1) throw { bad: x }; return x; });\n`,
        `threw {"bad":2}`,
      ],
    ];
    for (const [file, source, says] of cases) {
      const e = expectOneError(await run(file, source), file === "map.ts" ? "BASIN_FUNCTION" : "BASIN_PIPELINE");
      expect(e, file).toContain(says);
      expect(e, file).not.toContain("[object Object]");
      if (file !== "map.ts") expect(e, file).toContain("throw new Error(...) to see where it comes from");
    }
  });
});

describe("basin serve: a busy port", () => {
  it("(k) says the port is in use (BASIN_IO), not an engine bug", async () => {
    const { createServer } = await import("node:net");
    const busy = createServer();
    await new Promise<void>((ok) => busy.listen(0, "127.0.0.1", ok));
    try {
      const port = (busy.address() as { port: number }).port;
      const r = await runBasin(["serve", dir, "--port", String(port)], { cwd: dir });
      const line = expectOneError(r, "BASIN_IO");
      expect(line).toContain(`port ${port} on 127.0.0.1 is already in use`);
    } finally {
      busy.close();
    }
  });
});

describe("basin run: a wrong thing to run", () => {
  it("a folder, a data file and too many workers: one clear error each, never BASIN_INTERNAL", async () => {
    let line = expectOneError(await runBasin(["run", "."], { cwd: dir }), "BASIN_IO");
    expect(line).toContain(". is a folder; name a pipeline file in it");
    line = expectOneError(await runBasin(["run", "good.csv"], { cwd: dir }), "BASIN_IO");
    expect(line).toContain("good.csv is not a pipeline: a pipeline is a TypeScript or JavaScript module");
    writeText(dir, "tiny.ts", 'import { fromColumns } from "basin";\nexport default fromColumns({ a: [1] });\n');
    line = expectOneError(await runBasin(["run", "tiny.ts", "--workers", "100000"], { cwd: dir }), "BASIN_PLAN");
    expect(line).toMatch(/workers 100000 is more than this machine can run \(at most \d+: 8 per core\)/);
  });
});
