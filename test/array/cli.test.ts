// `basin run p.ts --output r.npy` when the default export is an array: the file
// NumPy reads back equals NumPy's own answer; without --output a preview prints.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeNpy } from "../../engine/io/npy.js";
import { makeTempDir, removeDir, runBasin, writeText } from "../helpers/cli.js";
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
