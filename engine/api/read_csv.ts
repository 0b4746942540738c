import { BasinError, type SourceLocation } from "../common/errors.js";
import type { CsvSourceOptions } from "../common/plan.js";
import { DTYPES, isDType, type DType, type Field } from "../common/types.js";
import { native } from "../native/addon.js";
import { DataFrame } from "./dataframe.js";
import { expandPaths } from "./file_list.js";
import { callerLocation } from "./source_location.js";

export interface ReadCsvOptions {
  /** Bytes per partition, as a number or "64MB"/"256KiB" (default 64 MiB). */
  blocksize?: number | string;
  /** Types that override inference, by column. */
  dtypes?: Record<string, DType>;
  /** Columns to read as timestamps. */
  parseDates?: string[];
  delimiter?: string;
  header?: boolean;
  /** Texts read as null (default: the empty field). */
  nullValues?: string[];
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
  const opts: CsvSourceOptions = {
    delimiter: options.delimiter ?? ",",
    header: options.header ?? true,
    nullValues: options.nullValues ?? [""],
    blocksize: parseBlocksize(options.blocksize ?? "64MiB", loc),
    onBadLines: options.onBadLines ?? "error",
    encoding: options.encoding ?? "utf8",
  };
  if (!ENCODINGS.includes(opts.encoding))
    throw new BasinError(
      "BASIN_PLAN",
      `encoding must be one of ${ENCODINGS.map((e) => `"${e}"`).join(", ")}, got ${JSON.stringify(opts.encoding)}`,
      loc,
    );
  if (opts.delimiter.length !== 1)
    throw new BasinError("BASIN_PLAN", `delimiter must be one character, got ${JSON.stringify(opts.delimiter)}`, loc);
  if (opts.onBadLines !== "error" && opts.onBadLines !== "skip")
    throw new BasinError(
      "BASIN_PLAN",
      `onBadLines must be "error" or "skip", got ${JSON.stringify(opts.onBadLines)}`,
      loc,
    );
  const csv = { delimiter: opts.delimiter, header: opts.header, nullValues: opts.nullValues, encoding: opts.encoding };
  let inferred: { names: string[]; types: DType[] };
  try {
    inferred = native().csvInfer(files[0], { ...csv, sampleBytes: options.sampleBytes ?? 1 << 20 });
    for (const other of files.slice(1)) {
      const names = native().csvInfer(other, { ...csv, sampleBytes: 1 << 16 }).names;
      if (names.join("\u0000") !== inferred.names.join("\u0000"))
        throw new BasinError(
          "BASIN_PARSE",
          `${other} has columns ${names.join(", ")} but ${files[0]} has ${inferred.names.join(", ")}; every file must have the same header`,
        );
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
  for (const name of options.parseDates ?? []) {
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
