// Dates and timestamps as text without JS Date, whose range (±275,760 years) and ISO
// form ("+010000-01-01") do not fit every int32 day or int64 microsecond the engine
// holds: years 0–9999 with four digits, later ones with all theirs ("12345-06-07",
// as DuckDB and the native writers print them), earlier ones with a minus sign.

const DAY_US = 86_400_000_000n;

/** Year, month (1–12) and day (1–31) of a day number (days since 1970-01-01), proleptic Gregorian. */
function civilFromDays(days: number): [number, number, number] {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}

const two = (n: number | bigint) => String(n).padStart(2, "0");

/**
 * "YYYY-MM-DD" of a day number.
 *
 * @example
 * dateText(-1) // "1969-12-31"
 */
export function dateText(days: number): string {
  const [y, m, d] = civilFromDays(days);
  const year = y < 0 ? `-${String(-y).padStart(4, "0")}` : String(y).padStart(4, "0");
  return `${year}-${two(m)}-${two(d)}`;
}

/**
 * A timestamp in microseconds as date, "HH:MM:SS" and the microseconds past the second
 * (0–999999), rounded toward the past.
 *
 * @example
 * timestampParts(-1n) // { date: "1969-12-31", time: "23:59:59", micros: 999999 }
 */
export function timestampParts(us: bigint): { date: string; time: string; micros: number } {
  const days = us / DAY_US - (us % DAY_US < 0n ? 1n : 0n);
  const rem = us - days * DAY_US; // 0 … one day
  const secs = rem / 1_000_000n;
  return {
    date: dateText(Number(days)),
    time: `${two(secs / 3600n)}:${two((secs / 60n) % 60n)}:${two(secs % 60n)}`,
    micros: Number(rem % 1_000_000n),
  };
}

/**
 * Milliseconds of a timestamp in microseconds, rounded down (toward the past), as a
 * Date holds them: truncating would move 1969-12-31 23:59:59.999999 to 1970.
 *
 * @example
 * floorMillis(-1n) // -1n
 */
export function floorMillis(micros: bigint): bigint {
  return micros / 1000n - (micros % 1000n < 0n ? 1n : 0n);
}
