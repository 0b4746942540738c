// Runs on one local cluster share its workers: a short run submitted while a long one
// runs (a result view, a profile, a second tab's pipeline) takes turns with it on each
// worker and finishes first; cancelling one, or losing a worker under both, leaves
// the other's answer whole.
import { afterAll, describe, expect, it } from "vitest";
import { col, count, fromColumns, LocalCluster, type ProgressEvent } from "../../engine/api/index.js";
import { native } from "../../engine/native/addon.js";
import { spinning } from "../helpers/spinning.js";

/** Sums and counts of v by k = i % 7, over `n` rows in `partitions` partitions (many tasks). */
const frame = (n: number, partitions: number) =>
  fromColumns(
    { k: Array.from({ length: n }, (_, i) => i % 7), v: Array.from({ length: n }, (_, i) => i) },
    { partitions },
  )
    .groupBy("k")
    .agg(col("v").sum().alias("s"), count().alias("n"))
    .sort("k");

/** The same answer, worked out in JS. */
function expected(n: number): { k: number; s: number; n: number }[] {
  const out = Array.from({ length: 7 }, (_, k) => ({ k, s: 0, n: 0 }));
  for (let i = 0; i < n; i++) {
    out[i % 7].s += i;
    out[i % 7].n++;
  }
  return out.filter((r) => r.n > 0);
}

const progressLeft = (events: ProgressEvent[]) => {
  const last = new Map(events.map((e) => [e.group, e]));
  return [...last.values()].reduce((left, e) => left + e.total - e.done, 0);
};

describe("runs on one cluster", () => {
  const cluster = new LocalCluster({ workers: 1 });
  afterAll(() => cluster.close());

  it("take turns on a worker: a short run submitted during a long one finishes while the long one still runs", async () => {
    const longEvents: ProgressEvent[] = [];
    let short: Promise<unknown> | undefined;
    let leftWhenShortEnded = -1;
    const long = frame(400_000, 96).compute({
      cluster,
      onProgress: (e) => {
        longEvents.push(e);
        // Submitted once the long run is under way.
        if (!short && e.done > 0)
          short = frame(1000, 1)
            .compute({ cluster })
            .then((t) => {
              leftWhenShortEnded = progressLeft(longEvents);
              return t.toRows();
            });
      },
    });
    const longRows = (await long).toRows();
    expect(short).toBeDefined();
    expect(await short).toEqual(expected(1000));
    expect(longRows).toEqual(expected(400_000));
    expect(leftWhenShortEnded, "tasks of the long run still to do when the short one answered").toBeGreaterThan(10);
    await cluster.idle();
    expect(native().storeStats()).toMatchObject({ handles: 0, buffers: 0 });
  });

  it("give a free worker to a run whose first choice is busy with another run's long task", async () => {
    const two = new LocalCluster({ workers: 2 });
    try {
      const spin = spinning(4000, two);
      await new Promise((r) => setTimeout(r, 300));
      expect(two.busyWorkers()).toHaveLength(1);
      const t0 = performance.now();
      expect((await frame(1000, 1).compute({ cluster: two })).toRows()).toEqual(expected(1000));
      // Far less than the 4 s task it would have waited behind on the busy worker.
      expect(performance.now() - t0).toBeLessThan(2000);
      await spin;
    } finally {
      await two.close();
    }
  });

  it("a cancelled run leaves the run beside it whole; its tasks that waited for a turn never run", async () => {
    const ac = new AbortController();
    let other: Promise<unknown> | undefined;
    const cancelled = frame(200_000, 64).compute({
      cluster,
      signal: ac.signal,
      onProgress: (e) => {
        if (other || e.done === 0) return;
        other = frame(50_000, 8).compute({ cluster });
        ac.abort("test");
      },
    });
    await expect(cancelled).rejects.toMatchObject({ code: "BASIN_CANCELLED" });
    expect(other).toBeDefined();
    expect(((await other) as { toRows(): unknown }).toRows()).toEqual(expected(50_000));
    await cluster.idle();
    expect(native().storeStats()).toMatchObject({ handles: 0, buffers: 0 });
  });
});

describe("runs sharing workers that die", () => {
  it.each(["none", "all"] as const)(
    "both finish with their answers when every worker is killed mid-run (worker processes: %s)",
    async (workerProcesses) => {
      const cluster = new LocalCluster({ workers: 2, workerProcesses });
      try {
        let killed = false;
        const a = frame(100_000, 24).compute({
          cluster,
          onProgress: (e) => {
            if (killed || e.done < 2) return;
            killed = true;
            for (const w of cluster.pool.names) void cluster.pool.kill(w);
          },
        });
        const b = frame(30_000, 12).compute({ cluster });
        const [ta, tb] = await Promise.all([a, b]);
        expect(killed).toBe(true);
        expect(ta.toRows()).toEqual(expected(100_000));
        expect(tb.toRows()).toEqual(expected(30_000));
        await cluster.idle();
        expect(native().storeStats()).toMatchObject({ handles: 0, buffers: 0 });
      } finally {
        await cluster.close();
      }
    },
    60_000,
  );
});

describe("a task whose inputs cannot be placed in its worker process", () => {
  it("fails its run, and gives the worker back: the next run answers (a stored frame let go while read)", async () => {
    const cluster = new LocalCluster({ workers: 2, workerProcesses: "all" });
    try {
      const kept = await frame(50_000, 1).persist({ cluster, partitions: 8 });
      const over = kept.agg(col("s").sum().alias("s")).compute({ cluster });
      await kept.unpersist();
      await over.then(
        (t) => expect(t.numRows).toBe(1),
        (e: unknown) => {
          expect(e).toMatchObject({ code: "BASIN_PLAN" });
          expect((e as Error).message).toContain("let go by unpersist() before the run read them");
        },
      );
      const next = await fromColumns({ a: [1, 2, 3, 4] }, { partitions: 4 })
        .agg(col("a").sum().alias("s"))
        .compute({ cluster });
      expect(next.toRows()).toEqual([{ s: 10 }]);
      await cluster.idle();
      expect(cluster.busyWorkers()).toEqual([]);
    } finally {
      await cluster.close();
    }
  }, 30_000);
});

describe("a task that cannot be sent to its worker", () => {
  it("fails its run as itself and frees the worker: the next run answers (fault injected into the pool's send)", async () => {
    const cluster = new LocalCluster({ workers: 1 });
    try {
      const send = cluster.pool.send.bind(cluster.pool);
      let faults = 1;
      cluster.pool.send = (worker, msg) => {
        if (faults-- > 0) throw new DOMException("could not be cloned", "DataCloneError");
        send(worker, msg);
      };
      await expect(frame(1000, 2).compute({ cluster })).rejects.toMatchObject({
        message: expect.stringContaining("could not be cloned"),
      });
      expect((await frame(1000, 2).compute({ cluster })).toRows()).toEqual(expected(1000));
      await cluster.idle();
      expect(cluster.busyWorkers()).toEqual([]);
    } finally {
      await cluster.close();
    }
  });
});

describe("runs of two clusters in one process", () => {
  it("each run applies its own cluster's memory limit, though a run of that cluster is still under way", async () => {
    const a = new LocalCluster({ workers: 1, memoryLimit: "16MB" });
    const b = new LocalCluster({ workers: 1, memoryLimit: "4GB" });
    try {
      const long = spinning(1500, a);
      await new Promise((r) => setTimeout(r, 200));
      await fromColumns({ x: [1] }).compute({ cluster: b });
      expect(native().memoryStats().hostLimit).toBe(4e9);
      await frame(1000, 2).compute({ cluster: a }); // beside a's long run
      expect(native().memoryStats().hostLimit).toBe(16e6);
      await long;
    } finally {
      await a.close();
      await b.close();
    }
  });
});
