// `basin serve [folder]`: the workbench in a browser, until Ctrl+C.
import { existsSync, statSync } from "node:fs";
import { BasinError } from "../common/errors.js";
import { serve } from "../server/http_server.js";

/**
 * Serves `folder` and resolves when the process is told to stop (SIGINT/SIGTERM).
 *
 * @example
 * await serveCommand(".", 0);
 */
export async function serveCommand(folder: string, port: number | undefined): Promise<void> {
  if (!existsSync(folder) || !statSync(folder).isDirectory()) throw new BasinError("BASIN_IO", `${folder}: no such folder to open as the workspace`);
  // Pipelines name their data relative to the workspace, as they do under `basin run` from it.
  process.chdir(folder);
  const server = await serve({ root: ".", port });
  process.stdout.write(`Basin workbench for ${server.engine.workspaceFolder.root}\n  ${server.url}\n(Ctrl+C stops it)\n`);
  await new Promise<void>((done) => {
    process.once("SIGINT", done);
    process.once("SIGTERM", done);
  });
  process.stderr.write("stopping…\n");
  await server.close();
}
