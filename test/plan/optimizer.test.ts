// The optimizer: explain() shows each pass at work, and every pass only changes
// speed, never answers (results compared with the passes on and off).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { col, count, fromColumns, readCsv, type DataFrame } from "../../engine/api/index.js";
import { PLAN_VERSION } from "../../engine/common/plan.js";
import { makeTrips, writeTripsCsv } from "../helpers/data.js";
import { expectSameRows, tableRows } from "../helpers/oracle.js";
import { LocalCluster } from "../../engine/cluster/local.js";

let dir: string;
let cluster: LocalCluster;
const trips = () => readCsv(`${dir}/*.csv`, { blocksize: 4096, dtypes: { k: "int64", v: "int64" } });

beforeAll(() => {
  dir = writeTripsCsv(makeTrips(2000, 11), 2);
  cluster = new LocalCluster({ workers: 2 });
});
afterAll(() => cluster.close());

const OFF = { predicatePushdown: false, projectionPushdown: false };

describe("optimizer", () => {
  it("pushes a filter through a projection into the scan, substituting the projected expression", () => {
    const df = trips()
      .withColumns({ w: col("v").mul(2) })
      .filter(col("w").gt(10));
    const text = df.explain();
    expect(text).toMatch(/ScanCsv 2 files columns=\[.*\] predicate=\(\(col\("v"\) \* 2\) > 10\)/);
    expect(text).not.toMatch(/^\s*Filter/m);
    expect(df.explain({ optimize: OFF })).toMatch(/^Filter \(col\("w"\) > 10\)/);
  });

  it("reads only the columns a pipeline uses", () => {
    const df = trips().groupBy("k").agg(col("v").sum().alias("s"));
    expect(df.explain()).toContain("ScanCsv 2 files columns=[k, v]");
    expect(df.explain({ optimize: { projectionPushdown: false } })).not.toContain("columns=");
  });

  it("merges adjacent filters and pushes a filter on group keys below the aggregation", () => {
    const df = trips().filter(col("v").gt(0)).groupBy("k").agg(count().alias("n")).filter(col("k").lt(5));
    const text = df.explain();
    expect(text.split("\n")[0]).toMatch(/^Aggregate/);
    expect(text).toContain('predicate=((col("v") > 0) and (col("k") < 5))');
  });

  it("keeps a filter on an aggregate above the aggregation", () => {
    const df = trips().groupBy("k").agg(count().alias("n")).filter(col("n").gt(100));
    expect(df.explain().split("\n")[0]).toBe('Filter (col("n") > 100)');
  });

  it("never pushes a filter below head()", () => {
    const df = trips().head(10).filter(col("v").gt(0));
    expect(df.explain().split("\n").slice(0, 2)).toEqual(['Filter (col("v") > 0)', "  Head 10"]);
  });

  it("carries only the used columns of a persisted frame, with the same answer", async () => {
    const p = await trips().persist({ cluster, partitions: 3 });
    try {
      const q = () => p.groupBy("k").topK(2, "v").select("k", "v");
      const plan = q().explain();
      const pruned = /TopK 2 .*\n\s+Project col\("k"\), col\("v"\)\n\s+Stored/;
      expect(plan).toMatch(pruned);
      expect(q().explain({ optimize: OFF })).not.toMatch(pruned);
      expect(tableRows(await q().compute({ cluster }))).toEqual(
        tableRows(await q().compute({ cluster, optimize: OFF })),
      );
    } finally {
      p.unpersist();
    }
  });

  it("gives each side of a join what an OR across both sides implies for it, with the same answers", async () => {
    const dims = fromColumns({
      dk: [0, 1, 2, 3, 4, 5, 6, 7, null],
      tier: ["a", "b", "a", "c", "b", null, "a", "c", "a"],
    });
    const across = col("tier")
      .eq("a")
      .and(col("v").lt(300))
      .or(col("tier").eq("b").and(col("city").isNull()));
    const inner = () => trips().join(dims, { leftOn: "k", rightOn: "dk" }).filter(across);
    const plan = inner().explain();
    expect(plan).toMatch(/ScanCsv[^\n]*predicate=\(\(col\("v"\) < 300\) or isNull\(col\("city"\)\)\)/);
    expect(plan).toMatch(/Filter \(\(col\("tier"\) == "a"\) or \(col\("tier"\) == "b"\)\)\n\s+Values/);
    expect(plan.split("\n")[0]).toMatch(/^Filter/); // the OR itself still decides
    // A left join null-extends the right side: only the left takes its part.
    const left = () => trips().join(dims, { leftOn: "k", rightOn: "dk", how: "left" }).filter(across);
    expect(left().explain()).not.toMatch(/Filter[^\n]*\n\s+Values/);
    for (const q of [inner, left]) {
      const on = tableRows(await q().compute({ cluster }));
      expectSameRows(on, tableRows(await q().compute({ cluster, optimize: OFF })), q().explain().split("\n")[0]);
      expect(on.length).toBeGreaterThan(0);
    }
  });

  it("keeps one column for count(*) even when no column is read", () => {
    expect(trips().agg(count().alias("n")).explain()).toContain("columns=[rid]");
  });

  const pipelines: Record<string, () => DataFrame> = {
    "filter through projection": () =>
      trips()
        .withColumns({ w: col("v").mul(2) })
        .filter(col("w").gt(10).and(col("city").isNotNull())),
    "filter on keys after aggregation": () =>
      trips().groupBy("k", "city").agg(col("f").mean().alias("m"), count().alias("n")).filter(col("k").ge(1)),
    "projection of a few columns": () =>
      trips()
        .select("city", col("f").add(col("v")).alias("x"))
        .filter(col("x").lt(0)),
    "head after filter": () => trips().filter(col("flag")).head(30),
    "global aggregation of a filtered frame": () =>
      trips()
        .filter(col("day").isNull().or(col("v").gt(500)))
        .select(col("f").median().alias("md"), count().alias("n")),
  };

  it.each(Object.entries(pipelines))("%s: same answer with the optimizer on and off", async (name, make) => {
    const on = await make().compute({ cluster });
    const off = await make().compute({ cluster, optimize: OFF });
    // In the same row order; sums of floats within rounding (a filter pushed below an
    // aggregation changes which of its interleaved accumulators a row adds into).
    expectSameRows(tableRows(on), tableRows(off), name, true);
    expect(on.schema).toEqual(off.schema);
  });

  it("serializes the plan as versioned JSON that round-trips", () => {
    const plan = trips().filter(col("v").gt(0)).toPlan();
    expect(plan.version).toBe(PLAN_VERSION);
    expect(JSON.parse(JSON.stringify(plan))).toEqual(plan);
  });
});
