// Mistakes in row operations and statistical aggregations: each is a BASIN_PLAN error
// raised when the pipeline is written, naming the column or value and what to do,
// located at the line of this file that made the call.
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { BasinError, col, concat, corr, fromColumns } from "../../engine/api/index.js";

const THIS_FILE = fileURLToPath(import.meta.url);
const THIS_SOURCE = readFileSync(THIS_FILE, "utf8").split("\n");

/** "test/errors/rows_errors.test.ts:LINE:COL" of `needle` on the line tagged `// @<tag>`. */
function loc(tag: string, needle: string): string {
  const lines = THIS_SOURCE.map((l, i) => [l, i] as const).filter(([l]) => l.includes(`// @${tag}`) && !l.includes("loc("));
  if (lines.length !== 1) throw new Error(`tag @${tag} must tag exactly one line`);
  const [text, i] = lines[0];
  const c = text.indexOf(needle);
  if (c < 0) throw new Error(`"${needle}" is not on the line tagged @${tag}`);
  return `${relative(process.cwd(), THIS_FILE)}:${i + 1}:${c + 1}`;
}

function thrown(fn: () => unknown): BasinError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(BasinError);
    expect((e as BasinError).code).toBe("BASIN_PLAN");
    return e as BasinError;
  }
  throw new Error("expected an error, got none");
}

const frame = () => fromColumns({ k: [1, 2, null, 2], s: ["Zürich", "東京", null, "a"], v: [0.5, 1.5, 2.5, null] }, { partitions: 2 });

describe("row operation errors", () => {
  it("an unknown column in a subset lists the columns, located at the call", () => {
    const df = frame();
    const e = thrown(() => df.unique(["k", "nope"])); // @unique
    expect(e.detail).toBe('column "nope" does not exist; the columns are: k, s, v');
    expect(e.location).toBe(loc("unique", "unique("));
    expect(thrown(() => df.dropDuplicates("kk")).detail).toContain('column "kk" does not exist');
    const d = thrown(() => df.dropNulls(["v", "x"])); // @dropnulls
    expect(d.detail).toContain('column "x" does not exist');
    expect(d.location).toBe(loc("dropnulls", "dropNulls("));
    expect(thrown(() => df.valueCounts("zz")).detail).toContain('column "zz" does not exist');
    expect(thrown(() => df.drop("k", "q")).detail).toContain('column "q" does not exist');
    expect(thrown(() => df.fillNull({ w: 0 })).detail).toContain('column "w" does not exist');
    expect(thrown(() => df.unique([])).detail).toBe("unique() needs at least one column");
  });

  it("concat with a schema mismatch names the differing column and the frames", () => {
    const a = frame();
    const b = frame().withColumns({ k: col("k").cast("string") });
    const e = thrown(() => concat([a, b])); // @concat
    expect(e.detail).toMatch(/^concat\(\) column "k" is int64 in frames\[0\] but string in frames\[1\]; cast one/);
    expect(e.location).toBe(loc("concat", "concat("));
    expect(thrown(() => concat([a, a.drop("v")])).detail).toMatch(/frames\[1\] lacks column "v" of frames\[0\]/);
    expect(thrown(() => concat([a, a.withColumns({ extra: col("k") })])).detail).toMatch(/frames\[1\] has a column "extra" that frames\[0\] lacks/);
    expect(thrown(() => concat([])).detail).toMatch(/non-empty array/);
    expect(thrown(() => concat([a], { how: "horizontal" as "vertical" })).detail).toMatch(/how must be "vertical"/);
  });

  it("quantile outside [0, 1] names the value, located at .quantile()", () => {
    const e = thrown(() => col("v").quantile(1.5)); // @quantile
    expect(e.detail).toBe("quantile() needs q between 0 and 1, got 1.5");
    expect(e.location).toBe(loc("quantile", "quantile("));
    expect(thrown(() => col("v").quantile(-0.1)).detail).toMatch(/got -0.1/);
    expect(thrown(() => col("v").quantile(Number.NaN)).detail).toMatch(/got NaN/);
    expect(thrown(() => col("v").quantile(0.5, { method: "nearest" as "linear" })).detail).toMatch(/method must be "linear"/);
    const s = thrown(() => frame().agg(col("s").quantile(0.5).alias("q")));
    expect(s.detail).toMatch(/quantile\(\) needs a numeric column.*"s".*string/);
  });

  it("topK with k < 1 says what k must be, located at the call", () => {
    const df = frame();
    const e = thrown(() => df.groupBy("k").topK(0, "v")); // @topk
    expect(e.detail).toBe("topK() needs k >= 1 rows per group, got 0");
    expect(e.location).toBe(loc("topk", "topK("));
    expect(thrown(() => df.topK(1.5, "v")).detail).toMatch(/got 1.5/);
    expect(thrown(() => df.topK(2, "nope")).detail).toContain('column "nope" does not exist');
  });

  it("rename onto an existing name names both columns", () => {
    const df = frame();
    const e = thrown(() => df.rename({ k: "v" })); // @rename
    expect(e.detail).toBe('cannot rename "k" to "v": the frame would have two columns named "v"; drop or rename the other one first');
    expect(e.location).toBe(loc("rename", "rename("));
    expect(thrown(() => df.rename({ nope: "x" })).detail).toContain('column "nope" does not exist');
    expect(thrown(() => df.rename({ k: "" })).detail).toMatch(/non-empty new name for "k"/);
  });

  it("other misuse: bad sample sizes, corr of a string, valueCounts onto count, describe without numbers, drop of everything", () => {
    const df = frame();
    expect(thrown(() => df.sample({ fraction: 1.2 })).detail).toMatch(/fraction must be between 0 and 1, got 1.2/);
    expect(thrown(() => df.sample({ n: -1 })).detail).toMatch(/non-negative integer, got -1/);
    expect(thrown(() => df.sample({ n: 3 }, { seed: -2 })).detail).toMatch(/seed must be a non-negative integer/);
    const c = thrown(() => df.agg(corr("k", "s").alias("r"))); // @corr
    expect(c.detail).toMatch(/corr\(\) needs a numeric column.*"s".*string/);
    expect(c.location).toBe(loc("corr", "corr("));
    expect(thrown(() => df.withColumns({ count: col("k") }).valueCounts(["count", "s"])).detail).toMatch(/names its result column "count"/);
    expect(thrown(() => df.select("s").describe()).detail).toMatch(/describe\(\) needs a numeric or date column; the columns are s/);
    expect(thrown(() => df.select("s").corr()).detail).toMatch(/corr\(\) needs a numeric column/);
    expect(thrown(() => df.drop("k", "s", "v")).detail).toMatch(/no columns/);
    expect(thrown(() => df.tail(-1)).detail).toMatch(/tail\(\) needs a non-negative integer/);
    expect(thrown(() => df.unique("k", { keep: "last" as "first" })).detail).toMatch(/keep must be "first" or "any"/);
  });
});
