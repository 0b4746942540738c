// The runner's job script rendered from a profile: its #SBATCH lines (per-task
// memory and GPUs), modules and conda, the launcher line for srun and mpirun, the
// rank variable each launcher sets, `dask cuda worker` and the per-rank ucx check,
// the driver's command line quoted, and the serve mode's idle client rank; the rank
// part run by bash refuses to guess a rank the launcher did not give.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderRunnerScript, type RunnerSpec } from "../../engine/cluster/runner/runner_script.js";
import { slurmMegabytes } from "../../engine/cluster/slurm/batch_script.js";

const spec: RunnerSpec = {
  name: "big",
  launcher: "srun",
  tasks: 6,
  partition: "gpu",
  account: "lab-42",
  walltime: "01:00:00",
  cores: 4,
  memory: "10G",
};

const run = {
  kind: "run",
  basin: "node /opt/basin/bin/basin.js",
  file: "/home/me/p it's.ts",
  cwd: "/home/me",
  args: ["--output", "/home/me/out.parquet"],
} as const;

describe("runner job scripts", () => {
  it("asks sbatch for the tasks with per-task cores, memory and GPUs, and loads the environment", () => {
    const text = renderRunnerScript(
      { ...spec, gpus: 2, modules: ["cuda/12.2"], conda: "rapids", python: "/opt/py/bin/python" },
      { dir: "/shared/s1/", mode: run },
    );
    const lines = text.split("\n");
    expect(lines.filter((l) => l.startsWith("#SBATCH"))).toEqual([
      "#SBATCH --job-name=basin-big",
      "#SBATCH --partition=gpu",
      "#SBATCH --account=lab-42",
      "#SBATCH --time=01:00:00",
      "#SBATCH --ntasks=6",
      "#SBATCH --cpus-per-task=4",
      "#SBATCH --mem-per-cpu=2560M",
      "#SBATCH --gpus-per-task=2",
      "#SBATCH --output=/shared/s1/basin-big-%j.log",
    ]);
    expect(lines).toContain("module load cuda/12.2");
    expect(lines).toContain("conda activate rapids");
    expect(lines).toContain("PY='/opt/py/bin/python'");
    expect(lines).toContain("DIR='/shared/s1'");
    expect(lines).toContain("LAUNCH=(srun --ntasks=6 --cpus-per-task=4 --kill-on-bad-exit=0)");
    expect(lines).toContain('"${LAUNCH[@]}" bash "$DIR/runner.sh" rank &');
    expect(lines).toContain('  RANK="${SLURM_PROCID:-}"');
    expect(text).toMatch(
      /"\$PY" -m dask cuda worker --scheduler-file "\$SCHED" --name "basin-rank-\$RANK" --protocol tcp --memory-limit 10GiB &/,
    );
    expect(text).toContain(
      `(cd '/home/me' && BASIN_PYTHON="$PY" exec node /opt/basin/bin/basin.js run '/home/me/p it'\\''s.ts' '--output' '/home/me/out.parquet' --cluster "$ADDR")`,
    );
    // the driver waits for all 4 workers (ranks 2-5)
    expect(text).toMatch(/"\$SCHED" 4 300; then/);
    expect(text).not.toContain("import ucp");
    execFileSync("bash", ["-n"], { input: text });
  });

  it("starts mpirun with its rank variables (never the batch job's SLURM_PROCID), and ucx checked on every rank", () => {
    const text = renderRunnerScript(
      { ...spec, launcher: "mpirun", protocol: "ucx", launcherArgs: ["--mca", "btl", "tcp,self"] },
      { dir: "/s", mode: run, startTimeout: 60 },
    );
    const lines = text.split("\n");
    expect(lines).toContain("LAUNCH=(mpirun -n 6 --bind-to none '--mca' 'btl' 'tcp,self')");
    expect(lines).toContain('[ "$(id -u)" = 0 ] && LAUNCH+=(--allow-run-as-root)');
    expect(lines).toContain('[ -z "${SLURM_JOB_ID:-}" ] && [ "$(nproc)" -lt 6 ] && LAUNCH+=(--oversubscribe)');
    expect(lines).toContain('  RANK="${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${PMIX_RANK:-}}}"');
    expect(text).toContain("--protocol ucx --port 0");
    expect(text).toMatch(/if ! "\$PY" -c 'import ucp' .*protocol ucx needs ucx-py/);
    expect(text).toMatch(/distributed\.cli\.dask_worker .* --nthreads 4 --memory-limit 10GiB --no-nanny &/);
    execFileSync("bash", ["-n"], { input: text });
  });

  it("submit none: no #SBATCH lines, and srun asks for its own allocation only outside one", () => {
    const text = renderRunnerScript({ ...spec, submit: "none" }, { dir: "/s", mode: { kind: "serve" } });
    expect(text).not.toContain("#SBATCH");
    expect(text).toContain(
      '[ -n "${SLURM_JOB_ID:-}" ] || LAUNCH+=(--job-name=basin-big --partition=gpu --account=lab-42 --time=01:00:00 --ntasks=6 --cpus-per-task=4 --mem-per-cpu=2560M)',
    );
    // serve: rank 1 holds the client's slot and runs no driver
    expect(text).toContain("rank 1 holds the client's slot");
    expect(text).not.toContain("basin.js");
    execFileSync("bash", ["-n"], { input: text });
    expect(slurmMegabytes("4000")).toBe(4000);
    expect(slurmMegabytes("1T")).toBe(1024 * 1024);
  });

  it("the rank part refuses to start without a rank from the launcher", () => {
    const dir = mkdtempSync(join(tmpdir(), "basin-runner-script-"));
    try {
      for (const launcher of ["srun", "mpirun"] as const) {
        writeFileSync(join(dir, "runner.sh"), renderRunnerScript({ ...spec, launcher }, { dir, mode: run }));
        // a stale SLURM_PROCID from a batch job does not make an mpirun rank
        const r = spawnSync("bash", [join(dir, "runner.sh"), "rank"], {
          env: { PATH: process.env.PATH, SLURM_PROCID: launcher === "mpirun" ? "0" : "" },
          encoding: "utf8",
        });
        expect(r.status).toBe(2);
        expect(r.stderr).toContain(
          `no rank in the environment (${launcher === "srun" ? "SLURM_PROCID" : "OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK"}): ${join(dir, "runner.sh")} rank is started by ${launcher}`,
        );
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
