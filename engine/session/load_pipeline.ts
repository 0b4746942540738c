// Loads a user's pipeline file: compiles it with esbuild (so it may live anywhere
// and `import { … } from "basin"`), imports it, and returns its default export.
// Compiled pipelines are cached by content (session/pipeline_cache.ts): an unchanged
// file, with unchanged local imports, starts without esbuild.
import type * as Esbuild from "esbuild";
import type { Loader, Message, Plugin } from "esbuild";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, extname, join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";

import { stackLocation } from "../api/source_location.js";
import { thrownValue } from "../common/thrown_value.js";
import { BasinError } from "../common/errors.js";
import { removeOrphans } from "../memory/orphans.js";
import { cachedPipeline, cachePipeline } from "./pipeline_cache.js";

/** Transpiled pipelines go to `<tmp>/basin-pipeline-<pid>-…` while they are imported (when there is no cache). */
const PIPELINE_PREFIX = "basin-pipeline-";
let orphansRemoved = false;
/** Each import of a cached module gets its own URL: a pipeline run again is evaluated again. */
let imports = 0;

/** The engine's API module, as pipelines import it ("basin"). */
export const API_URL = new URL("../api/index.js", import.meta.url).href;

/**
 * The global function a compiled pipeline calls first, once every module it imports
 * is read and linked: a driver thread may be terminated from then on (Node leaks the
 * open files of modules a thread is still loading). Unset outside driver threads.
 */
export const PIPELINE_LOADED_HOOK = "__basinPipelineLoaded";

const resolveBasin: Plugin = {
  name: "basin",
  setup(b) {
    b.onResolve({ filter: /^basin$/ }, () => ({ path: API_URL, external: true }));
  },
};

function shown(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel.startsWith("..") ? file : rel;
}

function syntaxError(m: Message, file: string): BasinError {
  // esbuild reports paths relative to absWorkingDir ("/").
  const at = m.location
    ? `${shown(resolve("/", m.location.file))}:${m.location.line}:${m.location.column + 1}`
    : shown(file);
  return new BasinError("BASIN_SYNTAX", `${m.text} (fix the pipeline file and run again)`, at);
}

/** "file:line:col" of `name` in the pipeline's import statements, when it is there. */
function importLocation(text: string, name: string, file: string): string | undefined {
  for (const m of text.matchAll(/\bimport\s*(?:type\s+)?\{[^}]*\}/g)) {
    const k = m[0].search(new RegExp(`\\b${name.replace(/[$]/g, "\\$")}\\b`));
    if (k < 0) continue;
    const before = text.slice(0, m.index + k).split("\n");
    return `${shown(file)}:${before.length}:${before[before.length - 1]!.length + 1}`;
  }
  return undefined;
}

/**
 * What the pipeline's own code threw while it was evaluated, as the user's mistake
 * (BASIN_PIPELINE at its line), not an engine failure; Basin's own errors pass as they are.
 */
function pipelineError(e: unknown, file: string, text?: string): BasinError {
  if (e instanceof BasinError) return e;
  if (!(e instanceof Error))
    return new BasinError(
      "BASIN_PIPELINE",
      `the pipeline's own code threw ${thrownValue(e)}, which is not an Error and so names no line; throw new Error(...) to see where it comes from`,
      shown(file),
    );
  const err = e;
  // A missing named import fails when the module links, before any line runs: it has
  // no stack, so the import is found in the text.
  const message = err.message.replaceAll(API_URL, "basin");
  const missing = /does not provide an export named '([\w$]+)'/.exec(message)?.[1];
  const at =
    stackLocation(err.stack ?? "") ??
    (missing && text ? importLocation(text, missing, file) : undefined) ??
    shown(file);
  return new BasinError(
    "BASIN_PIPELINE",
    `${err.name}: ${message} (thrown by the pipeline's own code; fix it and run again)`,
    at,
  );
}

/**
 * Compiles and imports a pipeline file; resolves to its default export. With
 * `source`, that text (an editor's unsaved buffer) stands in for the file's.
 *
 * @example
 * const frame = await loadPipeline("examples/taxi.ts");
 */
export async function loadPipeline(path: string, source?: string): Promise<unknown> {
  const file = resolve(path);
  if (source === undefined && !existsSync(file))
    throw new BasinError("BASIN_IO", `${path}: no such pipeline file (looked in ${process.cwd()})`);
  if (source === undefined && statSync(file).isDirectory())
    throw new BasinError("BASIN_IO", `${path} is a folder; name a pipeline file in it (a .ts or .js module)`);
  if (/\.(csv|tsv|txt|parquet|json|ndjson|jsonl|arrow|arrows|feather|npy|gz|zst|xz|bz2|zip)$/i.test(file))
    throw new BasinError(
      "BASIN_IO",
      `${path} is not a pipeline: a pipeline is a TypeScript or JavaScript module (.ts, .js) whose default export is the result; read data files inside one (readCsv("${path}"))`,
    );
  // Temp pipelines a killed run left (once per process; off the start-up's way: the
  // main thread idles while the workers run the first task).
  if (!orphansRemoved) setImmediate(() => removeOrphans(tmpdir(), PIPELINE_PREFIX));
  orphansRemoved = true;
  const text = source ?? readFileSync(file, "utf8");
  // The compiled code names the engine's module by its URL: a cache entry is for this engine.
  const key = [file, API_URL, PIPELINE_LOADED_HOOK, text];
  let module = cachedPipeline(key);
  // Not cached: esbuild (its module, its service process, the build) starts now, while
  // the engine's modules load on this thread.
  const compiled = module ? undefined : compile(file, text);
  compiled?.catch(() => undefined); // (its failure is reported where it is awaited)
  // The engine's modules load before source maps are on: Node would otherwise read and
  // parse the map of each (~25 ms); the pipeline's own inline map is what names its lines.
  await import(API_URL);
  process.setSourceMapsEnabled(true);
  if (!module) {
    const { code, inputs } = await (compiled ?? compile(file, text));
    module = cachePipeline(key, code, inputs) ?? undefined;
    if (!module) return importTemp(code, file, text);
  }
  return defaultExport(await importModule(`${pathToFileURL(module).href}?${++imports}`, file, text), file, text);
}

const LOADERS: Record<string, Loader> = { ".js": "js", ".mjs": "js", ".cjs": "js", ".jsx": "jsx", ".tsx": "tsx" };

/**
 * esbuild's bundle of the pipeline from `text` (the very text the cache key holds), and
 * the files it read besides the pipeline itself.
 */
async function compile(file: string, text: string): Promise<{ code: string; inputs: string[] }> {
  // Required, not imported: an ESM import of esbuild's CommonJS entry first lexes all of
  // it for its exports (~25 ms against ~7 ms at start-up).
  const { build } = createRequire(import.meta.url)("esbuild") as typeof Esbuild;
  try {
    const out = await build({
      stdin: { contents: text, sourcefile: file, resolveDir: dirname(file), loader: LOADERS[extname(file)] ?? "ts" },
      bundle: true,
      write: false,
      metafile: true,
      platform: "node",
      format: "esm",
      target: "node20",
      sourcemap: "inline",
      banner: { js: `globalThis.${PIPELINE_LOADED_HOOK}?.();` },
      sourceRoot: "/",
      absWorkingDir: "/",
      plugins: [resolveBasin],
      logLevel: "silent",
    });
    // esbuild names inputs relative to absWorkingDir ("/"); the pipeline's own text is in the key.
    const inputs = Object.keys(out.metafile.inputs)
      .filter((k) => k !== "<stdin>")
      .map((k) => resolve("/", k))
      .filter((f) => f !== file);
    return { code: out.outputFiles[0].text, inputs };
  } catch (e) {
    const errors = (e as { errors?: Message[] }).errors;
    if (errors?.length) throw syntaxError(errors[0], file);
    throw BasinError.from(e);
  }
}

/**
 * Without a cache folder: a temp file outside the user's folder (unlike a data: URL,
 * Node applies its source map, so locations name the user's own file and line), named
 * with the pid: one left by a killed run is removed by the next process (above).
 */
async function importTemp(code: string, file: string, text: string): Promise<unknown> {
  const tmp = mkdtempSync(join(tmpdir(), `${PIPELINE_PREFIX}${process.pid}-`));
  const out = join(tmp, "pipeline.mjs");
  try {
    writeFileSync(out, code);
    return await defaultExport(await importModule(pathToFileURL(out).href, file, text), file, text);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

async function importModule(url: string, file: string, text: string): Promise<{ default?: unknown }> {
  try {
    return (await settles(import(url), file)) as { default?: unknown };
  } catch (e) {
    throw pipelineError(e, file, text);
  }
}

/** The default export; one that is a Promise is awaited here, so its rejection is the pipeline's own error too. */
async function defaultExport(mod: { default?: unknown }, file: string, text: string): Promise<unknown> {
  if (!("default" in mod) || mod.default === undefined)
    throw new BasinError("BASIN_PLAN", `${shown(file)} has no default export; end it with \`export default <frame>\``);
  try {
    return await settles(Promise.resolve(mod.default), file);
  } catch (e) {
    throw pipelineError(e, file, text);
  }
}

/**
 * `p`, or, when the process has nothing left to do while it waits (a Promise the
 * pipeline never settles: Node would exit with code 13, saying nothing), the error
 * saying so. A process that serves goes on waiting: the run can be stopped.
 */
function settles<T>(p: Promise<T>, file: string): Promise<T> {
  let idle: (() => void) | undefined;
  const stuck = new Promise<never>((_, reject) => {
    idle = () =>
      reject(
        new BasinError(
          "BASIN_PIPELINE",
          `${shown(file)}: the pipeline waits on a Promise that never settles (its default export, or a top-level await) and nothing is left that could settle it; resolve it, or await something that ends`,
        ),
      );
    process.once("beforeExit", idle);
  });
  return Promise.race([p, stuck]).finally(() => process.off("beforeExit", idle!));
}
