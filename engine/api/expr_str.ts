// String functions: `col("s").str.*` (concatStr, a frame-level constructor, sits with col and lit in expr.ts).
import type { FnName, FnOptions } from "../common/expr.js";
import type { Expr } from "./expr.js";

/** Options of str.toDate / str.toTimestamp. */
export interface ParseOptions {
  /** false: values that do not match the format become null instead of failing the compute. */
  strict?: boolean;
}

/**
 * String functions of an expression, reached as `col("s").str`. Strings are UTF-8;
 * lengths and positions count characters (code points), as in DuckDB.
 *
 * Regular expressions use the ECMAScript dialect and match bytes: a literal
 * multi-byte character matches, but `.` or a class like `[ü]` sees its bytes.
 *
 * @example
 * col("city").str.lower().str.contains("^z")
 */
export class ExprStr {
  /** @internal */
  constructor(private readonly expr: Expr) {}

  private fn(name: FnName, options?: FnOptions): Expr {
    return this.expr.fn(name, options);
  }

  /**
   * Number of characters (not bytes).
   *
   * @example
   * col("city").str.len() // "Zürich" → 6
   */
  len(): Expr {
    return this.fn("str.len");
  }
  /**
   * Lower case: ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic letters; other characters are kept.
   *
   * @example
   * col("city").str.lower()
   */
  lower(): Expr {
    return this.fn("str.lower");
  }
  /**
   * Upper case, over the same letters as lower() ("ß" becomes "ẞ", as in DuckDB).
   *
   * @example
   * col("city").str.upper()
   */
  upper(): Expr {
    return this.fn("str.upper");
  }
  /**
   * Removes leading and trailing ASCII whitespace (space, \t, \n, \r, \v, \f).
   *
   * @example
   * col("name").str.strip()
   */
  strip(): Expr {
    return this.fn("str.strip");
  }
  /**
   * Whether the string matches a regular expression anywhere (or contains `pattern` as is with `literal: true`).
   *
   * @example
   * col("city").str.contains("ich$")
   * col("note").str.contains("a.b", { literal: true })
   */
  contains(pattern: string, options: { literal?: boolean } = {}): Expr {
    return this.fn("str.contains", { pattern, literal: options.literal ?? false });
  }
  /**
   * Whether the string starts with `prefix` (plain text).
   *
   * @example
   * col("city").str.startsWith("Zü")
   */
  startsWith(prefix: string): Expr {
    return this.fn("str.startsWith", { pattern: prefix });
  }
  /**
   * Whether the string ends with `suffix` (plain text).
   *
   * @example
   * col("file").str.endsWith(".csv")
   */
  endsWith(suffix: string): Expr {
    return this.fn("str.endsWith", { pattern: suffix });
  }
  /**
   * Replaces the first match of a regular expression (every match with `all: true`; the
   * text as is with `literal: true`). In a regex replacement `$1` is the first group, `$&` the match.
   *
   * @example
   * col("phone").str.replace("[^0-9]", "", { all: true })
   */
  replace(pattern: string, replacement: string, options: { literal?: boolean; all?: boolean } = {}): Expr {
    return this.fn("str.replace", {
      pattern,
      with: replacement,
      literal: options.literal ?? false,
      all: options.all ?? false,
    });
  }
  /**
   * `length` characters from 0-based `start` (to the end when omitted); a negative start
   * counts from the end. Like DuckDB substring: a window reaching before the start keeps only its part inside.
   *
   * @example
   * col("city").str.slice(0, 3) // "Zürich" → "Zür"
   * col("city").str.slice(-2)   // "Zürich" → "ch"
   */
  slice(start: number, length?: number): Expr {
    return this.fn("str.slice", { start, length: length ?? null });
  }
  /**
   * Part `index` (0-based; negative counts from the end) of the string split at `sep`;
   * null when there is no such part. An empty `sep` splits into characters. Like DuckDB
   * split_part, but 0-based and null instead of "" for a missing part.
   *
   * @example
   * col("path").str.split("/", 0)
   */
  split(sep: string, index: number): Expr {
    return this.fn("str.split", { sep, index });
  }
  /**
   * Parses dates with a strptime format (%Y %y %m %d %j %b %B %H %M %S %f %%). A value
   * that does not match fails the compute (BASIN_CAST), or becomes null with `strict: false`.
   *
   * @example
   * col("d").str.toDate("%d/%m/%Y")
   */
  toDate(format: string, options: ParseOptions = {}): Expr {
    return this.fn("str.toDate", { format, strict: options.strict ?? true });
  }
  /**
   * Parses timestamps (UTC) with a strptime format; see toDate.
   *
   * @example
   * col("t").str.toTimestamp("%Y-%m-%d %H:%M:%S.%f")
   */
  toTimestamp(format: string, options: ParseOptions = {}): Expr {
    return this.fn("str.toTimestamp", { format, strict: options.strict ?? true });
  }
}
