// Mistakes in row operations and statistical aggregations: each is a BASIN_PLAN error
// raised when the pipeline is written, naming the column or value and what to do,
// located at the line of this file that made the call.
import { describe, expect, it } from "vitest";
import { col, concat, corr, fromColumns } from "../../engine/api/index.js";
import { thrown, sourceLocator } from "../helpers/errors.js";

const loc = sourceLocator(import.meta.url);
/** Every error here is found when the pipeline is written. */
const planError = (fn: () => unknown) => thrown(fn, "BASIN_PLAN");

const frame = () =>
  fromColumns({ k: [1, 2, null, 2], s: ["Zürich", "東京", null, "a"], v: [0.5, 1.5, 2.5, null] }, { partitions: 2 });

describe("row operation errors", () => {
  it("an unknown column in a subset lists the columns, located at the call", () => {
    const df = frame();
    const e = planError(() => df.unique(["k", "nope"])); // @unique
    expect(e.detail).toBe('column "nope" does not exist; the columns are: k, s, v');
    expect(e.location).toBe(loc("unique", "unique("));
    expect(planError(() => df.dropDuplicates("kk")).detail).toContain('column "kk" does not exist');
    const d = planError(() => df.dropNulls(["v", "x"])); // @dropnulls
    expect(d.detail).toContain('column "x" does not exist');
    expect(d.location).toBe(loc("dropnulls", "dropNulls("));
    expect(planError(() => df.valueCounts("zz")).detail).toContain('column "zz" does not exist');
    expect(planError(() => df.drop("k", "q")).detail).toContain('column "q" does not exist');
    expect(planError(() => df.fillNull({ w: 0 })).detail).toContain('column "w" does not exist');
    expect(planError(() => df.unique([])).detail).toBe("unique() needs at least one column");
  });

  it("concat with a schema mismatch names the differing column and the frames", () => {
    const a = frame();
    const b = frame().withColumns({ k: col("k").cast("string") });
    const e = planError(() => concat([a, b])); // @concat
    expect(e.detail).toMatch(/^concat\(\) column "k" is int64 in frames\[0\] but string in frames\[1\]; cast one/);
    expect(e.location).toBe(loc("concat", "concat("));
    expect(planError(() => concat([a, a.drop("v")])).detail).toMatch(/frames\[1\] lacks column "v" of frames\[0\]/);
    expect(planError(() => concat([a, a.withColumns({ extra: col("k") })])).detail).toMatch(
      /frames\[1\] has a column "extra" that frames\[0\] lacks/,
    );
    expect(planError(() => concat([])).detail).toMatch(/non-empty array/);
    expect(planError(() => concat([a], { how: "horizontal" as "vertical" })).detail).toMatch(/how must be "vertical"/);
  });

  it("quantile outside [0, 1] names the value, located at .quantile()", () => {
    const e = planError(() => col("v").quantile(1.5)); // @quantile
    expect(e.detail).toBe("quantile() needs q between 0 and 1, got 1.5");
    expect(e.location).toBe(loc("quantile", "quantile("));
    expect(planError(() => col("v").quantile(-0.1)).detail).toMatch(/got -0.1/);
    expect(planError(() => col("v").quantile(Number.NaN)).detail).toMatch(/got NaN/);
    expect(planError(() => col("v").quantile(0.5, { method: "nearest" as "linear" })).detail).toMatch(
      /method must be "linear"/,
    );
    const s = planError(() => frame().agg(col("s").quantile(0.5).alias("q")));
    expect(s.detail).toMatch(/quantile\(\) needs a numeric column.*"s".*string/);
  });

  it("topK with k < 1 says what k must be, located at the call", () => {
    const df = frame();
    const e = planError(() => df.groupBy("k").topK(0, "v")); // @topk
    expect(e.detail).toBe("topK() needs k >= 1 rows per group, got 0");
    expect(e.location).toBe(loc("topk", "topK("));
    expect(planError(() => df.topK(1.5, "v")).detail).toMatch(/got 1.5/);
    expect(planError(() => df.topK(2, "nope")).detail).toContain('column "nope" does not exist');
  });

  it("rename onto an existing name names both columns", () => {
    const df = frame();
    const e = planError(() => df.rename({ k: "v" })); // @rename
    expect(e.detail).toBe(
      'cannot rename "k" to "v": the frame would have two columns named "v"; drop or rename the other one first',
    );
    expect(e.location).toBe(loc("rename", "rename("));
    expect(planError(() => df.rename({ nope: "x" })).detail).toContain('column "nope" does not exist');
    expect(planError(() => df.rename({ k: "" })).detail).toMatch(/non-empty new name for "k"/);
  });

  it("other misuse: bad sample sizes, corr of a string, valueCounts onto count, describe without numbers, drop of everything", () => {
    const df = frame();
    expect(planError(() => df.sample({ fraction: 1.2 })).detail).toMatch(/fraction must be between 0 and 1, got 1.2/);
    expect(planError(() => df.sample({ n: -1 })).detail).toMatch(/non-negative integer, got -1/);
    expect(planError(() => df.sample({ n: 3 }, { seed: -2 })).detail).toMatch(/seed must be a non-negative integer/);
    const c = planError(() => df.agg(corr("k", "s").alias("r"))); // @corr
    expect(c.detail).toMatch(/corr\(\) needs a numeric column.*"s".*string/);
    expect(c.location).toBe(loc("corr", "corr("));
    expect(planError(() => df.withColumns({ count: col("k") }).valueCounts(["count", "s"])).detail).toMatch(
      /names its result column "count"/,
    );
    expect(planError(() => df.select("s").describe()).detail).toMatch(
      /describe\(\) needs a numeric or date column; the columns are s/,
    );
    expect(planError(() => df.select("s").corr()).detail).toMatch(/corr\(\) needs a numeric column/);
    expect(planError(() => df.drop("k", "s", "v")).detail).toMatch(/no columns/);
    expect(planError(() => df.tail(-1)).detail).toMatch(/tail\(\) needs a non-negative integer/);
    expect(planError(() => df.unique("k", { keep: "last" as "first" })).detail).toMatch(
      /keep must be "first" or "any"/,
    );
  });
});
