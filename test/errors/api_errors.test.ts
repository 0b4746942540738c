// The same mistakes as bad_input.test.ts, in-process through the API: cheaper, and
// the error's `location` must point at the line of this file that made the call.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDefaultCluster, col, count, fromColumns, readCsv } from "../../engine/api/index.js";
import { native } from "../../engine/native/addon.js";
import { makeTempDir, removeDir } from "../helpers/cli.js";
import { thrown, rejected, sourceLocator } from "../helpers/errors.js";

const loc = sourceLocator(import.meta.url);

let dir: string;
beforeAll(() => {
  dir = makeTempDir("basin-api-errors-");
  writeFileSync(join(dir, "ragged.csv"), "id,name,v\n1,a,10\n2,b,20\n3,c\n4,d,40\n");
  writeFileSync(join(dir, "late.csv"), "id,v\n1,2\n2,3\n3,4\n4,x5\n");
});

afterAll(async () => {
  removeDir(dir);
  await closeDefaultCluster();
  // Every handle and buffer made by the computes below is released.
  const s = native().storeStats();
  expect(s.handles).toBe(0);
  expect(s.buffers).toBe(0);
});

const frame = () =>
  fromColumns({ s: ["Zürich", "東京", null, "a"], n: [1, 2, null, 4], x: [0.5, 1.5, 2.5, null] }, { partitions: 2 });

describe("pipeline errors, in-process", () => {
  it("summing a string column: BASIN_PLAN naming the type, located at the .sum() call", () => {
    const df = frame();
    const e = thrown(() => df.select(col("s").sum())); // @sum
    expect(e.code).toBe("BASIN_PLAN");
    expect(e.message).toMatch(/string/);
    expect(e.detail).toMatch(/sum\(\).*"s".*string/);
    expect(e.location).toBe(loc("sum", "sum()"));
    expect(e.message.startsWith(`${e.location}: `)).toBe(true);
  });

  it("sum() of a string column inside groupBy().agg(): the same error and location", () => {
    const df = frame();
    const e = thrown(() => df.groupBy("n").agg(col("s").sum().alias("t"))); // @gsum
    expect(e.code).toBe("BASIN_PLAN");
    expect(e.detail).toMatch(/string/);
    expect(e.location).toBe(loc("gsum", "sum()"));
  });

  it("a column that does not exist: BASIN_PLAN listing the columns", () => {
    const df = frame().withColumns({ y: col("n").add(1) });
    const e = thrown(() => df.filter(col("nn").gt(1))); // @nocol
    expect(e.code).toBe("BASIN_PLAN");
    expect(e.detail).toBe('column "nn" does not exist; the columns are: s, n, x, y');
    expect(e.location).toBe(loc("nocol", 'col("nn")'));
    const byName = thrown(() => df.select("s", "zz"));
    expect(byName.detail).toContain("the columns are: s, n, x, y");
  });

  it("filter() with a non-bool expression names the type it got", () => {
    const e = thrown(() => frame().filter(col("n").add(1)));
    expect(e.code).toBe("BASIN_PLAN");
    expect(e.detail).toMatch(/bool.*int64/);
  });

  it("DataFrame.sum() over only string columns lists the columns", () => {
    const e = thrown(() => frame().select("s").sum()); // @framesum
    expect(e.code).toBe("BASIN_PLAN");
    expect(e.detail).toMatch(/numeric/);
    expect(e.detail).toContain("s");
    expect(e.location).toBe(loc("framesum", "sum()"));
  });

  it("readCsv of a missing file: BASIN_IO naming the path, located at the call", () => {
    const missing = join(dir, "nope", "trips.csv");
    const e = thrown(() => readCsv(missing)); // @missing
    expect(e.code).toBe("BASIN_IO");
    expect(e.detail).toContain(missing);
    expect(e.location).toBe(loc("missing", "readCsv("));
  });

  it("an unknown dtype override names the allowed types", () => {
    const e = thrown(() => readCsv(join(dir, "late.csv"), { dtypes: { v: "integer" as never } }));
    expect(e.code).toBe("BASIN_PLAN");
    expect(e.detail).toMatch(/int64.*float64.*string/);
  });
});

describe("data errors at compute, in-process", () => {
  it("a ragged row: compute rejects with BASIN_PARSE naming data file:line, located at readCsv", async () => {
    const df = readCsv(join(dir, "ragged.csv")); // @ragged
    const e = await rejected(df.compute());
    expect(e.code).toBe("BASIN_PARSE");
    expect(e.detail).toContain(`${join(dir, "ragged.csv")}:4:`);
    expect(e.detail).toMatch(/expected 3 fields, found 2/);
    expect(e.location).toBe(loc("ragged", "readCsv("));
  });

  it('onBadLines: "skip" drops the bad row and counts it', async () => {
    const t = await readCsv(join(dir, "ragged.csv"), { onBadLines: "skip" }).compute();
    expect(t.info.skippedLines).toBe(1);
    expect(t.column("id")).toEqual([1, 2, 4]);
    expect(t.column("v")).toEqual([10, 20, 40]);
  });

  it("an unparsable number past the sample: BASIN_PARSE with file:line:column and a dtypes hint", async () => {
    const e = await rejected(readCsv(join(dir, "late.csv"), { sampleBytes: 12 }).compute());
    expect(e.code).toBe("BASIN_PARSE");
    expect(e.detail).toContain(`${join(dir, "late.csv")}:5:3: `);
    expect(e.detail).toMatch(/dtypes/);
    const t = await readCsv(join(dir, "late.csv"), { sampleBytes: 12, dtypes: { v: "string" } }).compute();
    expect(t.column("v")).toEqual(["2", "3", "4", "x5"]);
  });

  it("a good pipeline still computes after the failures (the cluster survives errors)", async () => {
    const t = await frame()
      .filter(col("n").isNotNull())
      .groupBy("s")
      .agg(count().alias("rows"), col("x").sum().alias("sx"))
      .compute();
    const rows = t.toRows().sort((a, b) => String(a.s).localeCompare(String(b.s)));
    expect(rows).toEqual([
      { s: "a", rows: 1, sx: null },
      { s: "Zürich", rows: 1, sx: 0.5 },
      { s: "東京", rows: 1, sx: 1.5 },
    ]);
  });
});
