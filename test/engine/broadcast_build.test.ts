// A broadcast join builds its right side's hash table once per process and reuses it
// for every left partition (and, for a persisted right side, across runs) while the
// right tables live; answers equal the shuffled hash join's, and nothing is kept once
// the right side is let go.
import { afterAll, beforeAll, expect, it } from "vitest";
import { col, fromColumns, type DataFrame } from "../../engine/api/index.js";
import { LocalCluster } from "../../engine/cluster/local.js";
import { seededRandom } from "../../engine/common/random.js";
import { native } from "../../engine/native/addon.js";
import { expectSameRows, tableRows } from "../helpers/oracle.js";

let cluster: LocalCluster;
beforeAll(() => (cluster = new LocalCluster({ workers: 2 })));
afterAll(() => cluster.close());

function frames(seed: number): { left: DataFrame; right: DataFrame } {
  const r = seededRandom(seed);
  const n = 5000;
  const key = (m: number, nulls: number) => Array.from({ length: n }, () => (r() < nulls ? null : Math.floor(r() * m)));
  const left = fromColumns(
    { k: key(300, 0.05), s: key(4, 0.02).map((v) => (v === null ? null : ["ä", "東", "", "x"][v])), v: key(1e6, 0) },
    { partitions: [0, 700, 1300, 1, 0, 1000, 1999, 0] },
  );
  const m = 400;
  const right = fromColumns(
    {
      rk: Array.from({ length: m }, (_, i) => (i % 97 === 0 ? null : i % 250)),
      rs: Array.from({ length: m }, (_, i) => ["ä", "東", "", "x"][i % 4]),
      w: Array.from({ length: m }, (_, i) => i + seed),
    },
    { partitions: [150, 0, 250] },
  );
  return { left, right };
}

const joins = (left: DataFrame, right: DataFrame) => [
  left.join(right, { leftOn: "k", rightOn: "rk" }),
  left.join(right, { leftOn: ["k", "s"], rightOn: ["rk", "rs"], how: "left" }),
  left.join(right, { leftOn: "s", rightOn: "rs", how: "semi" }).filter(col("v").lt(400_000)),
  left.join(right, { leftOn: "k", rightOn: "rk", how: "anti" }),
];

it("gives the hash join's answers for inner, left, semi and anti joins on int, string and two keys", async () => {
  const { left, right } = frames(1);
  for (const df of joins(left, right)) {
    expect(df.explain()).toContain("strategy=broadcast");
    const got = tableRows(await df.compute({ cluster }));
    const want = tableRows(await df.compute({ cluster, optimize: { joinStrategy: false } }));
    expectSameRows(got, want, df.explain().split("\n")[0]);
    expect(got.length).toBeGreaterThan(0);
  }
  await cluster.idle();
  expect(native().purgeBroadcastBuilds()).toBe(0);
});

it("reuses a persisted right side's table across runs, answers right after its data changes, and lets it go", async () => {
  const a = frames(2),
    b = frames(3);
  const right = await a.right.persist({ cluster, partitions: 2 });
  const df = a.left.join(right, { leftOn: "k", rightOn: "rk" });
  const want = tableRows(await df.compute({ cluster, optimize: { joinStrategy: false } }));
  for (let run = 0; run < 2; run++) expectSameRows(tableRows(await df.compute({ cluster })), want, `run ${run}`);
  await cluster.idle();
  expect(native().purgeBroadcastBuilds()).toBeGreaterThan(0); // kept while the persisted side lives
  // Another right side (w differs): never the first one's table.
  const other = await b.right.persist({ cluster, partitions: 2 });
  const df2 = a.left.join(other, { leftOn: "k", rightOn: "rk" });
  expectSameRows(
    tableRows(await df2.compute({ cluster })),
    tableRows(await df2.compute({ cluster, optimize: { joinStrategy: false } })),
    "other right side",
  );
  right.unpersist();
  other.unpersist();
  expect(native().purgeBroadcastBuilds()).toBe(0);
});
