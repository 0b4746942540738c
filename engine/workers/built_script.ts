import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { BasinError } from "../common/errors.js";

/**
 * The compiled form of a worker-thread entry under engine/ (e.g. "workers/worker.js"):
 * found under dist/ whether the caller runs compiled or from the TypeScript sources.
 *
 * @example
 * new Worker(builtScript("workers/worker.js"))
 */
export function builtScript(entry: string): string {
  for (const base of ["../", "../../dist/engine/"]) {
    const p = fileURLToPath(new URL(base + entry, import.meta.url));
    if (existsSync(p) && (base !== "../" || import.meta.url.endsWith(".js"))) return p;
  }
  throw new BasinError("BASIN_INTERNAL", `${entry} is not built: run \`npm run build\` in the Basin folder`);
}
