// The engine as its own process, for the desktop app: the Electron main process
// forks this file and talks to it over the fork's IPC channel with the same
// messages as `basin serve`'s WebSocket (engine/common/rpc.ts): RpcRequest in,
// RpcResponse and { event } out. A crash here (a native abort, running out of
// memory) takes down this process only; the window stays and offers a restart.
//
//   fork("dist/engine/server/engine_process.js", [workspaceFolder])
//
// Handshake: the process sends { ready: { root } } once it listens, so nothing
// sent before that is lost. It exits when its parent disconnects.
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { RpcEventMessage } from "../common/rpc.js";
import { closeDefaultCluster } from "../cluster/default.js";
import { EngineService } from "./engine_service.js";
import { dispatch } from "./rpc_dispatch.js";

/** The first message of the engine process: it is listening. */
export interface EngineReadyMessage {
  ready: { root: string; pid: number };
}

/**
 * Serves the contract over this process's IPC channel until the parent goes away.
 *
 * @example
 * // in a process started with child_process.fork(…, [folder])
 * await hostEngineOverIpc(process.argv[2]);
 */
export async function hostEngineOverIpc(folder: string): Promise<void> {
  const send = process.send?.bind(process);
  if (!send) throw new Error("engine_process: start it with child_process.fork (it talks over the IPC channel)");
  const root = resolve(folder);
  if (!existsSync(root) || !statSync(root).isDirectory())
    throw new Error(`${folder}: no such folder to open as the workspace`);
  // Pipelines name their data relative to the workspace, as under `basin serve`.
  process.chdir(root);
  const post = (msg: unknown) => {
    if (process.connected) send(msg as RpcEventMessage, undefined, undefined, () => {});
  };
  const engine = new EngineService({ root: ".", emit: (event) => post({ event }) });
  // One connection for the window(s): a reloaded window attaches to its session again.
  const connection = engine.connection();
  process.on("message", (msg) => void dispatch(connection, msg).then(post));
  let closing = false;
  const stop = async () => {
    if (closing) return;
    closing = true;
    await engine.close().catch(() => {});
    await closeDefaultCluster().catch(() => {});
    process.exit(0);
  };
  process.once("disconnect", () => void stop());
  process.once("SIGTERM", () => void stop());
  post({ ready: { root, pid: process.pid } } satisfies EngineReadyMessage);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await hostEngineOverIpc(process.argv[2] ?? ".").catch((e: Error) => {
    process.stderr.write(`basin engine: ${e.message}\n`);
    process.exit(1);
  });
}
