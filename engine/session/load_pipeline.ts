// Loads a user's pipeline file: compiles it with esbuild (so it may live anywhere
// and `import { … } from "basin"`), imports it, and returns its default export.
import { build, type Message, type Plugin } from "esbuild";
import { existsSync } from "node:fs";
import { relative, resolve } from "node:path";

import { BasinError } from "../common/errors.js";

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
  const at = m.location ? `${shown(resolve(m.location.file))}:${m.location.line}:${m.location.column + 1}` : shown(file);
  return new BasinError("BASIN_SYNTAX", `${m.text} (fix the pipeline file and run again)`, at);
}

/**
 * Compiles and imports a pipeline file; resolves to its default export.
 *
 * @example
 * const frame = await loadPipeline("examples/taxi.ts");
 */
export async function loadPipeline(path: string): Promise<unknown> {
  const file = resolve(path);
  if (!existsSync(file)) throw new BasinError("BASIN_IO", `${path}: no such pipeline file (looked in ${process.cwd()})`);
  process.setSourceMapsEnabled(true);
  let code: string;
  try {
    const out = await build({
      entryPoints: [file],
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
  // A data: URL keeps the user's folder clean; its only imports are absolute URLs.
  const mod = (await import(`data:text/javascript;base64,${Buffer.from(code).toString("base64")}`)) as { default?: unknown };
  if (!("default" in mod) || mod.default === undefined)
    throw new BasinError("BASIN_PLAN", `${shown(file)} has no default export; end it with \`export default <frame>\``);
  return mod.default;
}

