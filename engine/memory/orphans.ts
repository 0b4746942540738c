// Files and folders named after the process that made them ("<prefix><pid>-<random>"):
// spill folders, transpiled pipelines, writers' temp files. A process killed before it
// could remove its own leaves one behind; the next process removes those whose owner
// is gone, and never touches a live process's.
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== "ESRCH"; // EPERM: alive, someone else's
  }
}

/**
 * Removes the entries under `base` named `<prefix><pid>-…` whose process is gone;
 * returns their names.
 *
 * @example
 * removeOrphans("/scratch/basin", "basin-spill-") // ["basin-spill-4242-k3x9"]
 */
export function removeOrphans(base: string, prefix: string): string[] {
  let names: string[];
  try {
    names = readdirSync(base);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const m = /^(\d+)-/.exec(name.slice(prefix.length));
    if (!m) continue;
    const pid = Number(m[1]);
    if (pid === process.pid || alive(pid)) continue;
    try {
      rmSync(join(base, name), { recursive: true, force: true });
      removed.push(name);
    } catch {
      // another process removes it at the same moment: fine
    }
  }
  return removed;
}
