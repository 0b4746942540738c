// How long a short query waits when it is submitted during a long run on the same
// local cluster (2 workers): the long run is 400 tasks of 100 ms (20 s alone), the
// short one a group-by of 4 partitions, submitted 1 s in. Its answer is checked.
//   node scripts/build.mjs && node dist/bench/shared_runs.js
import { bag, col, count, fromColumns, LocalCluster } from "../engine/api/index.js";

const cluster = new LocalCluster({ workers: 2 });
const n = 10_000;
const small = fromColumns(
  { k: Array.from({ length: n }, (_, i) => i % 7), v: Array.from({ length: n }, (_, i) => i) },
  { partitions: 4 },
)
  .groupBy("k")
  .agg(col("v").sum().alias("s"), count().alias("n"))
  .sort("k");
const expected = Array.from({ length: 7 }, (_, k) => {
  let s = 0,
    c = 0;
  for (let i = k; i < n; i += 7) ((s += i), c++);
  return { k, s, n: c };
});
await small.compute({ cluster }); // the workers warm
const long = bag
  .fromItems(
    Array.from({ length: 400 }, (_, i) => i),
    { partitions: 400 },
  )
  .map((x: number) => {
    const end = Date.now() + 100;
    while (Date.now() < end);
    return x;
  });
const t0 = performance.now();
const longRun = long.compute({ cluster });
await new Promise((r) => setTimeout(r, 1000));
const t1 = performance.now();
const rows = (await small.compute({ cluster })).toRows();
const t2 = performance.now();
if (JSON.stringify(rows) !== JSON.stringify(expected)) throw new Error(`wrong answer: ${JSON.stringify(rows)}`);
await longRun;
const t3 = performance.now();
console.log(`short query: ${((t2 - t1) / 1000).toFixed(2)} s; long run: ${((t3 - t0) / 1000).toFixed(2)} s`);
await cluster.close();
