// Date and timestamp functions: `col("d").dt.*`.
import type { FnName, FnOptions } from "../common/expr.js";
import type { Expr, ExprLike } from "./expr.js";

/** A date_diff unit. */
export type DiffUnit = "day" | "hour" | "minute" | "second" | "millisecond" | "microsecond";

/**
 * Date and timestamp functions, reached as `col("d").dt`. Dates are days, timestamps
 * microseconds, both UTC. Durations are `<integer><unit>` with unit us, ms, s, m, h, d or w.
 *
 * @example
 * col("pickup").dt.floor("15m")
 */
export class ExprDt {
  /** @internal */
  constructor(private readonly expr: Expr) {}

  private fn(name: FnName, options?: FnOptions, more: ExprLike[] = []): Expr {
    return this.expr.fn(name, options, more);
  }

  /** @example col("d").dt.year() */
  year(): Expr {
    return this.fn("dt.year");
  }
  /** 1–12. @example col("d").dt.month() */
  month(): Expr {
    return this.fn("dt.month");
  }
  /** Day of the month, 1–31. @example col("d").dt.day() */
  day(): Expr {
    return this.fn("dt.day");
  }
  /** 0–23 (0 for a date). @example col("t").dt.hour() */
  hour(): Expr {
    return this.fn("dt.hour");
  }
  /** @example col("t").dt.minute() */
  minute(): Expr {
    return this.fn("dt.minute");
  }
  /** Whole seconds, 0–59. @example col("t").dt.second() */
  second(): Expr {
    return this.fn("dt.second");
  }
  /** ISO day of the week: Monday = 1 … Sunday = 7 (DuckDB isodow). @example col("d").dt.weekday() */
  weekday(): Expr {
    return this.fn("dt.weekday");
  }
  /**
   * Rounds down to a multiple of `every` ("1h", "15m", "1d", "30s"), counted from
   * 2000-01-03 00:00 UTC like DuckDB time_bucket (for units that divide a day, the same as
   * date_trunc). A date needs whole days and stays a date.
   *
   * @example
   * col("pickup").dt.floor("1h")
   */
  floor(every: string): Expr {
    return this.fn("dt.floor", { every });
  }
  /**
   * Moves by a fixed duration ("3d", "-2h", "90s"). A date moved by whole days stays a
   * date; by anything finer it becomes a timestamp.
   *
   * @example
   * col("pickup").dt.offsetBy("-2h")
   */
  offsetBy(by: string): Expr {
    return this.fn("dt.offsetBy", { by });
  }
  /**
   * This minus `other` in whole `unit`s crossed, as int64: DuckDB date_diff(unit, other, this)
   * (the number of unit boundaries between the two, so 23:59 → 00:01 is 1 day and 1 hour).
   *
   * @example
   * col("dropoff").dt.diff(col("pickup"), "minute")
   */
  diff(other: ExprLike, unit: DiffUnit): Expr {
    return this.fn("dt.diff", { unit }, [other]);
  }
}
