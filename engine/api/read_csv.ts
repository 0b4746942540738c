import { BasinError, type SourceLocation } from "../common/errors.js";
import type { CsvSourceOptions } from "../common/plan.js";
import { DTYPES, isDType, type DType, type Field } from "../common/types.js";
import { native } from "../native/addon.js";
import { DataFrame } from "./dataframe.js";
import { expandPaths, refuseNonText } from "./file_list.js";
import { callerLocation } from "./source_location.js";

export interface ReadCsvOptions {
  /** Bytes per partition, as a number or "64MB"/"256KiB" (default 64 MiB). */
  blocksize?: number | string;
  /** Types that override inference, by column. */
  dtypes?: Record<string, DType>;
  /** Columns to read as timestamps (one name or a list). */
  parseDates?: string | string[];
  delimiter?: string;
  header?: boolean;
  /** Texts read as null (default: the empty field); one text or a list. */
  nullValues?: string | string[];
  /** "error" (default) stops at a malformed line; "skip" drops it and counts it. */
  onBadLines?: "error" | "skip";
  /** Bytes read from the start of the first file to infer types (default 1 MiB). */
  sampleBytes?: number;
  /**
   * How bytes become text: "utf8" (default; a byte that is not UTF-8 is an error at
   * its line and column), "latin1" (ISO 8859-1), or "replace" (UTF-8, with invalid
   * bytes read as U+FFFD).
   */
  encoding?: "utf8" | "latin1" | "replace";
}

const ENCODINGS = ["utf8", "latin1", "replace"];

/** Column names for a message: at most 12, each cut at 40 characters (a binary "header" can be megabytes). */
function listed(names: string[]): string {
  const cut = (n: string) => (n.length > 40 ? `${n.slice(0, 40)}…` : n);
  return names.slice(0, 12).map(cut).join(", ") + (names.length > 12 ? `, … (${names.length} in all)` : "");
}

const UNITS: Record<string, number> = { B: 1, KB: 1e3, MB: 1e6, GB: 1e9, KIB: 1024, MIB: 1024 ** 2, GIB: 1024 ** 3 };

export function parseBlocksize(v: number | string, loc: SourceLocation | undefined): number {
  if (typeof v === "number" && Number.isInteger(v) && v > 0) return v;
  const m = typeof v === "string" ? /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(v) : null;
  const unit = m ? UNITS[(m[2] || "B").toUpperCase()] : undefined;
  if (!m || unit === undefined)
    throw new BasinError(
      "BASIN_PLAN",
      `blocksize ${JSON.stringify(v)} is not a size; write a byte count or "64MB"`,
      loc,
    );
  return Math.max(1, Math.round(Number(m[1]) * unit));
}

/**
 * Reads CSV files lazily, split into partitions of about `blocksize` bytes.
 * The header and a sample are read now, so column names and types are known
 * (and checked) while the pipeline is written.
 *
 * @example
 * const trips = readCsv("data/trips-*.csv", { parseDates: ["pickup"], blocksize: "32MB" });
 */
export function readCsv(paths: string | string[], options: ReadCsvOptions = {}): DataFrame {
  const loc = callerLocation();
  const files = expandPaths(paths, "readCsv", "csv", loc);
  const plan = (message: string) => new BasinError("BASIN_PLAN", message, loc);
  const nullValues = typeof options.nullValues === "string" ? [options.nullValues] : (options.nullValues ?? [""]);
  if (!Array.isArray(nullValues) || nullValues.some((v) => typeof v !== "string"))
    throw plan(`nullValues must be a text or a list of texts, got ${JSON.stringify(options.nullValues)}`);
  const opts: CsvSourceOptions = {
    delimiter: options.delimiter ?? ",",
    header: options.header ?? true,
    nullValues,
    blocksize: parseBlocksize(options.blocksize ?? "64MiB", loc),
    onBadLines: options.onBadLines ?? "error",
    encoding: options.encoding ?? "utf8",
  };
  if (!ENCODINGS.includes(opts.encoding))
    throw plan(
      `encoding must be one of ${ENCODINGS.map((e) => `"${e}"`).join(", ")}, got ${JSON.stringify(opts.encoding)}`,
    );
  // The scanner splits on one byte: an ASCII character that is not a quote or a line end.
  if (typeof opts.delimiter !== "string" || !/^[\x00-\x7f]$/.test(opts.delimiter) || '"\r\n'.includes(opts.delimiter))
    throw plan(
      `delimiter must be one ASCII character other than a double quote or a line break, got ${JSON.stringify(opts.delimiter)}`,
    );
  if (typeof opts.header !== "boolean") throw plan(`header must be true or false, got ${JSON.stringify(opts.header)}`);
  if (opts.onBadLines !== "error" && opts.onBadLines !== "skip")
    throw plan(`onBadLines must be "error" or "skip", got ${JSON.stringify(opts.onBadLines)}`);
  const sampleBytes = options.sampleBytes ?? 1 << 20;
  if (!Number.isInteger(sampleBytes) || sampleBytes < 1)
    throw plan(`sampleBytes must be a positive whole number of bytes, got ${JSON.stringify(options.sampleBytes)}`);
  const parseDates = typeof options.parseDates === "string" ? [options.parseDates] : (options.parseDates ?? []);
  if (!Array.isArray(parseDates))
    throw plan(`parseDates must be a column name or a list of them, got ${JSON.stringify(options.parseDates)}`);
  if (
    options.dtypes !== undefined &&
    (typeof options.dtypes !== "object" || options.dtypes === null || Array.isArray(options.dtypes))
  )
    throw plan(`dtypes must map column names to types, like { id: "int64" }; got ${JSON.stringify(options.dtypes)}`);
  refuseNonText(files, "readCsv", loc);
  const csv = { delimiter: opts.delimiter, header: opts.header, nullValues: opts.nullValues, encoding: opts.encoding };
  let inferred: { names: string[]; types: DType[]; seen: boolean[] };
  try {
    inferred = native().csvInfer(files[0], { ...csv, sampleBytes });
    for (const other of files.slice(1)) {
      const next = native().csvInfer(other, { ...csv, sampleBytes: 1 << 16 });
      if (next.names.join("\u0000") !== inferred.names.join("\u0000"))
        throw new BasinError(
          "BASIN_PARSE",
          `${other} ${next.names.length === 0 ? "is empty (no header)" : `has columns ${listed(next.names)}`} but ${files[0]} has ${listed(inferred.names)}; every file must have the same header`,
        );
      // A column the first file holds no value of (a header-only part of a written
      // folder, or all nulls) takes its type from the first file that does.
      next.seen.forEach((seen, i) => {
        if (seen && !inferred.seen[i]) {
          inferred.types[i] = next.types[i];
          inferred.seen[i] = true;
        }
      });
    }
  } catch (e) {
    throw BasinError.from(e, loc);
  }
  if (inferred.names.length === 0)
    throw new BasinError(
      "BASIN_PARSE",
      `${files[0]} is empty: it has no header and no rows; check the file (an empty export?) or the path`,
      loc,
    );
  const fileSchema: Field[] = inferred.names.map((name, i) => ({ name, type: inferred.types[i] }));
  const override = (name: string, type: DType, what: string) => {
    const f = fileSchema.find((x) => x.name === name);
    if (!f)
      throw new BasinError(
        "BASIN_PLAN",
        `${what} names column "${name}", which ${files[0]} does not have; its columns are: ${inferred.names.join(", ")}`,
        loc,
      );
    if (!isDType(type))
      throw new BasinError(
        "BASIN_PLAN",
        `${what}: type "${String(type)}" for "${name}" is not one of ${DTYPES.join(", ")}`,
        loc,
      );
    f.type = type;
  };
  for (const name of parseDates) {
    const f = fileSchema.find((x) => x.name === name);
    override(name, f?.type === "date" ? "date" : "timestamp", "parseDates");
  }
  for (const [name, type] of Object.entries(options.dtypes ?? {})) override(name, type, "dtypes");
  return new DataFrame({
    kind: "scanCsv",
    files,
    options: opts,
    fileSchema,
    schema: fileSchema.map((f) => ({ ...f })),
    loc,
  });
}
