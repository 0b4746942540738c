// Finds where in the user's code a pipeline method was called, for error messages.
import { fileURLToPath } from "node:url";
import { relative, sep } from "node:path";
import type { SourceLocation } from "../common/errors.js";

const ENGINE_DIR = fileURLToPath(new URL("..", import.meta.url)); // engine/ (or dist/engine/)
// With source maps on, frames of dist/engine/*.js are reported as engine/*.ts.
const SOURCE_ENGINE_DIR = fileURLToPath(new URL("../../../engine/", import.meta.url));

function isInternal(file: string): boolean {
  return (
    file.startsWith(ENGINE_DIR) ||
    file.startsWith(SOURCE_ENGINE_DIR) ||
    file.startsWith("node:") ||
    file.includes(`${sep}node_modules${sep}`)
  );
}

/**
 * The caller's "file:line:column", skipping Basin's own frames; undefined when unknown.
 *
 * @example
 * const loc = callerLocation(); // "pipelines/taxi.ts:12:4"
 */
export function callerLocation(): SourceLocation | undefined {
  const stack = new Error().stack ?? "";
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
