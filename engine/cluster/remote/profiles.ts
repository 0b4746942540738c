// Saved cluster profiles, in the user's config folder (XDG_CONFIG_HOME/basin or
// ~/.config/basin): never a secret, only the path of a key or the ssh-agent.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { BasinError } from "../../common/errors.js";

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
}

/** A Dask scheduler reached directly. */
export interface DaskProfile {
  kind: "dask";
  name: string;
  scheduler: string;
}

export type Profile = SshProfile | DaskProfile;

const SECRET_FIELDS = ["password", "passphrase", "privateKey", "token", "secret"];

/** The profiles file (BASIN_CONFIG_DIR overrides the folder, for tests). */
export function profilesPath(): string {
  const dir = process.env.BASIN_CONFIG_DIR ?? join(process.env.XDG_CONFIG_HOME ?? join(homedir(), ".config"), "basin");
  return join(dir, "profiles.json");
}

function check(p: Profile): Profile {
  const bad = SECRET_FIELDS.filter((f) => f in (p as unknown as Record<string, unknown>));
  if (bad.length > 0)
    throw new BasinError("BASIN_PLAN", `profile "${p.name}" holds ${bad.join(", ")}; profiles keep no secrets: give a keyPath or use the ssh-agent`);
  if (!p.name || !/^[\w.-]+$/.test(p.name)) throw new BasinError("BASIN_PLAN", `profile name "${p.name}" must be letters, digits, ".", "-" or "_"`);
  if (p.kind === "ssh" && (!p.host || !p.user)) throw new BasinError("BASIN_PLAN", `ssh profile "${p.name}" needs a host and a user`);
  if (p.kind === "dask" && !/^(tcp|tls|ucx):\/\/\S+$/.test(p.scheduler)) throw new BasinError("BASIN_PLAN", `dask profile "${p.name}" needs a scheduler address such as tcp://host:8786`);
  return p;
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

/** The profile named `name`, or an error listing the saved ones. */
export function findProfile(name: string, file = profilesPath()): Profile {
  const list = loadProfiles(file);
  const p = list.find((x) => x.name === name);
  if (!p) throw new BasinError("BASIN_PLAN", `no cluster profile named "${name}" in ${file}; saved: ${list.map((x) => x.name).join(", ") || "(none)"}`);
  return p;
}
