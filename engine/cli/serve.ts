// `basin serve [folder]`: the workbench in a browser, until Ctrl+C.
import { existsSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { BasinError } from "../common/errors.js";
import { serve, type RunningServer } from "../server/http_server.js";
import type { Cluster } from "../cluster/cluster.js";
import { openCluster } from "../cluster/open.js";
import type { SshProfile } from "../cluster/profiles.js";
import { RemoteEngine } from "../cluster/remote/remote_engine.js";

/** Resolves when the process is told to stop (SIGINT/SIGTERM), then closes the server. */
async function untilStopped(server: RunningServer): Promise<void> {
  await new Promise<void>((done) => {
    process.once("SIGINT", done);
    process.once("SIGTERM", done);
  });
  process.stderr.write("stopping…\n");
  await server.close();
}

/**
 * The workbench against the Basin engine on `profile`'s host (started there or
 * reused): the file list, opening and saving are that host's workspace (the
 * profile's `workspace` folder), and runs go there too.
 *
 * @example
 * await serveRemote(findProfile("gpu-box") as SshProfile, 0);
 */
export async function serveRemote(profile: SshProfile, port: number | undefined): Promise<void> {
  const remote = await RemoteEngine.connect(profile);
  try {
    const server = await serve({ root: ".", port, remote });
    const { root } = await remote.workspace();
    process.stdout.write(
      `Basin workbench for ${root} on ${remote.where} (profile ${profile.name}, its Basin engine ${remote.engineWas})\n  ${server.url}\n(Ctrl+C stops it; the engine on the host keeps running)\n`,
    );
    await untilStopped(server);
  } finally {
    remote.close();
  }
}

/**
 * Serves `folder` and resolves when the process is told to stop (SIGINT/SIGTERM);
 * with `cluster` (a Dask scheduler address or profile name) runs go to Dask
 * (a slurm profile's jobs are submitted now and cancelled when it stops); with
 * `remote` (an ssh profile without a scheduler) the host's Basin engine and
 * workspace are served instead of `folder`.
 *
 * @example
 * await serveCommand(".", 0);
 */
export async function serveCommand(
  folder: string | undefined,
  port: number | undefined,
  cluster?: string,
  remote?: SshProfile,
): Promise<void> {
  if (remote) {
    if (folder !== undefined)
      throw new BasinError(
        "BASIN_PLAN",
        `basin serve --cluster ${remote.name} opens the workspace on ${remote.host} (the profile's "workspace" folder), not the local ${folder}; drop the folder, or set "workspace" in the profile`,
      );
    return serveRemote(remote, port);
  }
  folder ??= ".";
  if (!existsSync(folder)) throw new BasinError("BASIN_IO", `${folder}: no such folder to open as the workspace`);
  if (!statSync(folder).isDirectory())
    throw new BasinError(
      "BASIN_IO",
      `${folder} is a file; basin serve opens a folder as the workspace (basin serve ${dirname(folder) || "."}), where you can open the file`,
    );
  const dask: Cluster | undefined =
    cluster === undefined
      ? undefined
      : await openCluster(cluster, { log: (line) => process.stderr.write(`${line}\n`) });
  try {
    if (dask) await dask.connect(); // an unreachable scheduler fails now, not at the first run
    // Pipelines name their data relative to the workspace, as they do under `basin run` from it.
    process.chdir(folder);
    const server = await serve({ root: ".", port, cluster: dask });
    process.stdout.write(
      `Basin workbench for ${process.cwd()}${dask ? ` (runs on Dask at ${dask.label})` : ""}\n  ${server.url}\n(Ctrl+C stops it)\n`,
    );
    await untilStopped(server);
  } finally {
    await dask?.close();
  }
}
