import { globSync, isDynamicPattern } from "tinyglobby";
import { closeSync, existsSync, openSync, readSync, statSync, type Stats } from "node:fs";
import { resolve } from "node:path";
import { BasinError, type SourceLocation } from "../common/errors.js";
import type { Field } from "../common/types.js";

/**
 * The files a reader's path argument names: paths and globs (sorted matches), as
 * absolute paths; a missing file, a folder or a glob matching nothing is a BASIN_IO
 * error that says what to do.
 *
 * @example
 * expandPaths("data/*.parquet", "readParquet", "parquet", loc)
 */
export function expandPaths(
  paths: string | string[],
  fn: string,
  ext: string,
  loc: SourceLocation | undefined,
): string[] {
  const list = Array.isArray(paths) ? paths : [paths];
  if (list.length === 0 || list.some((p) => typeof p !== "string" || p === ""))
    throw new BasinError("BASIN_PLAN", `${fn}() needs a path, a glob or a list of them`, loc);
  const files: string[] = [];
  for (const p of list) {
    if (!isDynamicPattern(p)) {
      if (!existsSync(p))
        throw new BasinError("BASIN_IO", `${p}: no such file (looked in ${process.cwd()}); check the path`, loc);
      const st = statSync(p);
      if (st.isDirectory())
        throw new BasinError(
          "BASIN_IO",
          `${p} is a folder; name the files, e.g. "${p.replace(/[/\\]+$/, "")}/*.${ext}"`,
          loc,
        );
      files.push(resolve(refuseSpecial(p, st, fn, loc)));
      continue;
    }
    const found = globSync(p, { absolute: true, onlyFiles: true }).sort();
    if (found.length === 0)
      throw new BasinError("BASIN_IO", `no file matches "${p}" (looked in ${process.cwd()}); check the pattern`, loc);
    for (const f of found) files.push(refuseSpecial(f, statSync(f), fn, loc));
  }
  return files;
}

/**
 * The path, unless it names a pipe, socket or device: those have no size and may never
 * end, so reading one would block the pipeline's evaluation for good (and a cancel
 * leaves the read behind).
 */
function refuseSpecial(p: string, st: Stats, fn: string, loc: SourceLocation | undefined): string {
  if (st.isFile()) return p;
  throw new BasinError(
    "BASIN_IO",
    `${p} is not a regular file (a ${st.isFIFO() ? "named pipe" : st.isSocket() ? "socket" : "device"}); ${fn}() reads files: save the data to a file first`,
    loc,
  );
}

/** Leading bytes of the compressed formats a text file may turn out to be. */
const COMPRESSED: readonly { name: string; magic: number[]; tool: string }[] = [
  { name: "gzip", magic: [0x1f, 0x8b], tool: "gunzip -k" },
  { name: "zstd", magic: [0x28, 0xb5, 0x2f, 0xfd], tool: "zstd -d" },
  { name: "bzip2", magic: [0x42, 0x5a, 0x68], tool: "bunzip2 -k" },
  { name: "xz", magic: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], tool: "unxz -k" },
  { name: "zip", magic: [0x50, 0x4b, 0x03, 0x04], tool: "unzip" },
];

/** Leading bytes of the binary formats Basin has a reader of its own for. */
const BINARY: readonly { what: string; magic: number[]; reader: string }[] = [
  { what: "a Parquet file", magic: [...Buffer.from("PAR1")], reader: "readParquet" },
  { what: "an Arrow IPC file", magic: [...Buffer.from("ARROW1")], reader: "readArrow" },
  { what: "a NumPy .npy file", magic: [0x93, ...Buffer.from("NUMPY")], reader: "readNpy" },
];

/**
 * Refuses a compressed or binary file given to a text reader (CSV, NDJSON): its bytes
 * would otherwise read as invalid UTF-8, or as garbage under another encoding. BASIN_IO
 * naming the file, the compression and how to decompress it, or the reader to use.
 *
 * @example
 * refuseNonText(files, "readCsv", loc)
 */
export function refuseNonText(files: readonly string[], fn: string, loc: SourceLocation | undefined): void {
  const head = Buffer.alloc(6);
  for (const file of files) {
    let n = 0;
    const fd = openSync(file, "r");
    try {
      n = readSync(fd, head, 0, head.length, 0);
    } finally {
      closeSync(fd);
    }
    const starts = (magic: number[]) => magic.length <= n && magic.every((b, i) => head[i] === b);
    const c = COMPRESSED.find((k) => starts(k.magic));
    if (c)
      throw new BasinError(
        "BASIN_IO",
        `${file} is ${c.name}-compressed; ${fn}() reads uncompressed text: decompress it first (${c.tool} ${file})`,
        loc,
      );
    const b = BINARY.find((k) => starts(k.magic));
    if (b) throw new BasinError("BASIN_IO", `${file} is ${b.what}, not text; read it with ${b.reader}()`, loc);
  }
}

/**
 * The schema every file shares, from `schemaOf(file)`; a file whose columns or types
 * differ from the first one's is a BASIN_IO error naming both.
 *
 * @example
 * commonSchema(files, (f) => arrowFileSchema(f), loc)
 */
export function commonSchema(
  files: string[],
  schemaOf: (file: string) => Field[],
  loc: SourceLocation | undefined,
): Field[] {
  let first: Field[] | undefined;
  const show = (s: Field[]) => s.map((f) => `${f.name}: ${f.type}`).join(", ");
  for (const file of files) {
    let s: Field[];
    try {
      s = schemaOf(file);
    } catch (e) {
      throw BasinError.from(e, loc);
    }
    if (!first) first = s;
    else if (show(s) !== show(first))
      throw new BasinError(
        "BASIN_IO",
        `${file} has columns (${show(s)}) but ${files[0]} has (${show(first)}); every file must have the same columns and types`,
        loc,
      );
  }
  return first ?? [];
}
