// `basin run FILE --cluster RUNNER`: the whole run happens inside the runner's job.
// Its rank 1 runs this same CLI (`basin run FILE --cluster <the scheduler rank 0
// started>`), so the answer is computed as with a dask profile; this side submits
// the job, streams the driver's output as it is written, reports a worker rank that
// dies (with its log), and resolves to the driver's exit status once the job has
// shut its cluster down. The job is cancelled on any failure and on process exit.
import { basename, resolve } from "node:path";
import { BasinError } from "../../common/errors.js";
import type { CommandRunner } from "../slurm/command_runner.js";
import { shellQuote } from "../ssh/shell_quote.js";
import { RunnerJob, type RunnerJobOptions } from "./runner_job.js";
import type { RunnerMode } from "./runner_script.js";

export interface RunOnRunnerOptions extends Omit<RunnerJobOptions, "runner"> {
  runner: CommandRunner;
  /** The runner's commands run on this machine (not a login node): the file and the folder are shared as they are. */
  local: boolean;
  /** The driver's working folder on the nodes (default: the current folder here, the home folder on a login node). */
  workspace?: string;
  /** Arguments for the driver's `basin run` (--output, --explain, --no-optimize). */
  output?: string;
  explain?: boolean;
  optimize?: boolean;
  /** Reads the pipeline's source (to copy it to a login node's shared folder). */
  readSource: (file: string) => string;
  /** The command that starts this Basin installation, for the nodes when they share this machine's files. */
  thisBasin: string;
  /** The driver's output, as it is written. */
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Progress and problems, one line each. */
  log: (line: string) => void;
  /** Called with the job script before it is submitted; may return an edited one. */
  editScript?: (script: string) => string | Promise<string>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `file` inside one runner job; resolves to the pipeline's exit status.
 *
 * @example
 * const code = await runOnRunner("p.ts", { runner: new LocalRunner(), local: true, spec, ... });
 */
export async function runOnRunner(file: string, o: RunOnRunnerOptions): Promise<number> {
  const job = new RunnerJob(o);
  const spec = o.spec;
  let keep = false;
  try {
    const args = [
      ...(o.output ? ["--output", o.local ? resolve(o.output) : o.output] : []),
      ...(o.explain ? ["--explain"] : []),
      ...(o.optimize === false ? ["--no-optimize"] : []),
    ];
    // Here the nodes see this machine's files; a login node gets the pipeline's text in the shared folder.
    const mode: RunnerMode = o.local
      ? { kind: "run", basin: spec.basin ?? o.thisBasin, file: resolve(file), cwd: o.workspace ?? process.cwd(), args }
      : {
          kind: "run",
          basin: spec.basin ?? "basin",
          file: await job.put(basename(file), o.readSource(file)),
          cwd: o.workspace ?? (await o.runner.home()),
          args,
        };
    const rendered = await job.script(mode);
    await job.start(o.editScript ? await o.editScript(rendered) : rendered);
    const label = job.job.label;
    o.log(
      `${label} ${job.job.jobId ? "submitted" : "started"}: ${spec.tasks} tasks with ${spec.launcher} (scheduler, driver, ${spec.tasks - 2} workers); folder ${await job.directory()}`,
    );
    await job.waitForScheduler((s) => o.log(`${label} is pending (${s.reason || "waiting for resources"})`));
    o.log(`${label} is running; the driver (rank 1) starts once its ${spec.tasks - 2} workers have joined`);
    const status = await follow(job, o);
    if (status !== 0) keep = true;
    return status;
  } catch (e) {
    keep = true;
    throw e;
  } finally {
    await job.close(keep);
  }
}

/** Streams the driver's output until it has exited; resolves to its status once the job has ended. */
async function follow(job: RunnerJob, o: RunOnRunnerOptions): Promise<number> {
  const label = job.job.label;
  const seen = { out: 0, err: 0 };
  /** Writes what the driver added since; whole lines only unless `all` (the rest may still be being written). */
  const stream = async (all = false) => {
    for (const [name, key, sink] of [
      ["driver.out", "out", o.stdout],
      ["driver.err", "err", o.stderr],
    ] as const) {
      const text = (await job.read(name)) ?? "";
      const end = all ? text.length : text.lastIndexOf("\n") + 1;
      if (end > seen[key]) {
        sink(text.slice(seen[key], end));
        seen[key] = end;
      }
    }
  };
  const reported = new Set<number>();
  const workers = Array.from({ length: job.spec.tasks - 2 }, (_, i) => i + 2);
  for (;;) {
    await stream();
    // Looked at before the driver's status: the driver writes its status before it
    // stops the cluster, so ranks seen ended here with no status yet did not end by it.
    const exits = await job.rankExits();
    const state = await job.state();
    const done = (await job.read("driver.status"))?.trim();
    if (done && /^\d+$/.test(done)) {
      // the driver shuts the cluster down, and the job script then ends the job
      const ended = await job.waitEnded(45_000);
      await stream(true);
      if (!ended) o.log(`${label} did not end within 45 s of the pipeline's end; cancelling it`);
      return Number(done);
    }
    if (exits.has(0) || state.ended) {
      await stream();
      throw new BasinError(
        "BASIN_IO",
        `${label} (runner profile "${job.spec.name}") ${exits.has(0) ? "lost rank 0, the Dask scheduler," : `ended (${state.state}${state.reason ? `, ${state.reason}` : ""})`} before the pipeline finished; ${exits.has(0) ? await job.rankLog(0) : `${await job.tail()}\n${await job.rankLog(1)}`}`,
      );
    }
    for (const r of workers)
      if (exits.has(r) && !reported.has(r)) {
        reported.add(r);
        o.log(
          `rank ${r} (a Dask worker) exited with status ${exits.get(r)}${reported.size < workers.length ? "; the run goes on with the other workers (Dask recomputes what it held)" : ""}. ${await job.rankLog(r)}`,
        );
      }
    if (workers.every((r) => exits.has(r)))
      throw new BasinError(
        "BASIN_IO",
        `every Dask worker of ${label} (runner profile "${job.spec.name}": ranks ${workers.join(", ")}) exited before the pipeline finished, so it cannot go on; the job was cancelled. ${(await Promise.all(workers.map((r) => job.rankLog(r)))).join("\n")}`,
      );
    await sleep(job.pollMs);
  }
}

/**
 * The command that starts this installation's CLI, as shell words.
 *
 * @example
 * basinCommand("/usr/bin/node", ["/opt/basin/bin/basin.js"]); // "'/usr/bin/node' '/opt/basin/bin/basin.js'"
 */
export function basinCommand(node: string, args: string[]): string {
  return [node, ...args].map(shellQuote).join(" ");
}
