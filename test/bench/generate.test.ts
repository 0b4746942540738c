// The groupby generator makes its rows in parallel chunks, each row a pure function of
// its index: the file must be the one the single-stream generator wrote (lines of
// G1_1e7_1e2_0_0 as generated before, at its start, middle and end), whatever the
// number of threads.
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { generateGroupby, groupbyChunk } from "../../bench/generate.js";
import { parallelRows } from "../../bench/generate_parallel.js";
import { makeTempDir, removeDir } from "../helpers/cli.js";

const dir = makeTempDir();
afterAll(() => removeDir(dir));

const params = { seed: 108, k: 100, nk: 100_000 }; // G1_1e7_1e2_0_0
const row = (r: number) => groupbyChunk(params, r, r + 1);

describe("groupby data generator", () => {
  it("makes any row on its own, as the single PRNG stream did (rows 0, 1, 5e6 - 1 and 1e7 - 1 of G1_1e7)", () => {
    expect(row(0)).toBe("id037,id075,id0000083091,53,29,40468,3,2,42.501355\n");
    expect(row(1)).toBe("id056,id089,id0000026618,33,7,80690,2,6,80.934651\n");
    expect(row(4_999_999)).toBe("id040,id004,id0000068534,97,39,21998,3,1,47.159061\n");
    expect(row(9_999_999)).toBe("id071,id098,id0000041050,68,83,12482,3,10,72.945261\n");
    expect(groupbyChunk(params, 0, 3)).toBe(row(0) + row(1) + row(2));
  });

  it("writes the same file with one thread or several", async () => {
    const p = { seed: 7, k: 10, nk: 30 };
    const rows = 600_000; // three chunks of 2^18 rows, the last one short
    const join = async (threads: number) => {
      let text = "";
      for await (const chunk of parallelRows(rows, groupbyChunk, p, threads)) text += chunk;
      return text;
    };
    const one = await join(1);
    expect(one.split("\n").length - 1).toBe(rows);
    expect(await join(3)).toBe(one);
    expect(one).toBe(groupbyChunk(p, 0, rows));
  });

  it("writes the header and the rows, and reuses a complete file", async () => {
    const d = await generateGroupby({ rows: 1000, k: 10, dir, seed: 3 });
    const text = readFileSync(d.tables[0]!.path, "utf8");
    expect(text).toBe("id1,id2,id3,id4,id5,id6,v1,v2,v3\n" + groupbyChunk({ seed: 3, k: 10, nk: 100 }, 0, 1000));
    expect((await generateGroupby({ rows: 1000, k: 10, dir, seed: 3 })).reused).toBe(true);
  });
});
