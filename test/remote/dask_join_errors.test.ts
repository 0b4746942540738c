// Joins on Dask against the local engine (null, duplicate and skewed keys), and the
// Dask backend's failures: an operation it cannot translate fails before anything is
// submitted, naming it and its source line; a task's cast error keeps its code; an
// unreachable scheduler fails within the connect timeout; a worker killed mid-run
// does not change the result (Dask recomputes its tasks); Ctrl+C during `basin run
// --cluster` cancels the run and exits 130 (the bridge is not reported as a broken Python).
import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { BasinError, col, DaskCluster, fromColumns, type DataFrame } from "../../engine/api/index.js";
import { seededRandom } from "../../engine/common/random.js";
import { expectSameRows, tableRows } from "../helpers/oracle.js";
import { BASIN_BIN, errorLines, makeTempDir, removeDir, runBasin, writeText } from "../helpers/cli.js";
import { daskFixture, freePort, PYTHON } from "./dask_procs.js";

const fx = daskFixture(2);

function sides(n: number): { left: DataFrame; right: DataFrame } {
  const r = seededRandom(11);
  const key = () => (r() < 0.1 ? null : r() < 0.4 ? 1 : Math.floor(r() * 30));
  const left = fromColumns(
    {
      id: Array.from({ length: n }, (_, i) => i),
      k: Array.from({ length: n }, key),
      s: Array.from({ length: n }, (_, i) => (i % 7 === 0 ? null : `l東${i % 5}`)),
    },
    { partitions: [0, 1, n - 4, 3], types: { k: "int64" } },
  );
  const m = Math.floor(n / 3);
  const right = fromColumns(
    {
      k: Array.from({ length: m }, key),
      w: Array.from({ length: m }, (_, i) => (i % 5 === 0 ? null : i * 0.5)),
      s: Array.from({ length: m }, (_, i) => `r${i}`),
    },
    { partitions: [m - 1, 0, 1], types: { k: "int64", w: "float64" } },
  );
  return { left, right };
}

describe("joins on Dask", () => {
  it.each(["inner", "left", "right", "outer", "semi", "anti"] as const)(
    "%s join matches the local engine (null keys never match)",
    async (how) => {
      const { left, right } = sides(400);
      const frame = left.join(right, { on: "k", how });
      const expected = await frame.compute({ cluster: fx.local });
      const actual = await frame.compute({ cluster: fx.dask });
      expect(actual.schema).toEqual(expected.schema);
      expectSameRows(tableRows(actual), tableRows(expected), `${how} join`);
    },
  );

  it("a join then a group-by", async () => {
    const { left, right } = sides(300);
    const frame = left
      .join(right, { on: "k" })
      .groupBy("k")
      .agg(col("w").sum().alias("sw"), col("s_right").nUnique().alias("u"));
    expectSameRows(
      tableRows(await frame.compute({ cluster: fx.dask })),
      tableRows(await frame.compute({ cluster: fx.local })),
      "join + groupBy",
    );
  });
});

describe("Dask failures", () => {
  it("an operation the bridge cannot translate fails before submitting, naming it and the pipeline line", async () => {
    const df = fromColumns({ a: [1, 2, 3] }).tail(2);
    const err = await fx.dask.runPlan(df.toPlan()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BasinError);
    expect((err as BasinError).code).toBe("BASIN_PLAN");
    expect((err as BasinError).message).toMatch(/tail\(\) cannot run on a Dask cluster/);
    expect((err as BasinError).location).toMatch(/dask_join_errors\.test\.ts:\d+/);
    const st = await fx.dask.status();
    expect(st.workers.every((w) => w.tasks === 0)).toBe(true);
  });

  it("an unsupported function is named too", async () => {
    const df = fromColumns({ s: ["2024-01-01"] }).select(col("s").str.toDate("%Y-%m-%d").alias("d"));
    await expect(df.compute({ cluster: fx.dask })).rejects.toThrow(/str\.toDate\(\) cannot run on a Dask cluster/);
  });

  it("a strict cast failing inside a task keeps its code and says what to do", async () => {
    const df = fromColumns({ s: ["1", "x", null] }, { partitions: 2 }).select(col("s").cast("int64").alias("n"));
    const err = (await df.compute({ cluster: fx.dask }).catch((e: unknown) => e)) as BasinError;
    expect(err.code).toBe("BASIN_CAST");
    expect(err.message).toMatch(/cannot cast "x" to int64.*strict: false/);
    const lenient = await fromColumns({ s: ["1", "x", null] })
      .select(col("s").cast("int64", { strict: false }).alias("n"))
      .compute({ cluster: fx.dask });
    expect(lenient.column("n")).toEqual([1, null, null]);
  });

  it("status lists the workers with their memory", async () => {
    const st = await fx.dask.status();
    expect(st.workers.length).toBe(2);
    expect(st.workers[0].memory).toBeGreaterThan(0);
    expect(st.dashboard).toMatch(/^http/);
  });

  it("an unreachable scheduler fails with a clear error within the timeout", async () => {
    const port = await freePort();
    const c = new DaskCluster(`tcp://127.0.0.1:${port}`, { python: PYTHON, connectTimeout: 2 });
    const t0 = performance.now();
    try {
      const err = (await fromColumns({ a: [1] })
        .compute({ cluster: c })
        .catch((e: unknown) => e)) as BasinError;
      expect(err).toBeInstanceOf(BasinError);
      expect(err.code).toBe("BASIN_IO");
      expect(err.message).toMatch(new RegExp(`cannot reach the Dask scheduler at tcp://127.0.0.1:${port} within 2 s`));
      expect(performance.now() - t0).toBeLessThan(15_000);
    } finally {
      await c.close();
    }
  });

  it("a BASIN_DASK_NO_WORKERS_S that is no positive number is BASIN_PLAN naming it, not a broken Python", () => {
    const before = process.env.BASIN_DASK_NO_WORKERS_S;
    try {
      for (const bad of ["1m", "0", "-5", ""]) {
        process.env.BASIN_DASK_NO_WORKERS_S = bad;
        expect(() => new DaskCluster("tcp://127.0.0.1:8786"), bad).toThrow(
          expect.objectContaining({
            code: "BASIN_PLAN",
            message: expect.stringContaining("BASIN_DASK_NO_WORKERS_S must be a positive number of seconds"),
          }),
        );
      }
      process.env.BASIN_DASK_NO_WORKERS_S = "90";
      expect(() => new DaskCluster("tcp://127.0.0.1:8786")).not.toThrow();
    } finally {
      if (before === undefined) delete process.env.BASIN_DASK_NO_WORKERS_S;
      else process.env.BASIN_DASK_NO_WORKERS_S = before;
    }
  });

  it("a bad address is refused at once: no scheme, no port, a path after it, tls:// or ucx://", () => {
    for (const bad of ["127.0.0.1:8786", "tcp://127.0.0.1", "tcp://127.0.0.1:8786/extra", "tcp://h:99999"])
      expect(() => new DaskCluster(bad), bad).toThrow(
        expect.objectContaining({
          code: "BASIN_PLAN",
          message: expect.stringContaining("not a Dask scheduler address; write it as tcp://host:port"),
        }),
      );
    for (const scheme of ["tls", "ucx"])
      expect(() => new DaskCluster(`${scheme}://127.0.0.1:8786`)).toThrow(/over tcp:\/\/ only/);
    for (const good of ["tcp://127.0.0.1:8786", "tcp://node-01.cluster:8786", "tcp://[::1]:8786"])
      expect(() => new DaskCluster(good)).not.toThrow();
  });

  it("a worker killed mid-run: Dask recomputes and the result is still right", async () => {
    const extra = await fx.procs.addWorker();
    const n = 40_000;
    const df = fromColumns(
      { k: Array.from({ length: n }, (_, i) => i % 97), v: Array.from({ length: n }, (_, i) => i) },
      { partitions: 16 },
    )
      .withColumns({ w: col("v").mul(3).mod(1001) })
      .groupBy("k")
      .agg(col("w").sum().alias("s"), col("v").median().alias("md"));
    const expected = await df.compute({ cluster: fx.local });
    const running = df.compute({ cluster: fx.dask });
    // Kill the extra worker once the run has tasks on the workers.
    for (let i = 0; i < 100 && (await fx.dask.status()).workers.every((w) => w.tasks === 0); i++)
      await new Promise((r) => setTimeout(r, 20));
    extra.kill("SIGKILL");
    const actual = await running;
    expectSameRows(tableRows(actual), tableRows(expected), "after a worker died");
    // The scheduler notices the dead worker (its connection closed) and works on with two.
    let left = 3;
    for (let i = 0; i < 100 && left !== 2; i++, await new Promise((r) => setTimeout(r, 100)))
      left = (await fx.dask.status()).workers.length;
    expect(left).toBe(2);
  });
});

describe("basin run --cluster", () => {
  it("runs a CSV pipeline on the Dask scheduler and prints the same table as locally", async () => {
    const dir = makeTempDir();
    try {
      writeText(dir, "data.csv", "city,v\nZürich,1\n東京,2\nZürich,\n,4\n東京,5\n");
      writeText(
        dir,
        "p.ts",
        `import { readCsv, col, count } from "basin";
export default readCsv("data.csv").groupBy("city").agg(col("v").sum().alias("s"), count().alias("n")).sort("city");
`,
      );
      const localRun = await runBasin(["run", "p.ts"], { cwd: dir });
      const daskRun = await runBasin(["run", "p.ts", "--cluster", fx.procs.address], {
        cwd: dir,
        env: { ...process.env, BASIN_PYTHON: PYTHON },
        timeoutMs: 60_000,
      });
      expect(daskRun.stderr).toMatch(new RegExp(`ran on Dask at ${fx.procs.address}`));
      expect(daskRun.code).toBe(0);
      expect(daskRun.stdout).toBe(localRun.stdout);
      // A saved profile by name (profiles live in BASIN_CONFIG_DIR here).
      mkdirSync(`${dir}/config`);
      writeText(
        dir,
        "config/profiles.json",
        JSON.stringify([{ kind: "dask", name: "lab", scheduler: fx.procs.address }]),
      );
      const env = { ...process.env, BASIN_PYTHON: PYTHON, BASIN_CONFIG_DIR: `${dir}/config` };
      const byName = await runBasin(["run", "p.ts", "--cluster", "lab"], { cwd: dir, env, timeoutMs: 60_000 });
      expect(byName.code).toBe(0);
      expect(byName.stdout).toBe(localRun.stdout);
      const bad = await runBasin(["run", "p.ts", "--cluster", "nowhere"], { cwd: dir, env });
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/no cluster profile named "nowhere" in .*profiles\.json; saved: lab/);
    } finally {
      removeDir(dir);
    }
  });

  // SIGINT is Ctrl+C (the bridge ignores it; basin cancels the run); SIGTERM, a stop from the
  // system, ends the bridge too, and the run is still reported as cancelled.
  it.each(["SIGINT", "SIGTERM"] as const)(
    "%s to the process group cancels the run on Dask and exits 128 + the signal",
    async (sig) => {
      const dir = makeTempDir();
      try {
        // Work that keeps the Dask workers busy for seconds (regex replacements over 1.6M strings).
        writeText(
          dir,
          "slow.ts",
          `import { fromColumns, col, count, lit } from "basin";
const n = 100_000;
export default fromColumns({ s: Array.from({ length: n }, (_, i) => "abcabd-" + (i % 1000) + "-éé-abcabcabc-" + i) }, { partitions: 4 })
  .withColumns({ j: lit(1) })
  .join(fromColumns({ j: Array(16).fill(1), r: Array.from({ length: 16 }, (_, i) => i) }), { on: "j" })
  .withColumns({ t: col("s").str.replace("(a|b|c)+", "$1-", { all: true }) })
  .groupBy("r")
  .agg(count().alias("n"), col("t").max().alias("m"));
`,
        );
        // Its own process group, as a shell gives a foreground job: Ctrl+C reaches basin and the bridge.
        const child = spawn(process.execPath, [BASIN_BIN, "run", "slow.ts", "--cluster", fx.procs.address], {
          cwd: dir,
          env: { ...process.env, BASIN_PYTHON: PYTHON, NO_COLOR: "1" },
          detached: true,
          stdio: ["ignore", "pipe", "pipe"],
        });
        let stderr = "";
        child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
        const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
          child.once("exit", (code, signal) => resolve({ code, signal })),
        );
        try {
          // Once the workers run its tasks (bounded: 30 s).
          for (let i = 0; i < 300 && (await fx.dask.status()).processing === 0; i++)
            await new Promise((r) => setTimeout(r, 100));
          expect((await fx.dask.status()).processing, stderr).toBeGreaterThan(0);
          process.kill(-child.pid!, sig);
          const guard = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 20_000);
          const r = await exit;
          clearTimeout(guard);
          expect(r.code, stderr).toBe(sig === "SIGINT" ? 130 : 143);
          expect(stderr).not.toMatch(/KeyboardInterrupt|check that this Python|BASIN_WORKER/);
          expect(errorLines(stderr)).toEqual([expect.stringMatching(/^error \[BASIN_CANCELLED\]/)]);
          // The cancelled tasks leave the workers.
          let busy = 1;
          for (let i = 0; i < 100 && busy > 0; i++, await new Promise((r) => setTimeout(r, 100)))
            busy = (await fx.dask.status()).processing;
          expect(busy).toBe(0);
        } finally {
          if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, "SIGKILL");
        }
      } finally {
        removeDir(dir);
      }
    },
    60_000,
  );
});
