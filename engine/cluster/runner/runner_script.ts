// The job script of a fixed-size runner: one allocation of `tasks` tasks started
// with srun or mpirun, in which rank 0 runs the Dask scheduler, rank 1 the Basin
// driver (or, for the workbench, holds the client's slot) and ranks 2… the Dask
// workers. One script plays both parts: run plainly (by sbatch, or by bash for
// `submit: "none"`) it starts the launcher, which runs it again with the argument
// `rank` on every task; each rank learns its role from SLURM_PROCID,
// OMPI_COMM_WORLD_RANK or PMI_RANK and finds the scheduler through the scheduler
// file on shared storage. Each rank logs to rank-<n>.log and leaves rank-<n>.exit
// when its process ends; the driver leaves driver.out, driver.err and driver.status,
// and the job ends with the driver's exit status. Rendered text is shown to the
// user (and may be edited) before it is submitted.
import { BasinError } from "../../common/errors.js";
import { checkJobSpec, daskMemory, slurmMegabytes, walltimeSeconds, type SlurmJobSpec } from "../slurm/batch_script.js";
import { shellQuote } from "../ssh/shell_quote.js";

/** A runner's allocation and launch (a runner profile's fields; no secrets). */
export interface RunnerSpec extends Omit<SlurmJobSpec, "walltime"> {
  /** What starts the ranks inside the allocation. */
  launcher: "srun" | "mpirun";
  /** Ranks in all: the scheduler, the driver and tasks − 2 workers (at least 3). */
  tasks: number;
  /**
   * "sbatch" (default): one batch job asks SLURM for the tasks. "none": the launcher
   * runs directly where Basin's commands run (inside an allocation you hold, or on a
   * machine with MPI).
   */
  submit?: "sbatch" | "none";
  /** HH:MM:SS, MM:SS or D-HH:MM:SS; needed with sbatch (and with srun outside an allocation). */
  walltime?: string;
  /** More arguments for the launcher, e.g. ["--mpi=pmix"] or ["--mca", "btl", "tcp,self"]. */
  launcherArgs?: string[];
  /** The command that starts Basin on the nodes (default: this installation's when sbatch runs here, `basin` over ssh). */
  basin?: string;
}

/** What rank 1 does: run a pipeline file with the Basin CLI, or hold the slot of the workbench's client. */
export type RunnerMode =
  | {
      kind: "run";
      /** The command that starts Basin on the nodes, as shell words. */
      basin: string;
      /** The pipeline file, as the driver's folder sees it. */
      file: string;
      /** The driver's working folder (the pipeline's data paths are relative to it). */
      cwd: string;
      /** More arguments for `basin run` (--output, --explain, --no-optimize). */
      args: readonly string[];
    }
  | { kind: "serve" };

export interface RunnerScriptOptions {
  /** This session's folder on storage every node shares: the script itself, the scheduler file, logs. */
  dir: string;
  mode: RunnerMode;
  /** Seconds a rank waits for the scheduler file, and the driver for every worker (default 300). */
  startTimeout?: number;
}

/** The script's name in the session folder (its rank part runs it from there on every node). */
export const RUNNER_SCRIPT = "runner.sh";

/**
 * Refuses a runner's bad fields, naming the profile and the field.
 *
 * @example
 * checkRunnerSpec({ name: "mpi", launcher: "mpirun", tasks: 2, cores: 1, memory: "1G" }); // throws: tasks must be ≥ 3
 */
export function checkRunnerSpec(spec: RunnerSpec): void {
  const bad = (what: string) => new BasinError("BASIN_PLAN", `runner profile "${spec.name}": ${what}`);
  if (spec.launcher !== "srun" && spec.launcher !== "mpirun")
    throw bad(`launcher must be "srun" or "mpirun", got ${JSON.stringify(spec.launcher)}`);
  if (!Number.isInteger(spec.tasks) || spec.tasks < 3)
    throw bad(
      `tasks must be a whole number ≥ 3 (rank 0 the scheduler, rank 1 the driver, ranks 2… the workers), got ${JSON.stringify(spec.tasks)}`,
    );
  if (spec.submit !== undefined && spec.submit !== "sbatch" && spec.submit !== "none")
    throw bad(`submit must be "sbatch" or "none", got ${JSON.stringify(spec.submit)}`);
  if (typeof spec.cores !== "number" || typeof spec.memory !== "string")
    throw bad('needs cores and memory per task, e.g. "cores": 4, "memory": "16G"');
  if ((spec.submit ?? "sbatch") === "sbatch" && typeof spec.walltime !== "string")
    throw bad('needs a walltime for its sbatch job, e.g. "walltime": "01:00:00" (or "submit": "none")');
  if (spec.walltime !== undefined) walltimeSeconds(spec.walltime);
  if (
    spec.launcherArgs !== undefined &&
    !(Array.isArray(spec.launcherArgs) && spec.launcherArgs.every((a) => typeof a === "string"))
  )
    throw bad(`launcherArgs must be a list of strings, got ${JSON.stringify(spec.launcherArgs)}`);
  if (spec.basin !== undefined && (typeof spec.basin !== "string" || !spec.basin.trim()))
    throw bad(`basin must be the command that starts Basin on the nodes, e.g. "node /opt/basin/bin/basin.js"`);
  checkJobSpec(spec, "runner profile");
}

/** The resource flags of sbatch (as #SBATCH lines) or of an srun that makes its own allocation. */
function resourceFlags(spec: RunnerSpec): string[] {
  const gpus = spec.gpus ?? 0;
  return [
    `--job-name=basin-${spec.name}`,
    ...(spec.partition ? [`--partition=${spec.partition}`] : []),
    ...(spec.account ? [`--account=${spec.account}`] : []),
    ...(spec.walltime ? [`--time=${spec.walltime}`] : []),
    `--ntasks=${spec.tasks}`,
    `--cpus-per-task=${spec.cores}`,
    // memory is per task: SLURM's per-node --mem would not follow the tasks across nodes
    `--mem-per-cpu=${Math.max(1, Math.floor(slurmMegabytes(spec.memory) / spec.cores))}M`,
    ...(gpus > 0 ? [`--gpus-per-task=${gpus}`] : []),
  ];
}

/** Python that waits (bounded) until `workers` Dask workers have joined: argv scheduler file, workers, seconds. */
const WAIT_FOR_WORKERS = `import sys
from distributed import Client
c = Client(scheduler_file=sys.argv[1], timeout=sys.argv[3] + "s")
c.wait_for_workers(int(sys.argv[2]), timeout=float(sys.argv[3]))
c.close()`;

/** Python that stops the scheduler and its workers: argv scheduler file. */
const SHUTDOWN = `import sys
from distributed import Client
Client(scheduler_file=sys.argv[1], timeout="20s").shutdown()`;

/**
 * @example
 * const text = renderRunnerScript({ name: "hpc", launcher: "srun", tasks: 4, walltime: "01:00:00", cores: 4, memory: "8G" },
 *   { dir: "/shared/basin/hpc-1", mode: { kind: "serve" } });
 */
export function renderRunnerScript(spec: RunnerSpec, options: RunnerScriptOptions): string {
  checkRunnerSpec(spec);
  const dir = options.dir.replace(/\/+$/, "");
  const gpus = spec.gpus ?? 0;
  const protocol = spec.protocol ?? "tcp";
  const timeout = Math.max(1, Math.round(options.startTimeout ?? 300));
  const sbatch = (spec.submit ?? "sbatch") === "sbatch";
  const workers = spec.tasks - 2;
  const extra = (spec.launcherArgs ?? []).map(shellQuote).join(" ");
  const launch =
    spec.launcher === "srun"
      ? [
          `LAUNCH=(srun --ntasks=${spec.tasks} --cpus-per-task=${spec.cores} --kill-on-bad-exit=0${extra ? ` ${extra}` : ""})`,
          ...(sbatch
            ? []
            : [
                "# outside an allocation srun asks SLURM for one itself",
                `[ -n "\${SLURM_JOB_ID:-}" ] || LAUNCH+=(${resourceFlags(spec).join(" ")})`,
              ]),
        ]
      : [
          `LAUNCH=(mpirun -n ${spec.tasks} --bind-to none${extra ? ` ${extra}` : ""})`,
          '[ "$(id -u)" = 0 ] && LAUNCH+=(--allow-run-as-root)',
          "# inside a SLURM allocation mpirun has a slot per task; elsewhere it counts cores",
          `[ -z "\${SLURM_JOB_ID:-}" ] && [ "$(nproc)" -lt ${spec.tasks} ] && LAUNCH+=(--oversubscribe)`,
        ];
  const mode = options.mode;
  const workerArgs = `--scheduler-file "$SCHED" --name "basin-rank-$RANK" --protocol ${protocol}`;
  const driver =
    mode.kind === "run"
      ? [
          `    if ! "$PY" -c ${shellQuote(WAIT_FOR_WORKERS)} "$SCHED" ${workers} ${timeout}; then`,
          `      echo "basin: not all ${workers} Dask workers (ranks 2-${spec.tasks - 1}) joined the scheduler within ${timeout} s; see their logs $DIR/rank-<n>.log" >"$DIR/driver.err"`,
          "      status=1",
          "    else",
          `      ADDR=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["address"])' "$SCHED")`,
          `      (cd ${shellQuote(mode.cwd)} && BASIN_PYTHON="$PY" exec ${mode.basin} run ${[mode.file, ...mode.args].map(shellQuote).join(" ")} --cluster "$ADDR") >"$DIR/driver.out" 2>"$DIR/driver.err" </dev/null &`,
          "      child=$!",
          '      wait "$child"',
          "      status=$?",
          "    fi",
          '    echo "$status" >"$DIR/driver.status.part" && mv "$DIR/driver.status.part" "$DIR/driver.status"',
          "    # the pipeline is done: stop the scheduler and its workers, and with them the launcher",
          `    timeout 30 "$PY" -c ${shellQuote(SHUTDOWN)} "$SCHED" || echo "basin: could not shut the Dask cluster down; the job script stops it"`,
          '    finish "$status" "the Basin driver"',
        ]
      : [
          '    echo "basin: rank 1 holds the client\'s slot; the workbench connects to the scheduler in $SCHED"',
          '    while :; do sleep 3600 & child=$!; wait "$child"; done',
        ];
  const ucx =
    protocol === "ucx"
      ? [
          `  if ! "$PY" -c 'import ucp' 2>/dev/null; then echo "basin: protocol ucx needs ucx-py, which $PY on $(hostname) cannot import (import ucp); install ucx-py in that environment or use protocol tcp"; finish 1 "rank $RANK"; fi`,
        ]
      : [];
  const lines = [
    "#!/bin/bash",
    ...(sbatch ? [...resourceFlags(spec), `--output=${dir}/basin-${spec.name}-%j.log`].map((f) => `#SBATCH ${f}`) : []),
    `# A Basin runner: ${spec.tasks} tasks started with ${spec.launcher}. Rank 0 runs the Dask scheduler,`,
    `# rank 1 ${mode.kind === "run" ? "the Basin driver" : "holds the workbench client's slot"}, ranks 2-${spec.tasks - 1} the Dask workers${gpus > 0 ? " (dask cuda worker)" : ""};`,
    "# each rank logs to rank-<n>.log in DIR.",
    "set -u",
    `DIR=${shellQuote(dir)}`,
    'SCHED="$DIR/scheduler.json"',
    ...(spec.modules?.length ? [`module load ${spec.modules.join(" ")}`] : []),
    ...(spec.conda ? [`eval "$(conda shell.bash hook)"`, `conda activate ${spec.conda}`] : []),
    `PY=${shellQuote(spec.python ?? "python3")}`,
    "",
    'if [ "${1:-}" = rank ]; then',
    ...(spec.launcher === "srun"
      ? ['  RANK="${SLURM_PROCID:-}"']
      : [
          "  # (not SLURM_PROCID: inside a batch job every process mpirun starts inherits the batch script's 0)",
          '  RANK="${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${PMIX_RANK:-}}}"',
        ]),
    '  if [ -z "$RANK" ]; then',
    `    echo "basin: no rank in the environment (${spec.launcher === "srun" ? "SLURM_PROCID" : "OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK"}): $0 rank is started by ${spec.launcher}" >&2`,
    "    exit 2",
    "  fi",
    '  exec >"$DIR/rank-$RANK.log" 2>&1',
    "  child=",
    "  # a cancelled job's rank stops its process at once (SLURM may not find it after the shell went)",
    `  trap '[ -n "$child" ] && kill -KILL "$child" 2>/dev/null; exit 143' TERM INT`,
    "  # every rank exits 0, so that mpirun does not end the others when one dies: the .exit file says how it ended",
    '  finish() { echo "$1" >"$DIR/rank-$RANK.exit"; echo "basin: rank $RANK ($2) exited with status $1"; exit 0; }',
    "  wait_for_scheduler() {",
    `    for _ in $(seq ${timeout * 10}); do [ -s "$SCHED" ] && return 0; sleep 0.1; done`,
    `    echo "basin: rank 0 (the Dask scheduler) wrote no scheduler file $SCHED within ${timeout} s; see $DIR/rank-0.log"`,
    '    [ "$RANK" = 1 ] && echo 1 >"$DIR/driver.status"',
    '    finish 1 "$1"',
    "  }",
    ...ucx,
    '  case "$RANK" in',
    "  0)",
    `    "$PY" -m distributed.cli.dask_scheduler --scheduler-file "$SCHED" --protocol ${protocol} --port 0 --dashboard-address :0 &`,
    "    child=$!",
    '    wait "$child"',
    '    finish $? "the Dask scheduler"',
    "    ;;",
    "  1)",
    `    wait_for_scheduler "${mode.kind === "run" ? "the Basin driver" : "the client's slot"}"`,
    ...driver,
    "    ;;",
    "  *)",
    '    wait_for_scheduler "a Dask worker"',
    gpus > 0
      ? `    "$PY" -m dask cuda worker ${workerArgs} --memory-limit ${daskMemory(spec.memory)} &`
      : `    "$PY" -m distributed.cli.dask_worker ${workerArgs} --nworkers 1 --nthreads ${spec.cores} --memory-limit ${daskMemory(spec.memory)} --no-nanny &`,
    "    child=$!",
    '    wait "$child"',
    '    finish $? "a Dask worker"',
    "    ;;",
    "  esac",
    "fi",
    "",
    "# The job: start every rank, and end with the driver's exit status.",
    'rm -f "$SCHED" "$DIR"/driver.* "$DIR"/rank-*.exit',
    ...launch,
    `"\${LAUNCH[@]}" bash "$DIR/${RUNNER_SCRIPT}" rank &`,
    "L=$!",
    `trap 'kill -TERM "$L" 2>/dev/null; sleep 1; kill -TERM "$L" 2>/dev/null; sleep 1; kill -KILL $(jobs -p) 2>/dev/null; exit 143' TERM INT`,
    'while kill -0 "$L" 2>/dev/null; do',
    '  if [ -e "$DIR/driver.status" ]; then',
    "    # the driver is done and shuts the cluster down: give the ranks 30 s to end, then stop them",
    '    for _ in $(seq 300); do kill -0 "$L" 2>/dev/null || break; sleep 0.1; done',
    '    kill -TERM "$L" 2>/dev/null; sleep 1; kill -TERM "$L" 2>/dev/null',
    "    break",
    "  fi",
    "  sleep 0.5",
    "done",
    'wait "$L" 2>/dev/null',
    'if [ -s "$DIR/driver.status" ]; then exit "$(cat "$DIR/driver.status")"; fi',
    mode.kind === "run"
      ? `echo "basin: ${spec.launcher} ended before the Basin driver (rank 1) finished; see $DIR/rank-<n>.log" >&2`
      : `echo "basin: ${spec.launcher} ended while the workbench used the cluster; see $DIR/rank-<n>.log" >&2`,
    "exit 1",
    "",
  ];
  return lines.join("\n");
}
