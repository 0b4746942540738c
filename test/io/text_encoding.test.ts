// Text that is not what it claims: invalid UTF-8 is an error at its line and column
// (or transcoded when the user names the encoding), classic-Mac line ends read as
// lines, an empty file is an error, and NDJSON lines that repeat a key or carry an
// impossible date are errors, not silent choices.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tableFromArrays, tableToIPC } from "apache-arrow";
import { afterAll, describe, expect, it } from "vitest";
import { col, LocalCluster, readArrow, readCsv, readJson, type DataFrame } from "../../engine/api/index.js";
import { tableRows } from "../helpers/oracle.js";
import { errorLines, runBasin, writeText } from "../helpers/cli.js";

const dir = mkdtempSync(join(tmpdir(), "basin-text-"));
const cluster = new LocalCluster({ workers: 2 });
afterAll(async () => {
  await cluster.close();
  rmSync(dir, { recursive: true, force: true });
});

function file(name: string, bytes: Uint8Array | string): string {
  const p = join(dir, name);
  writeFileSync(p, bytes);
  return p;
}

const rows = async (frame: DataFrame) => tableRows(await frame.compute({ cluster }));

/** The error a lazy frame (or building it) fails with. */
async function failure(make: () => DataFrame): Promise<{ code: string; message: string }> {
  try {
    await make().compute({ cluster });
  } catch (e) {
    return e as { code: string; message: string };
  }
  throw new Error("expected an error");
}

// "Zürich" in Latin-1: ü is the single byte 0xFC, not valid UTF-8.
const LATIN1 = Uint8Array.from([...Buffer.from("city,n\nZ"), 0xfc, ...Buffer.from("rich,1\nBern,2\n")]);

describe("CSV encodings", () => {
  it("an invalid UTF-8 byte is BASIN_PARSE at its file, line and column, suggesting the encoding option", async () => {
    const p = file("latin1.csv", LATIN1);
    const e = await failure(() => readCsv(p));
    expect(e.code).toBe("BASIN_PARSE");
    expect(e.message).toContain(`${p}:2:2: byte 0xFC is not valid UTF-8`);
    expect(e.message).toContain('encoding: "latin1"');
  });

  it("an invalid byte past the inference sample fails the scan at its line", async () => {
    const head = "k,s\n" + Array.from({ length: 200 }, (_, i) => `${i},ok${i}`).join("\n") + "\n";
    const p = file("late.csv", Buffer.concat([Buffer.from(head), Buffer.from([0x31, 0x2c, 0xc3, 0x28, 0x0a])]));
    const e = await failure(() => readCsv(p, { sampleBytes: 64, blocksize: 256 }));
    expect(e.code).toBe("BASIN_PARSE");
    expect(e.message).toContain(`${p}:202:3: byte 0xC3 is not valid UTF-8`);
  });

  it('encoding: "latin1" reads Latin-1 text as the characters it means', async () => {
    expect(await rows(readCsv(file("latin1b.csv", LATIN1), { encoding: "latin1" }))).toEqual([
      ["Zürich", 1],
      ["Bern", 2],
    ]);
  });

  it('encoding: "replace" reads invalid bytes as U+FFFD', async () => {
    expect(await rows(readCsv(file("latin1c.csv", LATIN1), { encoding: "replace" }))).toEqual([
      ["Z\uFFFDrich", 1],
      ["Bern", 2],
    ]);
  });

  it("an unknown encoding is BASIN_PLAN naming the choices", async () => {
    const e = await failure(() => readCsv(file("any.csv", "a\n1\n"), { encoding: "cp1252" as "utf8" }));
    expect(e.code).toBe("BASIN_PLAN");
    expect(e.message).toContain('"utf8", "latin1", "replace"');
  });

  it("classic-Mac line ends (CR alone) read as lines, with clean column names", async () => {
    const p = file("mac.csv", "a,b\r1,x\r2,y\r\r3,z");
    const frame = readCsv(p);
    expect(frame.schema.map((f) => f.name)).toEqual(["a", "b"]);
    expect(await rows(frame.filter(col("a").gt(0)))).toEqual([
      [1, "x"],
      [2, "y"],
      [3, "z"],
    ]);
  });

  it("an empty file is BASIN_PARSE naming it, not 0 rows × 0 columns", async () => {
    const p = file("empty.csv", "");
    const e = await failure(() => readCsv(p));
    expect(e.code).toBe("BASIN_PARSE");
    expect(e.message).toContain(`${p} is empty`);
    // A header alone is a valid, empty table.
    expect(await rows(readCsv(file("header.csv", "a,b\n")))).toEqual([]);
  });

  it("basin run: an empty CSV exits 1 with one error line naming the file", async () => {
    file("empty2.csv", "");
    writeText(dir, "empty.ts", 'import { readCsv } from "basin";\nexport default readCsv("empty2.csv");\n');
    const r = await runBasin(["run", "empty.ts"], { cwd: dir });
    expect(r.code).toBe(1);
    expect(errorLines(r.stderr)).toEqual([
      expect.stringMatching(/^error \[BASIN_PARSE\]: empty\.ts:2:\d+: .*empty2\.csv is empty/),
    ]);
  });
});

describe("NDJSON text", () => {
  it("an invalid UTF-8 line is BASIN_PARSE naming its line", async () => {
    const p = file(
      "bad.ndjson",
      Buffer.concat([Buffer.from('{"a":"x"}\n{"a":"'), Buffer.from([0xff]), Buffer.from('"}\n')]),
    );
    const e = await failure(() => readJson(p));
    expect(e.code).toBe("BASIN_PARSE");
    expect(e.message).toContain(`${p}:2: the line is not valid UTF-8`);
  });

  it("a line that repeats a key is BASIN_PARSE (JSON.parse would keep the last silently)", async () => {
    const p = file("dup.ndjson", '{"a":1,"b":2}\n{"a":3,"b":4,"a":5}\n');
    const e = await failure(() => readJson(p));
    expect(e.code).toBe("BASIN_PARSE");
    expect(e.message).toContain(`${p}:2: a key appears more than once`);
    // Quotes and colons inside strings are not keys.
    expect(await rows(readJson(file("quotes.ndjson", '{"a":"x\\":y","b":"\\\\"}\n')))).toEqual([['x":y', "\\"]]);
  });

  it("impossible dates are errors, not rolled over; years below 100 stay themselves", async () => {
    const p = file("dates.ndjson", '{"d":"2020-02-29"}\n{"d":"1990-18-26"}\n');
    const e = await failure(() => readJson(p, { parseDates: ["d"] }));
    expect(e.code).toBe("BASIN_PARSE");
    expect(e.message).toContain("1990-18-26");
    const old = await rows(readJson(file("old.ndjson", '{"d":"0099-03-01"}\n'), { parseDates: ["d"] }));
    expect((old[0][0] as Date).getUTCFullYear()).toBe(99);
  });
});

describe("Arrow text", () => {
  it("a string that is not UTF-8 is BASIN_IO naming the file and column", async () => {
    const bytes = tableToIPC(tableFromArrays({ s: ["abc", "zzz"] }), "stream");
    // Turn the dictionary's "zzz" into invalid UTF-8 bytes.
    const at = Buffer.from(bytes).indexOf("zzz");
    bytes[at] = 0xff;
    const p = file("bad.arrow", bytes);
    const e = await failure(() => readArrow(p));
    expect(e.code).toBe("BASIN_IO");
    expect(e.message).toContain(p);
    expect(e.message).toContain('column "s"');
    expect(e.message).toContain("not valid UTF-8");
  });
});
