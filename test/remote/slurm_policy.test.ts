// The adaptive scaling policy (a pure function), the parsing of sbatch and squeue
// output, and SlurmCluster's option checks, without a cluster.
import { describe, expect, it } from "vitest";
import { scaleDecision, type PolicyInput, type PolicyJob } from "../../engine/cluster/slurm/scaling_policy.js";
import { jobEnded, parseSbatch, parseSqueue } from "../../engine/cluster/slurm/slurm_commands.js";
import { SlurmCluster } from "../../engine/cluster/slurm/slurm_cluster.js";

const NOW = 1_000_000;
const sched: PolicyJob = { id: "1", starting: false, scheduler: true };
const input = (over: Partial<PolicyInput>): PolicyInput => ({
  now: NOW,
  jobs: [sched],
  processing: 0,
  waiting: 0,
  threadsPerJob: 4,
  minJobs: 1,
  maxJobs: 4,
  idleMs: 10_000,
  ...over,
});

describe("adaptive scaling policy", () => {
  it("submits up to the minimum whatever the load", () => {
    expect(scaleDecision(input({ jobs: [], minJobs: 2 }))).toEqual({ submit: 2, remove: [] });
    expect(scaleDecision(input({ minJobs: 3 }))).toEqual({ submit: 2, remove: [] });
  });

  it("adds jobs for the tasks beyond the live jobs' threads, capped at the maximum", () => {
    // 4 threads hold 4 tasks: nothing to add
    expect(scaleDecision(input({ processing: 4 }))).toEqual({ submit: 0, remove: [] });
    // 9 tasks on 4 threads: two more jobs of 4
    expect(scaleDecision(input({ processing: 4, waiting: 5 }))).toEqual({ submit: 2, remove: [] });
    // 100 tasks: as many as the maximum allows
    expect(scaleDecision(input({ processing: 4, waiting: 96 }))).toEqual({ submit: 3, remove: [] });
    expect(
      scaleDecision(
        input({
          processing: 4,
          waiting: 96,
          jobs: [
            sched,
            { id: "2", starting: false, scheduler: false },
            { id: "3", starting: false, scheduler: false },
            { id: "4", starting: false, scheduler: false },
          ],
        }),
      ),
    ).toEqual({ submit: 0, remove: [] });
  });

  it("counts starting (pending) jobs as capacity, so the same work does not ask for a job twice", () => {
    const jobs = [sched, { id: "2", starting: true, scheduler: false, idleSince: NOW - 1 }];
    expect(scaleDecision(input({ jobs, processing: 4, waiting: 4 }))).toEqual({ submit: 0, remove: [] });
    expect(scaleDecision(input({ jobs, processing: 4, waiting: 5 }))).toEqual({ submit: 1, remove: [] });
  });

  it("removes jobs idle for the idle period, pending ones first, never the scheduler's, never below the minimum", () => {
    const idle = (id: string, ms: number, starting = false): PolicyJob => ({
      id,
      starting,
      scheduler: false,
      idleSince: NOW - ms,
    });
    const schedIdle = { ...sched, idleSince: NOW - 99_000 };
    // only the long-idle ones; the scheduler's job stays
    expect(scaleDecision(input({ jobs: [schedIdle, idle("2", 20_000), idle("3", 5_000)] })).remove).toEqual(["2"]);
    // a starting (pending) job goes before a running one idle longer
    expect(
      scaleDecision(input({ jobs: [schedIdle, idle("2", 50_000), idle("3", 20_000, true)], minJobs: 2 })).remove,
    ).toEqual(["3"]);
    // the minimum holds
    expect(scaleDecision(input({ jobs: [schedIdle, idle("2", 50_000)], minJobs: 2 })).remove).toEqual([]);
    // a busy job (idleSince undefined) is never removed
    expect(scaleDecision(input({ jobs: [schedIdle, { id: "2", starting: false, scheduler: false }] })).remove).toEqual(
      [],
    );
  });

  it("keeps idle jobs while tasks wait, or while the others could not hold the work", () => {
    const jobs = [sched, { id: "2", starting: false, scheduler: false, idleSince: NOW - 60_000 }];
    expect(scaleDecision(input({ jobs, waiting: 1, processing: 3, maxJobs: 2 })).remove).toEqual([]);
    expect(scaleDecision(input({ jobs, processing: 5, maxJobs: 2 })).remove).toEqual([]);
    expect(scaleDecision(input({ jobs, processing: 4 })).remove).toEqual(["2"]);
  });
});

describe("SLURM cluster options", () => {
  const spec = { name: "t", walltime: "01:00:00", cores: 2, memory: "4G" };
  it("refuses a scale that is not whole jobs ≥ 1 with minJobs ≤ maxJobs, naming the profile", () => {
    expect(() => new SlurmCluster({ spec, scale: { jobs: 0 } })).toThrow(
      /SLURM profile "t": scale needs jobs ≥ 1, or 1 ≤ minJobs ≤ maxJobs \(whole numbers\), got \{"jobs":0\}/,
    );
    expect(() => new SlurmCluster({ spec, scale: { minJobs: 3, maxJobs: 2 } })).toThrow(
      /got \{"minJobs":3,"maxJobs":2\}/,
    );
    expect(() => new SlurmCluster({ spec, scale: { minJobs: 0.5, maxJobs: 2 } })).toThrow(/scale needs/);
  });

  it("says to start the cluster before using its Dask cluster", () => {
    expect(() => new SlurmCluster({ spec }).dask).toThrow(
      /the SLURM cluster "t" is not started; await start\(\) first/,
    );
  });
});

describe("SLURM command output", () => {
  it("reads the job id from sbatch --parsable, with or without a cluster name", () => {
    expect(parseSbatch("4242\n")).toBe("4242");
    expect(parseSbatch("17;cluster-a\n")).toBe("17");
    expect(() => parseSbatch("Submitted batch job 5")).toThrow(
      /sbatch printed no job id \(it said "Submitted batch job 5"\)/,
    );
  });

  it("reads squeue's id, state and reason, and knows which states have ended", () => {
    expect(parseSqueue("12|PENDING|(Resources)\n13|RUNNING|node-7\n14|FAILED|(NonZeroExitCode)\n")).toEqual([
      { id: "12", state: "PENDING", reason: "Resources" },
      { id: "13", state: "RUNNING", reason: "node-7" },
      { id: "14", state: "FAILED", reason: "NonZeroExitCode" },
    ]);
    expect(["PENDING", "RUNNING", "COMPLETING", "CONFIGURING"].map(jobEnded)).toEqual([false, false, false, false]);
    expect(["COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL"].every(jobEnded)).toBe(true);
  });
});
