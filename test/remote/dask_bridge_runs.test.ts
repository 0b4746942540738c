// The engine ↔ Dask bridge around a run: a result comes back in parts (a large one
// used to be one JSON line past the longest string JavaScript holds), a cancel that
// arrives while the bridge is still connecting stops the run, a scheduler that dies
// mid-run is reported as lost (BASIN_IO naming it, not as the user's cancel), a run left
// without workers or on a frozen scheduler fails in bounded time instead of hanging, and a
// Python that exits at once is reported with what it printed, not as a crash.
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { BasinError, col, count, DaskCluster, fromColumns, lit } from "../../engine/api/index.js";
import { expectSameRows, tableRows } from "../helpers/oracle.js";
import { makeTempDir, removeDir } from "../helpers/cli.js";
import { daskFixture, PYTHON, startDask, type DaskProcs } from "./dask_procs.js";

// The bridges these tests start give up on a scheduler without workers after 10 s (default 60 s).
process.env.BASIN_DASK_NO_WORKERS_S = "10";
const fx = daskFixture(2);
const dir = makeTempDir("basin-bridge-runs-");
afterAll(() => removeDir(dir));

/** Work that keeps two Dask workers busy for a few seconds: regex replacements over 1.6M strings. */
function slowFrame() {
  const n = 100_000;
  return fromColumns(
    { s: Array.from({ length: n }, (_, i) => `abcabd-${i % 1000}-éé-abcabcabc-${i}`) },
    { partitions: 4 },
  )
    .withColumns({ j: lit(1) })
    .join(fromColumns({ j: Array(16).fill(1), r: Array.from({ length: 16 }, (_, i) => i) }), { on: "j" })
    .withColumns({ t: col("s").str.replace("(a|b|c)+", "$1-", { all: true }) })
    .groupBy("r")
    .agg(count().alias("n"), col("t").max().alias("m"));
}

describe("Dask bridge runs", () => {
  it("a result of many parts (more rows than one part holds) arrives whole, in order; NaN and ±inf stay values", async () => {
    const n = 200_000;
    const df = fromColumns(
      {
        id: Array.from({ length: n }, (_, i) => i),
        s: Array.from({ length: n }, (_, i) => (i % 11 === 0 ? null : `東京-${i}`)),
        f: Array.from({ length: n }, (_, i) =>
          i % 13 === 0 ? null : i % 17 === 0 ? Number.NaN : i % 19 === 0 ? -Infinity : i / 7,
        ),
      },
      { partitions: [0, 1, n - 2, 1] },
    )
      .filter(col("id").mod(5).ne(3))
      .withColumns({ g: col("f").mul(2) });
    const local = await df.compute({ cluster: fx.local });
    const dask = await df.compute({ cluster: fx.dask });
    expect(dask.numRows).toBe(160_000);
    expect(dask.column("f").filter((v) => Number.isNaN(v)).length).toBeGreaterThan(8000);
    expect(dask.column("g").filter((v) => v === -Infinity).length).toBeGreaterThan(7000);
    expectSameRows(tableRows(dask), tableRows(local), "four parts of 65,536 rows at most", true);
  });

  it("a cancel sent while the bridge is still connecting stops the run before anything is submitted", async () => {
    const fresh = new DaskCluster(fx.procs.address, { python: PYTHON });
    try {
      const abort = new AbortController();
      const running = fromColumns({ a: [1, 2, 3] })
        .agg(col("a").sum().alias("s"))
        .compute({ cluster: fresh, signal: abort.signal });
      setTimeout(() => abort.abort(), 20); // the bridge is still importing pandas and dask
      const err = (await running.catch((e: unknown) => e)) as BasinError;
      expect(err).toMatchObject({ code: "BASIN_CANCELLED" });
      expect((await fresh.status()).processing).toBe(0);
    } finally {
      await fresh.close();
    }
  });

  it("a scheduler killed mid-run is BASIN_IO naming it, not a cancel", async () => {
    const own = await startDask(1);
    const cluster = new DaskCluster(own.address, { python: PYTHON, connectTimeout: 3 });
    try {
      await cluster.connect();
      const running = slowFrame()
        .compute({ cluster })
        .catch((e: unknown) => e);
      // Kill it once the worker runs the job (bounded: 20 s).
      for (let i = 0; i < 400 && (await cluster.status()).processing === 0; i++)
        await new Promise((r) => setTimeout(r, 50));
      own.scheduler.kill("SIGKILL");
      const err = (await running) as BasinError;
      expect(err).toBeInstanceOf(BasinError);
      expect(err.code, err.message).toBe("BASIN_IO");
      expect(err.message).toContain(`lost the Dask scheduler at ${own.address} during the run`);
    } finally {
      await cluster.close();
      await own.stop();
    }
  });

  /** Waits (bounded: 20 s) until the cluster's workers run the job. */
  async function untilProcessing(cluster: DaskCluster): Promise<void> {
    for (let i = 0; i < 400 && (await cluster.status()).processing === 0; i++)
      await new Promise((r) => setTimeout(r, 50));
  }

  it("a run on a scheduler with no workers fails after the grace period, naming the scheduler (not a hang)", async () => {
    const own = await startDask(0);
    const cluster = new DaskCluster(own.address, { python: PYTHON });
    try {
      const started = Date.now();
      const err = (await fromColumns({ a: [1, 2, 3] })
        .agg(col("a").sum().alias("s"))
        .compute({ cluster })
        .catch((e: unknown) => e)) as BasinError;
      expect(err).toBeInstanceOf(BasinError);
      expect(err.code, err.message).toBe("BASIN_WORKER");
      expect(err.message).toContain(`the Dask scheduler at ${own.address} has had no workers for 10 s`);
      expect(err.message).toContain("start workers");
      expect(Date.now() - started).toBeLessThan(30_000);
    } finally {
      await cluster.close();
      await own.stop();
    }
  }, 60_000);

  /**
   * On a Dask cluster of its own with `workers`, a slow run under way when `fault` strikes:
   * the run's error, how long after the fault it came, and the cluster for more checks.
   * `after` undoes what the fault did before the cluster goes.
   */
  async function faultMidRun(
    workers: number,
    fault: (own: DaskProcs) => void,
    check: (r: { err: BasinError; ms: number; own: DaskProcs; cluster: DaskCluster }) => Promise<void>,
    after: (own: DaskProcs) => void = () => {},
  ): Promise<void> {
    const own = await startDask(workers);
    const cluster = new DaskCluster(own.address, { python: PYTHON });
    try {
      await cluster.connect();
      const running = slowFrame()
        .compute({ cluster })
        .catch((e: unknown) => e);
      await untilProcessing(cluster);
      const at = Date.now();
      fault(own);
      const err = (await running) as BasinError;
      expect(err).toBeInstanceOf(BasinError);
      await check({ err, ms: Date.now() - at, own, cluster });
    } finally {
      after(own);
      await cluster.close();
      await own.stop();
    }
  }

  it("a run whose workers are all killed mid-run fails after the grace period (not a hang)", async () => {
    await faultMidRun(
      2,
      (own) => own.workers.forEach((w) => w.kill("SIGKILL")),
      async ({ err, ms, own }) => {
        expect(err.code, err.message).toBe("BASIN_WORKER");
        expect(err.message).toContain(`the Dask scheduler at ${own.address} has had no workers`);
        expect(ms).toBeLessThan(30_000);
      },
    );
  }, 60_000);

  it("a scheduler that freezes mid-run (SIGSTOP) is BASIN_IO saying it stopped answering (not a hang)", async () => {
    await faultMidRun(
      1,
      (own) => own.scheduler.kill("SIGSTOP"),
      async ({ err, ms, own, cluster }) => {
        expect(err.code, err.message).toBe("BASIN_IO");
        expect(err.message).toContain(`the Dask scheduler at ${own.address} stopped answering during the run`);
        expect(ms).toBeLessThan(30_000);
        // The dashboard's status asks it too: an answer in bounded time, not a hang.
        const asked = Date.now();
        const status = (await cluster.status().catch((e: unknown) => e)) as BasinError;
        expect(status).toMatchObject({ code: "BASIN_IO" });
        expect(status.message).toContain(`the Dask scheduler at ${own.address} did not answer within 10 s`);
        expect(Date.now() - asked).toBeLessThan(20_000);
      },
      (own) => own.scheduler.kill("SIGCONT"),
    );
  }, 60_000);

  it("a Python that exits at once is BASIN_WORKER with what it printed, and the process lives on", async () => {
    const script = join(dir, "no-env.sh");
    writeFileSync(script, '#!/bin/sh\necho "conda: environment rapids not found" >&2\nexit 2\n');
    chmodSync(script, 0o755);
    const broken = new DaskCluster(fx.procs.address, { python: script });
    try {
      const err = (await fromColumns({ a: [1] })
        .compute({ cluster: broken })
        .catch((e: unknown) => e)) as BasinError;
      expect(err).toMatchObject({ code: "BASIN_WORKER" });
      expect(err.message).toContain("conda: environment rapids not found");
      expect(err.message).toContain("exited (code 2)");
    } finally {
      await broken.close();
    }
  });
});
