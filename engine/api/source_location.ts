// Finds where in the user's code a pipeline method was called, for error messages.
import { fileURLToPath } from "node:url";
import { relative, sep } from "node:path";
import type { SourceLocation } from "../common/errors.js";

const ENGINE_DIR = fileURLToPath(new URL("..", import.meta.url)); // engine/ (or dist/engine/)
// With source maps on, frames of dist/engine/*.js are reported as engine/*.ts.
const SOURCE_ENGINE_DIR = fileURLToPath(new URL("../../../engine/", import.meta.url));
// The `basin` command's entry (bin/basin.js), found from engine/ and dist/engine/ alike.
const BIN_DIRS = [
  fileURLToPath(new URL("../../bin/", import.meta.url)),
  fileURLToPath(new URL("../../../bin/", import.meta.url)),
];

function isInternal(file: string): boolean {
  return (
    file.startsWith(ENGINE_DIR) ||
    file.startsWith(SOURCE_ENGINE_DIR) ||
    file.startsWith("node:") ||
    BIN_DIRS.some((d) => file.startsWith(d)) ||
    file.includes(`${sep}node_modules${sep}`) ||
    // A pipeline's compiled temp file (session/load_pipeline.ts) where no source map names the user's own file.
    file.includes(`${sep}basin-pipeline-`)
  );
}

/**
 * The caller's "file:line:column", skipping Basin's own frames; undefined when unknown.
 *
 * @example
 * const loc = callerLocation(); // "pipelines/taxi.ts:12:4"
 */
export function callerLocation(): SourceLocation | undefined {
  return stackLocation(new Error().stack ?? "");
}

/**
 * The first frame of `stack` in the user's code, as "file:line:column"; undefined when
 * every frame is Basin's, Node's or a package's.
 *
 * @example
 * stackLocation(err.stack ?? "") // "pipelines/taxi.ts:7:3"
 */
export function stackLocation(stack: string): SourceLocation | undefined {
  for (const line of stack.split("\n").slice(1)) {
    const m = /\(?((?:file:\/\/)?[^\s()]+):(\d+):(\d+)\)?\s*$/.exec(line);
    if (!m) continue;
    const file = m[1].startsWith("file://") ? fileURLToPath(m[1]) : m[1];
    if (isInternal(file)) continue;
    const rel = relative(process.cwd(), file);
    return `${rel.startsWith("..") ? file : rel}:${m[2]}:${m[3]}`;
  }
  return undefined;
}
