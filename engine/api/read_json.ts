import { BasinError } from "../common/errors.js";
import { DTYPES, isDType, isNumeric, type DType, type Field } from "../common/types.js";
import { inferJson } from "../io/ndjson.js";
import { DataFrame } from "./dataframe.js";
import { expandPaths, refuseNonText } from "./file_list.js";
import { parseBlocksize } from "./read_csv.js";
import { callerLocation } from "./source_location.js";

export interface ReadJsonOptions {
  /** Lines read from the start of each file to infer the columns and their types (default 1000). */
  sampleRows?: number;
  /** Keys whose ISO strings become dates ("2024-01-31") or timestamps; other strings stay strings. */
  parseDates?: string[];
  /** Types that override inference, by key; "string" also reads nested objects and arrays as JSON text. */
  dtypes?: Record<string, DType>;
  /** Bytes per partition, as a number or "64MB" (default 64 MiB). */
  blocksize?: number | string;
}

/**
 * Reads newline-delimited JSON (one flat object per line) lazily, in partitions of
 * about `blocksize` bytes. Columns and types come from the first `sampleRows` lines:
 * integers → int64, other numbers → float64, booleans, strings; keys that are only
 * null → string. A nested object or array is an error naming the file, line and key
 * unless `dtypes` reads that key as a string (its JSON text). Keys that first appear
 * after the sample are not read: raise `sampleRows` to include them, or name them in
 * `dtypes` (a key it names is read whether the sample has it or not).
 *
 * @example
 * const events = readJson("logs/*.ndjson", { parseDates: ["at"] });
 */
export function readJson(paths: string | string[], options: ReadJsonOptions = {}): DataFrame {
  const loc = callerLocation();
  const files = expandPaths(paths, "readJson", "ndjson", loc);
  refuseNonText(files, "readJson", loc);
  const blocksize = parseBlocksize(options.blocksize ?? "64MiB", loc);
  const sampleRows = options.sampleRows ?? 1000;
  if (!Number.isInteger(sampleRows) || sampleRows < 1)
    throw new BasinError("BASIN_PLAN", `sampleRows must be a positive integer, got ${sampleRows}`, loc);
  const dtypes = options.dtypes ?? {};
  for (const [name, t] of Object.entries(dtypes))
    if (!isDType(t))
      throw new BasinError(
        "BASIN_PLAN",
        `dtypes: type "${String(t)}" for "${name}" is not one of ${DTYPES.join(", ")}`,
        loc,
      );
  const opts = { sampleRows, parseDates: options.parseDates ?? [], dtypes };
  // Every file is sampled: a key only some files have would otherwise go unnoticed.
  // Keys join in order of first appearance; integers in one file and floats in
  // another read as float64; other disagreements are an error naming both files.
  const fileSchema: Field[] = [];
  const from = new Map<string, string>();
  for (const file of files) {
    let fields: Field[];
    try {
      fields = inferJson(file, opts);
    } catch (e) {
      throw BasinError.from(e, loc);
    }
    for (const f of fields) {
      const seen = fileSchema.find((x) => x.name === f.name);
      if (!seen) {
        fileSchema.push({ ...f });
        from.set(f.name, file);
      } else if (seen.type !== f.type) {
        if (isNumeric(seen.type) && isNumeric(f.type)) seen.type = "float64";
        else
          throw new BasinError(
            "BASIN_PARSE",
            `key "${f.name}" is ${f.type} in ${file} but ${seen.type} in ${from.get(f.name)}; give it one type with dtypes: { ${JSON.stringify(f.name)}: "string" }`,
            loc,
          );
      }
    }
  }
  // An empty file among others adds no keys; with no key in any file there is nothing to read.
  if (fileSchema.length === 0)
    throw new BasinError(
      "BASIN_PARSE",
      `${files.length === 1 ? files[0] : `none of the ${files.length} files (${files[0]}, …)`}: no JSON objects with keys in the first ${sampleRows} lines; is the file empty? (name the keys with dtypes to read an empty file as no rows)`,
      loc,
    );
  for (const name of opts.parseDates)
    if (!fileSchema.some((f) => f.name === name))
      throw new BasinError(
        "BASIN_PLAN",
        `parseDates names key "${name}", which no file has in its first ${sampleRows} lines (the keys are: ${fileSchema.map((f) => f.name).join(", ")}); if it first appears later, raise sampleRows or read it with dtypes: { ${JSON.stringify(name)}: "timestamp" }`,
        loc,
      );
  return new DataFrame({
    kind: "scanFile",
    format: "json",
    files,
    options: { blocksize },
    fileSchema,
    schema: fileSchema.map((f) => ({ ...f })),
    loc,
  });
}
