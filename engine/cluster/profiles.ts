// Saved cluster profiles, in the user's config folder (XDG_CONFIG_HOME/basin or
// ~/.config/basin): never a secret, only the path of a key or the ssh-agent.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { BasinError } from "../common/errors.js";
import { checkSchedulerAddress } from "./dask/scheduler_address.js";
import { checkRunnerSpec, type RunnerSpec } from "./runner/runner_script.js";
import { checkJobSpec, walltimeSeconds, type SlurmJobSpec } from "./slurm/batch_script.js";

/** A remote Basin engine (or a Dask scheduler) reached over SSH. */
export interface SshProfile {
  kind: "ssh";
  name: string;
  host: string;
  user: string;
  port?: number;
  /** A private key file; without it the ssh-agent (SSH_AUTH_SOCK) is used. */
  keyPath?: string;
  /** known_hosts to verify the host key against (default ~/.ssh/known_hosts). */
  knownHosts?: string;
  /** A Dask scheduler as seen from the host, tunnelled (e.g. tcp://127.0.0.1:8786). Without one, Basin itself runs on the host. */
  scheduler?: string;
  /** The command that starts Basin on the host (default `basin`; e.g. `node /opt/basin/bin/basin.js`, `npx basin`). */
  basin?: string;
  /** The host's folder the remote engine opens as its workspace (default: the user's home). */
  workspace?: string;
  /**
   * The name of another ssh profile to connect through (a bastion, like OpenSSH's
   * ProxyJump): Basin logs in there with that profile's key or agent and known_hosts,
   * then reaches this profile's `host`:`port` as the jump host sees it. A jump
   * profile may have a jump of its own (at most 8 hops).
   */
  jump?: string;
}

/** A Dask scheduler reached directly. */
export interface DaskProfile {
  kind: "dask";
  name: string;
  scheduler: string;
}

/**
 * A Dask cluster that Basin starts inside SLURM jobs: the job fields (partition,
 * account, walltime, cores, memory, gpus, modules, conda, python), how many jobs
 * (`jobs`, or adaptive `minJobs`..`maxJobs`), and where sbatch runs: here, or on the
 * login node of the ssh profile named by `ssh`.
 */
export interface SlurmProfile extends SlurmJobSpec {
  kind: "slurm";
  /** A fixed number of jobs (default 1 when no minJobs/maxJobs). */
  jobs?: number;
  /** Adaptive scaling between these many jobs. */
  minJobs?: number;
  maxJobs?: number;
  /** An adaptive job's worker idle this long is retired and its job cancelled (default 60). */
  idleSeconds?: number;
  /** A folder on storage the login node and the compute nodes share (default ~/.basin/slurm). */
  directory?: string;
  /** The name of an ssh profile whose host runs sbatch (a login node); without it, sbatch runs here. */
  ssh?: string;
  /** Seconds to wait for the scheduler's job to start, queue time included (default 300). */
  startTimeout?: number;
}

/**
 * A fixed-size Dask cluster inside one allocation (dask-jobqueue's SLURMRunner,
 * dask-mpi): one job of `tasks` tasks started with srun or mpirun, in which rank 0
 * runs the scheduler, rank 1 the Basin driver and the rest the workers. The job
 * fields are per task; sbatch (or the launcher, with `submit: "none"`) runs here or
 * on the login node of the ssh profile named by `ssh`.
 */
export interface RunnerProfile extends RunnerSpec {
  kind: "runner";
  /** A folder on storage the login node and every node share (default ~/.basin/runner). */
  directory?: string;
  /** The name of an ssh profile whose host submits the job (a login node); without it, it is submitted here. */
  ssh?: string;
  /** Seconds to wait for the job to start, queue time included, and for its workers (default 300). */
  startTimeout?: number;
  /** The driver's working folder on the nodes (default: the current folder here, the home folder over ssh). */
  workspace?: string;
}

export type Profile = SshProfile | DaskProfile | SlurmProfile | RunnerProfile;

const SECRET_FIELDS = ["password", "passphrase", "privateKey", "token", "secret"];

/** The profiles file (BASIN_CONFIG_DIR overrides the folder, for tests). */
export function profilesPath(): string {
  const dir = process.env.BASIN_CONFIG_DIR ?? join(process.env.XDG_CONFIG_HOME ?? join(homedir(), ".config"), "basin");
  return join(dir, "profiles.json");
}

function check(p: Profile): Profile {
  const bad = SECRET_FIELDS.filter((f) => f in (p as unknown as Record<string, unknown>));
  if (bad.length > 0)
    throw new BasinError(
      "BASIN_PLAN",
      `profile "${p.name}" holds ${bad.join(", ")}; profiles keep no secrets: give a keyPath or use the ssh-agent`,
    );
  if (!p.name || !/^[\w.-]+$/.test(p.name))
    throw new BasinError("BASIN_PLAN", `profile name "${p.name}" must be letters, digits, ".", "-" or "_"`);
  if (p.kind === "ssh" && (!p.host || !p.user))
    throw new BasinError("BASIN_PLAN", `ssh profile "${p.name}" needs a host and a user`);
  if (p.kind === "ssh" && p.jump !== undefined && (typeof p.jump !== "string" || p.jump === p.name))
    throw new BasinError(
      "BASIN_PLAN",
      `ssh profile "${p.name}": "jump" must name another ssh profile (the jump host), got ${JSON.stringify(p.jump)}`,
    );
  if (p.kind === "dask") {
    if (typeof p.scheduler !== "string")
      throw new BasinError("BASIN_PLAN", `dask profile "${p.name}" needs a scheduler address such as tcp://host:8786`);
    checkSchedulerAddress(p.scheduler, `dask profile "${p.name}": `);
  }
  if (p.kind === "slurm") checkSlurm(p);
  if (p.kind === "runner") {
    checkRunnerSpec(p);
    if (p.startTimeout !== undefined && !(p.startTimeout > 0))
      throw new BasinError(
        "BASIN_PLAN",
        `runner profile "${p.name}": startTimeout must be positive, got ${p.startTimeout}`,
      );
  }
  return p;
}

function checkSlurm(p: SlurmProfile): void {
  const bad = (what: string) => new BasinError("BASIN_PLAN", `slurm profile "${p.name}": ${what}`);
  if (typeof p.walltime !== "string" || typeof p.memory !== "string" || typeof p.cores !== "number")
    throw bad('needs walltime, cores and memory, e.g. "walltime": "01:00:00", "cores": 8, "memory": "32G"');
  walltimeSeconds(p.walltime);
  checkJobSpec(p);
  const whole = (v: number | undefined, min: number) => v === undefined || (Number.isInteger(v) && v >= min);
  if (p.jobs !== undefined && (p.minJobs !== undefined || p.maxJobs !== undefined))
    throw bad("give either jobs (a fixed number) or minJobs and maxJobs (adaptive), not both");
  if ((p.minJobs === undefined) !== (p.maxJobs === undefined))
    throw bad("adaptive scaling needs both minJobs and maxJobs");
  if (!whole(p.jobs, 1) || !whole(p.minJobs, 1) || !whole(p.maxJobs, 1) || (p.maxJobs ?? 0) < (p.minJobs ?? 0))
    throw bad(
      `jobs, minJobs and maxJobs must be whole numbers ≥ 1 with minJobs ≤ maxJobs, got ${JSON.stringify({ jobs: p.jobs, minJobs: p.minJobs, maxJobs: p.maxJobs })}`,
    );
  if (p.idleSeconds !== undefined && !(p.idleSeconds > 0))
    throw bad(`idleSeconds must be positive, got ${p.idleSeconds}`);
  if (p.startTimeout !== undefined && !(p.startTimeout > 0))
    throw bad(`startTimeout must be positive, got ${p.startTimeout}`);
}

/**
 * @example
 * const gpu = loadProfiles().find((p) => p.name === "gpu-box");
 */
export function loadProfiles(file = profilesPath()): Profile[] {
  if (!existsSync(file)) return [];
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    throw new BasinError("BASIN_IO", `${file} is not valid JSON (${(e as Error).message}); fix or delete it`);
  }
  if (!Array.isArray(data)) throw new BasinError("BASIN_IO", `${file} must hold a JSON array of profiles`);
  return (data as Profile[]).map(check);
}

/** Adds or replaces a profile (by name); the file is private to the user. */
export function saveProfile(p: Profile, file = profilesPath()): void {
  const list = loadProfiles(file).filter((x) => x.name !== p.name);
  list.push(check(p));
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, `${JSON.stringify(list, null, 2)}\n`, { mode: 0o600 });
}

/** Hops through jump hosts at most (a loop of profiles is refused before this). */
export const MAX_JUMPS = 8;

/**
 * The ssh profiles to pass through to reach `profile`, the first hop first (the jump
 * of its jump before its jump); empty without a `jump`. Refuses a jump that names
 * no ssh profile, and a loop.
 *
 * @example
 * jumpChain(findProfile("gpu-box") as SshProfile).map((p) => p.name); // ["bastion"]
 */
export function jumpChain(profile: SshProfile, profiles: readonly Profile[] = loadProfiles()): SshProfile[] {
  const chain: SshProfile[] = [];
  const seen = [profile.name];
  for (let p = profile; p.jump !== undefined;) {
    const name: string = p.jump;
    const j = profiles.find((x) => x.name === name);
    if (!j)
      throw new BasinError(
        "BASIN_PLAN",
        `ssh profile "${p.name}": its jump host profile "${name}" is not saved (in ${profilesPath()}); add an ssh profile named "${name}" or fix "jump"`,
      );
    if (j.kind !== "ssh")
      throw new BasinError(
        "BASIN_PLAN",
        `ssh profile "${p.name}": "jump": "${name}" names a ${j.kind} profile; name the ssh profile of the jump host`,
      );
    if (seen.includes(j.name))
      throw new BasinError(
        "BASIN_PLAN",
        `ssh profile "${profile.name}": its jump hosts loop (${[...seen, j.name].join(" → ")}); fix "jump" in one of them`,
      );
    if (chain.length >= MAX_JUMPS)
      throw new BasinError(
        "BASIN_PLAN",
        `ssh profile "${profile.name}" goes through more than ${MAX_JUMPS} jump hosts; shorten the chain`,
      );
    seen.push(j.name);
    chain.unshift(j);
    p = j;
  }
  return chain;
}

/** The profile named `name`, or an error listing the saved ones. */
export function findProfile(name: string, file = profilesPath()): Profile {
  const list = loadProfiles(file);
  const p = list.find((x) => x.name === name);
  if (!p)
    throw new BasinError(
      "BASIN_PLAN",
      `no cluster profile named "${name}" in ${file}; saved: ${list.map((x) => x.name).join(", ") || "(none)"}`,
    );
  return p;
}
