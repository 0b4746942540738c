// The folder through which tables move between the engine and its worker processes:
// in shared memory (/dev/shm) where the system has room there (a container's is often
// 64 MB), so a move is two memory copies, else in the temp folder. One per engine process, removed when it exits; folders of
// engines that died are removed by the next one.
import { mkdtempSync, rmSync, statfsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeOrphans } from "../memory/orphans.js";

const PREFIX = "basin-exchange-";
let folder: string | undefined;
let seq = 0;

/** Shared memory smaller than this is not worth it: a large table would not fit. */
const SHM_MIN_BYTES = 2 ** 30;

function base(): string {
  try {
    const s = statfsSync("/dev/shm");
    if (s.bavail * s.bsize >= SHM_MIN_BYTES) return "/dev/shm";
  } catch {
    // no /dev/shm here
  }
  return tmpdir();
}

/**
 * A fresh file name in this process's exchange folder (made on first use).
 *
 * @example
 * const path = exchangeFile(); // "/dev/shm/basin-exchange-1234-Xy12ab/7.table"
 */
export function exchangeFile(): string {
  if (!folder) {
    removeOrphans(base(), PREFIX);
    folder = mkdtempSync(join(base(), `${PREFIX}${process.pid}-`));
    const made = folder;
    process.once("exit", () => rmSync(made, { recursive: true, force: true }));
  }
  return join(folder, `${seq++}.table`);
}

/** This process's exchange folder, if a table has moved yet (tests check that it is left empty). */
export function exchangeFolder(): string | undefined {
  return folder;
}
