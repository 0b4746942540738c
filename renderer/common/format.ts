// Text for numbers and cells in the workbench.
import type { WireValue } from "../../engine/common/rpc.js";

/**
 * @example
 * formatBytes(1536) // "1.5 KiB"
 */
export function formatBytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) ((n /= 1024), i++);
  return `${i === 0 ? n : n.toFixed(1)} ${units[i]}`;
}

/**
 * @example
 * formatCell(0.1 + 0.2) // "0.3"
 */
export function formatCell(v: WireValue | undefined): string {
  if (v === undefined) return "";
  if (v === null) return "null";
  // 15 significant digits hide float noise (0.1 + 0.2); past 1e15 every digit shows
  // (a fraction there is a float's own, and rounding made 1712345678901234.5 look like another integer).
  if (typeof v === "number")
    return Number.isInteger(v) || Math.abs(v) >= 1e15 ? String(v) : String(Number(v.toPrecision(15)));
  return String(v);
}

/**
 * @example
 * formatMs(1234) // "1.23 s"
 */
export function formatMs(ms: number): string {
  return ms < 1000
    ? `${Math.round(ms)} ms`
    : ms < 60_000
      ? `${(ms / 1000).toFixed(2)} s`
      : `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** Tab-separated text of rows of cells, as spreadsheets paste it. */
export function toTsv(rows: WireValue[][]): string {
  return rows.map((r) => r.map((v) => (v === null ? "" : String(v).replace(/[\t\n]/g, " "))).join("\t")).join("\n");
}

/**
 * A computed statistic (mean, median, std) for the card: 6 significant digits, never
 * padded with zeros that look exact; very large or small ones in exponent form.
 *
 * @example
 * formatStat(0.000145) // "0.000145"
 */
export function formatStat(v: WireValue | undefined): string {
  if (v === undefined) return "…";
  if (typeof v === "number" && !Number.isInteger(v)) {
    const a = Math.abs(v);
    if (a >= 1e6) return v.toPrecision(6);
    if (a < 1e-4) return String(Number(v.toPrecision(6)));
    return v.toLocaleString("en-US", { maximumSignificantDigits: 6 });
  }
  if (typeof v === "number") return Math.abs(v) < 1e15 ? v.toLocaleString("en-US") : String(v);
  return formatCell(v);
}
