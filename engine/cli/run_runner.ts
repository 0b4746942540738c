// `basin run file.ts --cluster RUNNER` for a runner profile: the pipeline runs on the
// driver rank of one srun/mpirun job, this same CLI there; its output is printed here
// as it comes, and `basin run` exits with the pipeline's status.
import { existsSync, readFileSync } from "node:fs";
import { BasinError } from "../common/errors.js";
import type { RunnerProfile } from "../cluster/profiles.js";
import { basinCommand } from "../cluster/runner/run_on_runner.js";
import { runWithRunner } from "../cluster/runner/open_runner.js";

/**
 * Resolves to the pipeline's exit status on the runner.
 *
 * @example
 * process.exitCode = await runOnRunnerProfile("p.ts", findProfile("mpi") as RunnerProfile, {});
 */
export async function runOnRunnerProfile(
  file: string,
  profile: RunnerProfile,
  opts: { output?: string; explain?: boolean; optimize?: boolean },
): Promise<number> {
  if (!existsSync(file))
    throw new BasinError("BASIN_IO", `${file}: no such pipeline file (looked in ${process.cwd()})`);
  return runWithRunner(profile, file, {
    ...opts,
    // the nodes start this installation, as this process was started, when they share this machine's files
    thisBasin: basinCommand(process.execPath, [...process.execArgv, process.argv[1]]),
    readSource: (f) => readFileSync(f, "utf8"),
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    log: (line) => process.stderr.write(`${line}\n`),
  });
}
