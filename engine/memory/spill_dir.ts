// The disk tier's folder: one per process, named with its pid, under the
// local directory. Folders of processes that died (killed engines) are removed at
// start-up; folders of live processes are never touched, so two engines on one
// machine never see each other's files.
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { BasinError } from "../common/errors.js";
import { removeOrphans } from "./orphans.js";

const PREFIX = "basin-spill-";

/** Where spill folders go by default: `<os.tmpdir()>/basin`. */
export function defaultLocalDirectory(): string {
  return join(tmpdir(), "basin");
}

/**
 * Removes the spill folders under `base` whose process is gone; returns their names.
 *
 * @example
 * removeStaleSpillDirectories("/scratch/basin") // ["basin-spill-4242-k3x9"]
 */
export function removeStaleSpillDirectories(base: string): string[] {
  return removeOrphans(base, PREFIX);
}

/**
 * `mkdir -p`, one level at a time: Node's recursive mkdir never returns under /proc
 * (mkdir there says ENOENT for a parent that exists, and it retries forever).
 */
function makeFolders(path: string): void {
  const missing: string[] = [];
  for (let p = path; !existsSync(p); p = dirname(p)) {
    missing.push(p);
    if (dirname(p) === p) break;
  }
  for (const d of missing.reverse()) mkdirSync(d);
}

const mine = new Map<string, string>();

/**
 * This process's spill folder under `base` (made on first use, after removing stale
 * ones, and removed when the process exits).
 *
 * @example
 * processSpillDirectory("/scratch/basin") // "/scratch/basin/basin-spill-1234-a1b2c3"
 */
export function processSpillDirectory(base: string): string {
  const root = resolve(base);
  const known = mine.get(root);
  if (known) return known;
  const dir = join(root, `${PREFIX}${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
  try {
    makeFolders(root);
    removeStaleSpillDirectories(root);
    mkdirSync(dir);
  } catch (e) {
    throw new BasinError(
      "BASIN_SPILL",
      `cannot make a spill folder in ${root}: ${(e as Error).message}; point localDirectory (--local-directory) at a writable folder`,
    );
  }
  if (mine.size === 0)
    process.once("exit", () => {
      for (const d of mine.values()) rmSync(d, { recursive: true, force: true });
    });
  mine.set(root, dir);
  return dir;
}
