// In a CSV file of one column a blank line is a row: that column's empty value, null
// (DuckDB reads it so, and it is how a writer puts a null there, Basin's own included).
// Files of more columns skip blank lines, and blank lines before the header are skipped
// either way. Answers are DuckDB's for the same files, over small blocks too.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fromColumns, LocalCluster, readCsv } from "../../engine/api/index.js";
import { Duck, expectSameRows, tableRows } from "../helpers/oracle.js";

const dir = mkdtempSync(join(tmpdir(), "basin-csv-blank-"));
const cluster = new LocalCluster({ workers: 2 });
let duck: Duck;
beforeAll(async () => {
  duck = await Duck.open();
});
afterAll(async () => {
  duck.close();
  await cluster.close();
});

let big = "v\n";
for (let i = 0; i < 20_000; i++) big += i % 7 === 0 ? "\n" : i % 11 === 0 ? `"line\n${i}"\n` : `${i}\n`;
const FILES: Record<string, string> = {
  "ints with blank lines, the last one too": "a\n1\n\n3\n\n",
  "blank lines first after the header": "a\n\n\n1",
  "CRLF line ends": "a\r\n1\r\n\r\n3\r\n",
  strings: "s\nx\n\ny\n",
  "blank lines before the header": "\n\na\n1\n",
  "two columns (blank lines skipped)": "a,b\n1,2\n\n3,4\n\n",
  "a header and blank lines only": `a\n${"\n".repeat(5000)}`,
  "quoted newlines among blank lines, many blocks": big,
};

describe("blank lines in CSV files", () => {
  it.each(Object.entries(FILES))("read as DuckDB reads them: %s", async (label, text) => {
    const file = join(dir, `${label.replace(/\W+/g, "_")}.csv`);
    writeFileSync(file, text);
    for (const blocksize of [256, undefined]) {
      const t = await readCsv(file, { blocksize }).compute({ cluster });
      const expected = await duck.rows(`SELECT * FROM read_csv('${file}', header = true)`);
      expectSameRows(tableRows(t), expected, `${label}, blocksize ${blocksize}`, true);
    }
  });

  it("a one-column result with nulls written as CSV reads back whole", async () => {
    const file = join(dir, "written.csv");
    await fromColumns({ a: [1, null, 3, null] }).writeCsv(file, { cluster });
    const t = await readCsv(file).compute({ cluster });
    expect(t.toRows()).toEqual([{ a: 1 }, { a: null }, { a: 3 }, { a: null }]);
  });
});
