// Byte sizes as people write them ("4GB", "512 MiB", 0.5 of the machine).
import { BasinError } from "../common/errors.js";

const UNITS: Record<string, number> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
  k: 1e3,
  m: 1e6,
  g: 1e9,
  t: 1e12,
};

/**
 * Bytes from a size: a number of bytes, a string with a unit (decimal kB/MB/GB/TB,
 * binary KiB/MiB/GiB/TiB, as Dask reads them), or a fraction in (0, 1] of `total`.
 * `what` names the option in errors.
 *
 * @example
 * parseBytes("4GB", "memoryLimit") // 4_000_000_000
 * parseBytes(0.25, "memoryLimit", 16e9) // 4e9
 */
export function parseBytes(size: string | number, what: string, total?: number): number {
  const bad = () =>
    new BasinError(
      "BASIN_PLAN",
      `${what} must be a size such as "4GB", "512MiB", a number of bytes, or a fraction of memory like 0.5; got ${JSON.stringify(size)}`,
    );
  let n: number;
  // A bare number up to 1 is a fraction of `total`; with a unit ("1B") it is bytes.
  let fraction = typeof size === "number";
  if (typeof size === "number") {
    n = size;
  } else {
    const m = /^\s*([0-9]*\.?[0-9]+(?:e[0-9]+)?)\s*([a-z]*)\s*$/i.exec(size);
    if (!m) throw bad();
    const unit = m[2].toLowerCase();
    if (unit !== "" && !(unit in UNITS)) throw bad();
    n = Number(m[1]) * (unit === "" ? 1 : UNITS[unit]);
    fraction = unit === "";
  }
  if (!Number.isFinite(n) || n <= 0) throw bad();
  if (fraction && n <= 1 && total !== undefined) return Math.floor(n * total);
  return Math.floor(n);
}

/**
 * A byte count for people: "1.5 GB".
 *
 * @example
 * formatBytes(1_500_000_000) // "1.5 GB"
 */
export function formatBytes(n: number): string {
  const units = ["B", "kB", "MB", "GB", "TB"];
  let i = 0;
  while (Math.abs(n) >= 1000 && i < units.length - 1) {
    n /= 1000;
    i++;
  }
  return `${i === 0 ? n : Number(n.toFixed(n < 10 ? 2 : 1))} ${units[i]}`;
}
