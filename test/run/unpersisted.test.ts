// A frame over persisted partitions that unpersist() let go fails with BASIN_PLAN at its
// persist() call, saying so and what to do, on worker threads and processes alike; the
// CLI prints it with the pipeline's file:line:column. Before: the store's "retain of
// unknown handle" (BASIN_HANDLE), and with worker processes no location at all.
import { afterAll, describe, expect, it } from "vitest";
import { col, fromColumns, LocalCluster } from "../../engine/api/index.js";
import { native } from "../../engine/native/addon.js";
import { errorLines, makeTempDir, removeDir, runBasin, writeText } from "../helpers/cli.js";
import { rejected, sourceLocator } from "../helpers/errors.js";
import { spinning } from "../helpers/spinning.js";

const loc = sourceLocator(import.meta.url);
const dir = makeTempDir();
afterAll(() => removeDir(dir));

describe.each(["none", "all"] as const)("workerProcesses %s", (workerProcesses) => {
  it("computing a frame after unpersist() is BASIN_PLAN at its persist() call; the cluster goes on", async () => {
    const cluster = new LocalCluster({ workers: 2, workerProcesses });
    try {
      const frame = fromColumns({ a: [1, 2, 3, 4, 5] }, { partitions: 2 });
      const kept = await frame.persist({ cluster, partitions: 2 }); // @kept
      kept.unpersist();
      const e = await rejected(kept.agg(col("a").sum().alias("s")).compute({ cluster }), "BASIN_PLAN");
      expect(e.detail).toContain("let go by unpersist() before the run read them; persist the frame again");
      expect(e.location).toBe(loc("kept", "persist("));
      expect((await frame.agg(col("a").sum().alias("s")).compute({ cluster })).toRows()).toEqual([{ s: 15 }]);
      await cluster.idle();
      expect(native().storeStats()).toMatchObject({ handles: 0 });
    } finally {
      await cluster.close();
    }
  });

  it("a run waiting for its worker when unpersist() comes fails so too", async () => {
    const cluster = new LocalCluster({ workers: 1, workerProcesses });
    try {
      const kept = await fromColumns({ a: [1, 2, 3] }, { partitions: 3 }).persist({ cluster, partitions: 3 }); // @waits
      const busy = spinning(800, cluster);
      await new Promise((r) => setTimeout(r, 100)); // its task holds the worker now
      let started = false;
      const over = kept.agg(col("a").sum().alias("s")).compute({ cluster, onProgress: () => (started = true) });
      await new Promise((r) => setTimeout(r, 100));
      // Planned and started (its progress began), its tasks queued behind the spin: the
      // error below comes from the tasks that meet the let-go partitions, not the planning.
      expect(started).toBe(true);
      kept.unpersist();
      const e = await rejected(over, "BASIN_PLAN");
      expect(e.detail).toContain("let go by unpersist() before the run read them");
      expect(e.location).toBe(loc("waits", "persist("));
      await busy;
      await cluster.idle();
      expect(native().storeStats()).toMatchObject({ handles: 0 });
    } finally {
      await cluster.close();
    }
  });

  it("the CLI prints it with the pipeline's file:line:column", async () => {
    writeText(
      dir,
      "unpersisted.ts",
      [
        `import { fromColumns, count } from "basin";`,
        `const t = await fromColumns({ k: ["a", "b", "a"] }).persist({ partitions: 2 });`,
        `t.unpersist();`,
        `export default t.groupBy("k").agg(count().alias("n"));`,
        ``,
      ].join("\n"),
    );
    const r = await runBasin(["run", "unpersisted.ts", "--workers", "2"], {
      cwd: dir,
      env: { BASIN_WORKER_PROCESSES: workerProcesses },
    });
    expect(r.code).toBe(1);
    const [line, ...more] = errorLines(r.stderr);
    expect(more).toEqual([]);
    expect(line).toMatch(/^error \[BASIN_PLAN\]: unpersisted\.ts:2:\d+: this frame's persisted partitions were let go/);
  });
});
