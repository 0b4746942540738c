// The compiled-pipeline cache (engine/session/pipeline_cache.ts) through `basin run`:
// an unchanged pipeline is imported from the cache instead of being compiled again; a
// change to the pipeline, or to a file it imports, compiles it again; a cache folder
// others may write to is not used.
import { chmodSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempDir, removeDir, runBasin, writeText } from "../helpers/cli.js";

let dir: string;
let cache: string;
const modules = () => readdirSync(join(cache, "pipelines")).filter((n) => n.endsWith(".mjs"));
const run = async () => {
  const r = await runBasin(["run", "p.ts", "--workers", "1"], { cwd: dir, env: { BASIN_CACHE_DIR: cache } });
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
};

/** p.ts: a frame of `first` and the word lib.ts exports. */
const pipeline = (first: string) =>
  writeText(
    dir,
    "p.ts",
    `import { fromColumns } from "basin";\nimport { word } from "./lib.ts";\nexport default fromColumns({ s: [${JSON.stringify(first)}, word] });\n`,
  );

beforeAll(() => {
  dir = makeTempDir();
  cache = makeTempDir("basin-cache-test-");
});
afterAll(() => {
  removeDir(dir);
  removeDir(cache);
});

describe("the compiled-pipeline cache", () => {
  it("imports an unchanged pipeline from the cache, and compiles again when it or an import changes", async () => {
    writeText(dir, "lib.ts", `export const word = "from lib";\n`);
    pipeline("from source");
    expect(await run()).toContain("from source");
    expect(modules()).toHaveLength(1);

    // The cached module, edited (not the pipeline): what the next run prints comes from it.
    const cached = join(cache, "pipelines", modules()[0]);
    writeFileSync(cached, readFileSync(cached, "utf8").replace('"from source"', '"from cache"'));
    const again = await run();
    expect(again).toContain("from cache");
    expect(again).not.toContain("from source");
    expect(modules()).toHaveLength(1);

    // The pipeline changes: compiled again, into a second entry.
    pipeline("edited");
    expect(await run()).toContain("edited");
    expect(modules()).toHaveLength(2);

    // A file it imports changes: compiled again too, replacing the entry for the same text.
    writeText(dir, "lib.ts", `export const word = "lib edited";\n`);
    const out = await run();
    expect(out).toContain("lib edited");
    expect(out).not.toContain("from lib");
    expect(modules()).toHaveLength(2);
  });

  it("does not use a cache folder that other users may write to", async () => {
    const before = modules().length;
    chmodSync(join(cache, "pipelines"), 0o777);
    try {
      writeText(dir, "p.ts", `import { fromColumns } from "basin";\nexport default fromColumns({ s: ["shared"] });\n`);
      expect(await run()).toContain("shared");
      expect(modules()).toHaveLength(before);
    } finally {
      chmodSync(join(cache, "pipelines"), 0o700);
    }
  });
});
