// Fixed-length durations written as text ("15m", "-2h", "90s"), for dt.floor and
// dt.offsetBy. Calendar units (months, years) have no fixed length and are not here.

const MICROS: Readonly<Record<string, number>> = {
  us: 1,
  ms: 1e3,
  s: 1e6,
  m: 60e6,
  h: 3600e6,
  d: 86400e6,
  w: 7 * 86400e6,
};

/** The units a duration may use, for error messages. */
export const DURATION_UNITS = Object.keys(MICROS);

/** Microseconds in one day: dates are whole days. */
export const DAY_MICROS = 86400e6;

/**
 * A duration in microseconds, or undefined when `text` is not `<integer><unit>`.
 *
 * @example
 * parseDuration("15m") // 900000000
 */
export function parseDuration(text: string): number | undefined {
  const m = /^(-?\d+)(us|ms|s|m|h|d|w)$/.exec(text.trim());
  if (!m) return undefined;
  const micros = Number(m[1]) * MICROS[m[2]];
  return Number.isSafeInteger(micros) ? micros : undefined;
}

/** date_diff units and their length in microseconds. */
export const DIFF_UNITS: Readonly<Record<string, number>> = {
  day: 86400e6,
  hour: 3600e6,
  minute: 60e6,
  second: 1e6,
  millisecond: 1e3,
  microsecond: 1,
};

/** The strptime specifiers the parsers understand. */
export const STRPTIME_SPECIFIERS = "YymdjbBHMSf%";

/**
 * The first unsupported `%x` specifier of a strptime format, or undefined when all are supported.
 *
 * @example
 * unsupportedSpecifier("%Y-%m-%d %Z") // "%Z"
 */
export function unsupportedSpecifier(format: string): string | undefined {
  for (let i = 0; i < format.length; i++) {
    if (format[i] !== "%") continue;
    const c = format[i + 1];
    if (c === undefined || !STRPTIME_SPECIFIERS.includes(c)) return `%${c ?? ""}`;
    i++;
  }
  return undefined;
}
