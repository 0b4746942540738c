import { arrowFileSchema } from "../io/arrow_ipc.js";
import { DataFrame } from "./dataframe.js";
import { commonSchema, expandPaths } from "./file_list.js";
import { callerLocation } from "./source_location.js";

/**
 * Reads Arrow IPC files (the file format, also called Feather v2, or the stream
 * format) lazily: one partition per record batch. Only the message headers are
 * read now, for the schema.
 *
 * @example
 * const batches = readArrow("out/*.arrow");
 */
export function readArrow(paths: string | string[]): DataFrame {
  const loc = callerLocation();
  const files = expandPaths(paths, "readArrow", "arrow", loc);
  const fileSchema = commonSchema(files, (file) => arrowFileSchema(file), loc);
  return new DataFrame({
    kind: "scanFile",
    format: "arrow",
    files,
    options: { blocksize: 0 },
    fileSchema,
    schema: fileSchema.map((f) => ({ ...f })),
    loc,
  });
}
