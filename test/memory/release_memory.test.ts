// Letting go of persisted tables gives their memory back to the system: glibc keeps
// what worker threads free in their arenas, so without a trim an engine that dropped a
// large table stayed that large (and the TPC-H SF 10 bench ran the machine out of
// memory for the next system).
import { afterAll, beforeAll, expect, it } from "vitest";
import { col, LocalCluster, readParquet } from "../../engine/api/index.js";
import { makeTempDir, removeDir } from "../helpers/cli.js";
import { Duck } from "../helpers/oracle.js";

let dir: string;
beforeAll(async () => {
  dir = makeTempDir();
  const duck = await Duck.open();
  await duck.run(
    `COPY (SELECT i::BIGINT AS k, random() AS a, 'note ' || (i * 7919 % 100003)::VARCHAR || ' of row ' || i::VARCHAR AS s, (i % 97)::DOUBLE AS c FROM range(4000000) t(i)) TO '${dir}/big.parquet' (FORMAT parquet, ROW_GROUP_SIZE 100000)`,
  );
  duck.close();
});
afterAll(() => removeDir(dir));

const rssMiB = () => process.memoryUsage().rss / 2 ** 20;

it("gives a persisted table's memory back to the system when it is unpersisted", async () => {
  const cluster = new LocalCluster({ workers: 2 });
  try {
    // The workers (a V8 isolate each) and the reader start first: they stay, the table goes.
    await readParquet(`${dir}/big.parquet`).head(5).compute({ cluster });
    const before = rssMiB();
    const kept = await readParquet(`${dir}/big.parquet`).persist({ cluster, partitions: 8 });
    const sums = await kept.agg(col("a").sum().alias("s")).compute({ cluster });
    expect(sums.numRows).toBe(1);
    const held = rssMiB() - before;
    expect(held, "4M rows of numbers and strings are resident while persisted").toBeGreaterThan(100);
    kept.unpersist();
    const after = rssMiB() - before;
    console.log(`held ${held.toFixed(0)} MiB, ${after.toFixed(0)} MiB after unpersist`);
    expect(after, "most of it is given back").toBeLessThan(held / 2);
  } finally {
    await cluster.close();
  }
});
