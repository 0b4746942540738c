// Compiled pipelines, cached by content: a `basin run` of a file that has not changed
// imports its compiled module at once instead of starting esbuild. An entry is keyed by
// a hash of the pipeline's path, text and the engine it was compiled against, and
// lists every other file the bundle read (local imports) with a hash of its content:
// a change to any of them compiles again. Entries are written to a temp name and
// renamed, so a reader never sees half of one; the folder is the user's own
// (`$BASIN_CACHE_DIR`, else `$XDG_CACHE_HOME/basin` or `~/.cache/basin`), and one
// another user could write to is not used.
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** Bumped when the compile options change: older entries are then never found. */
const VERSION = 1;
/** Entries kept; the oldest go when a new one is written. */
const MAX_ENTRIES = 256;

interface Entry {
  /** Every file the bundle read besides the pipeline itself, with the sha256 of its content. */
  inputs: [string, string][];
}

const digest = (data: string | Uint8Array) => createHash("sha256").update(data).digest("hex");
const idOf = (key: string[]) => digest(JSON.stringify([VERSION, ...key]));

/**
 * The folder compiled pipelines are cached in.
 *
 * @example
 * pipelineCacheDir() // "/home/ana/.cache/basin/pipelines"
 */
export function pipelineCacheDir(): string {
  const base = process.env.BASIN_CACHE_DIR || join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "basin");
  return join(base, "pipelines");
}

/** The cache folder when it is a folder of this user's that no one else may write to. */
function usableDir(create: boolean): string | undefined {
  const dir = pipelineCacheDir();
  try {
    if (create) mkdirSync(dir, { recursive: true, mode: 0o700 });
    const st = statSync(dir);
    const mine = process.getuid === undefined || st.uid === process.getuid();
    return st.isDirectory() && mine && (st.mode & 0o022) === 0 ? dir : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The cached module compiled from `key` (the pipeline's path, text and engine) when
 * every other file it was compiled from is unchanged; undefined otherwise.
 *
 * @example
 * const module = cachedPipeline([file, apiUrl, text]); // "/home/ana/.cache/basin/pipelines/3f…e1.mjs"
 */
export function cachedPipeline(key: string[]): string | undefined {
  const dir = usableDir(false);
  if (!dir) return undefined;
  const id = idOf(key);
  try {
    const entry = JSON.parse(readFileSync(join(dir, `${id}.json`), "utf8")) as Entry;
    for (const [path, hash] of entry.inputs) if (digest(readFileSync(path)) !== hash) return undefined;
    const module = join(dir, `${id}.mjs`);
    return statSync(module).isFile() ? module : undefined;
  } catch {
    return undefined; // no entry, a damaged one, or an input that is gone: compile again
  }
}

/**
 * Stores the code compiled from `key`, which read `inputs` besides the pipeline; returns
 * the module's path, or undefined when there is no usable cache folder.
 *
 * @example
 * const module = cachePipeline([file, apiUrl, text], code, ["/home/ana/lib.ts"]);
 */
export function cachePipeline(key: string[], code: string, inputs: string[]): string | undefined {
  const dir = usableDir(true);
  if (!dir) return undefined;
  const id = idOf(key);
  try {
    const entry: Entry = { inputs: inputs.map((p) => [p, digest(readFileSync(p))]) };
    const module = join(dir, `${id}.mjs`);
    // The module first: an entry's .json is what makes it found.
    writeAtomically(module, code);
    writeAtomically(join(dir, `${id}.json`), JSON.stringify(entry));
    prune(dir);
    return module;
  } catch {
    return undefined;
  }
}

/** Writes a fresh, unpredictable temp file beside `path` (never following a link), then renames it over `path`. */
function writeAtomically(path: string, data: string): void {
  const tmp = `${path}.${process.pid}-${randomBytes(6).toString("hex")}.tmp`;
  try {
    writeFileSync(tmp, data, { flag: "wx", mode: 0o600 });
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/** Keeps the newest MAX_ENTRIES entries; removes temp files an interrupted write left (an hour old). */
function prune(dir: string): void {
  const names = readdirSync(dir);
  const now = Date.now();
  for (const n of names)
    if (n.endsWith(".tmp"))
      try {
        if (now - statSync(join(dir, n)).mtimeMs > 3_600_000) rmSync(join(dir, n), { force: true });
      } catch {
        // gone already
      }
  const entries = names.filter((n) => n.endsWith(".json"));
  if (entries.length <= MAX_ENTRIES) return;
  const byAge = entries
    .map((n) => {
      try {
        return { n, t: statSync(join(dir, n)).mtimeMs };
      } catch {
        return { n, t: 0 };
      }
    })
    .sort((a, b) => a.t - b.t);
  for (const { n } of byAge.slice(0, entries.length - MAX_ENTRIES)) {
    rmSync(join(dir, n), { force: true });
    rmSync(join(dir, n.replace(/\.json$/, ".mjs")), { force: true });
  }
}
