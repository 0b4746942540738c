// A write that fails leaves the old file as it was and no temp file beside it, even
// when it fails before the temp file's asynchronous open has completed.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { OutputFormat } from "../../engine/io/write.js";
import { writeFile, type ChunkSource } from "../../engine/io/write.js";
import { makeTempDir, removeDir } from "../helpers/cli.js";

const dir = makeTempDir("basin-write-fail-");
afterAll(() => removeDir(dir));

function failing(afterChunks: number): ChunkSource {
  return {
    schema: [{ name: "v", type: "float64" }],
    rows: 10,
    async *chunks() {
      for (let i = 0; i < afterChunks; i++)
        yield { rows: 1, names: ["v"], columns: [{ type: "float64", values: new Float64Array([i]), validity: null }] };
      throw new Error("the source broke");
    },
  };
}

describe("a failed write", () => {
  it.each(["csv", "parquet", "arrow"] as OutputFormat[])(
    "keeps the old %s file and leaves no temp file, failing at once or midway",
    async (format) => {
      const path = join(dir, `out.${format}`);
      writeFileSync(path, "old");
      for (const after of [0, 2]) {
        await expect(writeFile(failing(after), path, format)).rejects.toMatchObject({
          code: "BASIN_IO",
          message: expect.stringContaining("the source broke"),
        });
        await new Promise((r) => setTimeout(r, 50)); // a late open would show up by now
        expect(readFileSync(path, "utf8")).toBe("old");
        expect(readdirSync(dir).filter((f) => f.includes("partial"))).toEqual([]);
      }
    },
  );
});
