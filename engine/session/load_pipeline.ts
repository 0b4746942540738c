// Loads a user's pipeline file: compiles it with esbuild (so it may live anywhere
// and `import { … } from "basin"`), imports it, and returns its default export.
import { build, type Message, type Plugin } from "esbuild";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";

import { stackLocation } from "../api/source_location.js";
import { BasinError } from "../common/errors.js";
import { removeOrphans } from "../memory/orphans.js";

/** Transpiled pipelines go to `<tmp>/basin-pipeline-<pid>-…` while they are imported. */
const PIPELINE_PREFIX = "basin-pipeline-";
let orphansRemoved = false;

/** The engine's public module, as the pipeline's `"basin"` import resolves to it. */
const API_URL = new URL("../api/index.js", import.meta.url).href;

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

/**
 * What the pipeline's own code threw while it was evaluated, as the user's mistake
 * (BASIN_PIPELINE at its line), not an engine failure; Basin's own errors pass as they are.
 */
function pipelineError(e: unknown, file: string): BasinError {
  if (e instanceof BasinError) return e;
  const err = e instanceof Error ? e : new Error(String(e));
  // A missing named import fails when the module links, before any line runs.
  const message = err.message.replaceAll(API_URL, "basin");
  const at = stackLocation(err.stack ?? "") ?? shown(file);
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
  process.setSourceMapsEnabled(true);
  let code: string;
  try {
    const out = await build({
      ...(source === undefined
        ? { entryPoints: [file] }
        : { stdin: { contents: source, sourcefile: file, resolveDir: dirname(file), loader: "ts" as const } }),
      bundle: true,
      write: false,
      platform: "node",
      format: "esm",
      target: "node20",
      sourcemap: "inline",
      sourceRoot: "/",
      absWorkingDir: "/",
      plugins: [resolveBasin],
      logLevel: "silent",
    });
    code = out.outputFiles[0].text;
  } catch (e) {
    const errors = (e as { errors?: Message[] }).errors;
    if (errors?.length) throw syntaxError(errors[0], file);
    throw BasinError.from(e);
  }
  // A temp file outside the user's folder keeps it clean; unlike a data: URL, Node
  // applies its source map, so locations name the user's own file and line.
  // Named with the pid: one left by a killed run is removed by the next process (once:
  // a server loading a pipeline per run need not list the temp folder each time).
  if (!orphansRemoved) removeOrphans(tmpdir(), PIPELINE_PREFIX);
  orphansRemoved = true;
  const tmp = mkdtempSync(join(tmpdir(), `${PIPELINE_PREFIX}${process.pid}-`));
  const out = join(tmp, "pipeline.mjs");
  let mod: { default?: unknown };
  try {
    writeFileSync(out, code);
    mod = (await import(pathToFileURL(out).href)) as { default?: unknown };
  } catch (e) {
    throw pipelineError(e, file);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  if (!("default" in mod) || mod.default === undefined)
    throw new BasinError("BASIN_PLAN", `${shown(file)} has no default export; end it with \`export default <frame>\``);
  return mod.default;
}
