// Reading results that may be spilled: the table is pinned (never evicted while in
// use) and, when on disk, read back on a pool thread, so the JS thread never waits
// on the disk.
import { native, type Handle } from "../native/addon.js";

/**
 * Pins table `h` and reads it back if it is on disk; call the returned function to unpin it.
 *
 * @example
 * const unpin = await pinResident(h);
 * try { native().tableToJs(h) } finally { unpin() }
 */
export async function pinResident(h: Handle): Promise<() => void> {
  const addon = native();
  addon.pin(h);
  try {
    if (addon.isSpilled(h)) await addon.readBack(h);
  } catch (e) {
    addon.unpin(h);
    throw e;
  }
  return () => addon.unpin(h);
}

/**
 * Runs `use` with table `h` in memory and pinned.
 *
 * @example
 * const js = await withResident(h, (t) => native().tableToJs(t));
 */
export async function withResident<T>(h: Handle, use: (h: Handle) => T | Promise<T>): Promise<T> {
  const unpin = await pinResident(h);
  try {
    return await use(h);
  } finally {
    unpin();
  }
}
