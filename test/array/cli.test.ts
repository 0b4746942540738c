// `basin run p.ts --output r.npy` when the default export is an array: the file
// NumPy reads back equals NumPy's own answer; without --output a preview prints.
import { execFile } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeNpy } from "../../engine/io/npy.js";
import { BASIN_BIN, makeTempDir, removeDir, runBasin, writeText } from "../helpers/cli.js";
import { expectSameArray, numpy } from "../helpers/numpy.js";

let dir: string;
beforeAll(() => {
  dir = makeTempDir("basin-array-cli-");
  writeText(
    dir,
    "seed.ts",
    [
      'import { array } from "basin";',
      'const x = array.arange(30, undefined, 1, { chunks: 7 }).reshape([5, 6]).astype("float64").get(":", "1:");',
      'export default x.add(x.T.matmul(x).get(":5", ":5")).sub(x.mean({ axis: 0 }));',
    ].join("\n"),
  );
  writeText(dir, "frame.ts", 'import { fromColumns } from "basin";\nexport default fromColumns({ a: [1, 2] });\n');
});
afterAll(() => removeDir(dir));

describe("basin run with an array pipeline", () => {
  it("a .npy write that fails midway (the file size limit, as a full disk) keeps the old file and leaves no part", async () => {
    writeText(dir, "big_array.ts", 'import { array } from "basin";\nexport default array.arange(1000000).mul(2);\n');
    writeFileSync(join(dir, "kept.npy"), "OLD");
    // 8 MB of data past a 1 MB limit: the write fails with EFBIG.
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) =>
      execFile(
        "bash",
        [
          "-c",
          `ulimit -f 1000; exec ${JSON.stringify(process.execPath)} ${JSON.stringify(BASIN_BIN)} run big_array.ts --output kept.npy`,
        ],
        { cwd: dir, env: { ...process.env, NO_COLOR: "1" } },
        (err, _out, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stderr }),
      ),
    );
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/error \[BASIN_IO\]: cannot write .*kept\.npy: EFBIG/);
    expect(readFileSync(join(dir, "kept.npy"), "utf8")).toBe("OLD");
    expect(readdirSync(dir).filter((n) => n.includes("kept.npy."))).toEqual([]);
  });

  it("writes .npy that matches NumPy", async () => {
    const r = await runBasin(["run", "seed.ts", "--workers", "2", "--output", "r.npy"], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("wrote an array of shape (5, 5)");
    const got = decodeNpy(readFileSync(join(dir, "r.npy")), "r.npy");
    const exp = numpy([
      {
        name: "seed",
        inputs: {},
        code: "(lambda x: x + (x.T @ x)[:5, :5] - x.mean(axis=0))(np.arange(30).reshape(5, 6).astype(np.float64)[:, 1:])",
      },
    ]).get("seed")!;
    expectSameArray(got, exp, "cli seed");
  });

  it("prints a preview without --output, and refuses .npy for a frame", async () => {
    const r = await runBasin(["run", "seed.ts", "--workers", "1"], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("array shape (5, 5) dtype float64");
    const bad = await runBasin(["run", "frame.ts", "--output", "f.npy"], { cwd: dir });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("writes arrays");
  });
});
