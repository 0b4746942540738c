// `basin serve [folder]`: the workbench in a browser, until Ctrl+C.
import { existsSync, statSync } from "node:fs";
import { BasinError } from "../common/errors.js";
import { serve } from "../server/http_server.js";
import { openCluster, type OpenCluster } from "../cluster/remote/open_cluster.js";

/**
 * Serves `folder` and resolves when the process is told to stop (SIGINT/SIGTERM);
 * with `cluster` (a Dask scheduler address or profile name) runs go to Dask
 * (a slurm profile's jobs are submitted now and cancelled when it stops).
 *
 * @example
 * await serveCommand(".", 0);
 */
export async function serveCommand(folder: string, port: number | undefined, cluster?: string): Promise<void> {
  if (!existsSync(folder) || !statSync(folder).isDirectory()) throw new BasinError("BASIN_IO", `${folder}: no such folder to open as the workspace`);
  const dask: OpenCluster | undefined = cluster === undefined ? undefined : await openCluster(cluster, { log: (line) => process.stderr.write(`${line}\n`) });
  try {
    if (dask) await dask.cluster.connect(); // an unreachable scheduler fails now, not at the first run
    // Pipelines name their data relative to the workspace, as they do under `basin run` from it.
    process.chdir(folder);
    const server = await serve({ root: ".", port, dask: dask?.cluster, slurm: dask?.slurm });
    process.stdout.write(`Basin workbench for ${server.engine.workspaceFolder.root}${dask ? ` (runs on Dask at ${dask.label})` : ""}\n  ${server.url}\n(Ctrl+C stops it)\n`);
    await new Promise<void>((done) => {
      process.once("SIGINT", done);
      process.once("SIGTERM", done);
    });
    process.stderr.write("stopping…\n");
    await server.close();
  } finally {
    await dask?.close();
  }
}
