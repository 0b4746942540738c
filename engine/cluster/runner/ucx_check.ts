// protocol "ucx" needs ucx-py in the Python the ranks run: checked before anything is
// submitted, in the environment the job script sets up (its modules and conda), where
// Basin's commands run (here or on the login node); each rank checks again on its node.
import { BasinError } from "../../common/errors.js";
import type { CommandRunner } from "../slurm/command_runner.js";
import { shellQuote } from "../ssh/shell_quote.js";
import type { RunnerSpec } from "./runner_script.js";

/**
 * Fails with what to do when the profile's Python cannot `import ucp`.
 *
 * @example
 * await checkUcx(new LocalRunner(), { ...spec, protocol: "ucx" });
 */
export async function checkUcx(runner: CommandRunner, spec: RunnerSpec): Promise<void> {
  const python = spec.python ?? "python3";
  const setup = [
    ...(spec.modules?.length ? [`module load ${spec.modules.join(" ")}`] : []),
    ...(spec.conda ? [`eval "$(conda shell.bash hook)"`, `conda activate ${spec.conda}`] : []),
    `${shellQuote(python)} -c 'import ucp'`,
  ].join(" && ");
  const r = await runner.run(["bash", "-c", setup]);
  if (r.code === 0) return;
  const why =
    r.stderr
      .trim()
      .split("\n")
      .filter((l) => l.trim())
      .pop() ?? `exit code ${r.code}`;
  throw new BasinError(
    "BASIN_PLAN",
    `runner profile "${spec.name}": protocol "ucx" needs ucx-py, but ${python} on ${runner.where} cannot import it (${why}); install ucx-py in that environment (e.g. conda install -c conda-forge -c rapidsai ucx-py), or set "protocol": "tcp"`,
  );
}
