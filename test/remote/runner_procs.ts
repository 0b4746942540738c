// What the runner tests share: Open MPI's presence, the pipelines they run (one that
// waits for a file, so that a test can act while the driver is inside the job), and
// the process of one rank's Dask worker.
import { existsSync, readdirSync, readFileSync } from "node:fs";

/** Fails with the apt-get line when Open MPI is missing. */
export function requireMpi(): void {
  if (!existsSync("/usr/bin/mpirun"))
    throw new Error(
      "the runner tests need Open MPI: apt-get install -y --no-install-recommends openmpi-bin (.ci/run does this)",
    );
}

/** A groupby (shown) and a join (the default export) over partitions with nulls, unicode and an empty one. */
export const RUNNER_PIPELINE = `import { col, count, fromColumns, show } from "basin";
const n = 501;
const k = Array.from({ length: n }, (_, i) => (i % 9 === 0 ? null : ["α", "東京", "x"][i % 3]));
const v = Array.from({ length: n }, (_, i) => (i * 31) % 97);
const left = fromColumns({ k, v }, { partitions: [0, 250, 1, 250] });
const right = fromColumns({ k: ["α", "x", "zz", null], w: [1, 2, 3, 4] });
show(left.groupBy("k").agg(col("v").sum().alias("s"), count().alias("n")).sort("k"), "groupby");
export default left.join(right, { on: "k" }).groupBy("k", "w").agg(count().alias("n"), col("v").sum().alias("s")).sort("k");
`;

/** RUNNER_PIPELINE, after writing the file "ready" and waiting (at most 2 minutes) for a file "go" in its folder. */
export const WAITING_PIPELINE = `import { existsSync, writeFileSync } from "node:fs";
writeFileSync("ready", "");
for (let i = 0; i < 1200 && !existsSync("go"); i++) await new Promise((r) => setTimeout(r, 100));
${RUNNER_PIPELINE}`;

/** The pid of the Dask worker of `rank`, among the processes whose command line names a path under `base`. */
export function workerPid(base: string, rank: number): number {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      if (
        cmd.some((a) => a.startsWith(base)) &&
        cmd.includes(`basin-rank-${rank}`) &&
        cmd.some((a) => a.includes("dask_worker"))
      )
        return Number(entry);
    } catch {
      // it ended meanwhile
    }
  }
  throw new Error(`no Dask worker process of rank ${rank} under ${base}`);
}
