import { BasinError } from "../common/errors.js";
import type { Field } from "../common/types.js";
import { parquetSchema, readParquetFooter } from "../io/parquet_footer.js";
import { DataFrame } from "./dataframe.js";
import { commonSchema, expandPaths } from "./file_list.js";
import { parseBlocksize } from "./read_csv.js";
import { callerLocation } from "./source_location.js";

export interface ReadParquetOptions {
  /** Columns to read (default: all); columns of types Basin cannot read must be left out here. */
  columns?: string[];
  /** Consecutive row groups are merged into partitions of about this many (uncompressed) bytes: a number or "64MB" (default 64 MiB). */
  blocksize?: number | string;
}

/**
 * Reads Parquet files lazily: one partition per row group (small ones merged).
 * Only the footers are read now, for the schema: integers read as int64, floats as
 * float64, UTF-8 as string, DATE as date, TIMESTAMP (any unit, with or without a
 * time zone) as timestamp in µs UTC. Filters skip row groups whose statistics
 * rule them out, and only the columns the pipeline uses are read.
 *
 * @example
 * const trips = readParquet("data/trips-*.parquet", { columns: ["pickup", "fare"] });
 */
export function readParquet(paths: string | string[], options: ReadParquetOptions = {}): DataFrame {
  const loc = callerLocation();
  const files = expandPaths(paths, "readParquet", "parquet", loc);
  const blocksize = parseBlocksize(options.blocksize ?? "64MiB", loc);
  const wanted = options.columns;
  if (
    wanted !== undefined &&
    (!Array.isArray(wanted) || wanted.length === 0 || wanted.some((c) => typeof c !== "string"))
  )
    throw new BasinError("BASIN_PLAN", "readParquet() columns must be a non-empty list of column names", loc);
  const twice = wanted?.find((c, i) => wanted.indexOf(c) !== i);
  if (twice !== undefined)
    throw new BasinError(
      "BASIN_PLAN",
      `readParquet() columns names "${twice}" twice; name each column once (select() or withColumns() can copy one)`,
      loc,
    );
  const fileSchema = commonSchema(
    files,
    (file) => {
      const footer = readParquetFooter(file);
      if (!wanted) return parquetSchema(footer);
      const names = footer.columns.map((c) => c.name);
      for (const c of wanted)
        if (!names.includes(c))
          throw new BasinError(
            "BASIN_PLAN",
            `readParquet() columns names "${c}", which ${file} does not have; the columns are: ${names.join(", ")}`,
          );
      const picked = { ...footer, columns: wanted.map((c) => footer.columns[names.indexOf(c)]) };
      return parquetSchema(picked);
    },
    loc,
  );
  const schema: Field[] = fileSchema.map((f) => ({ ...f }));
  return new DataFrame({ kind: "scanFile", format: "parquet", files, options: { blocksize }, fileSchema, schema, loc });
}
