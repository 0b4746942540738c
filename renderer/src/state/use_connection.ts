// The engine connection's state, for the run bar and the crash dialog. Its own
// hook because a change of it reaches every other concern: when it (re)opens the
// file list is read again; when the engine process crashes, the results and a
// run still going go with it.
import { useEffect, useState } from "react";
import type { ConnectionState, WorkbenchClient } from "../../common/rpc_client.js";
import type { Log } from "./use_log.js";

/** What a change of the connection updates. */
export interface ConnectionDeps {
  refresh: () => Promise<void>;
  log: Log;
  forgetResults: () => void;
  failRun: () => void;
}

/**
 * The engine connection's state, following the client.
 *
 * @example
 * const connection = useConnection(client, { refresh, log, forgetResults, failRun });
 * <RunBar connection={connection} canRun={connection === "open"} … />
 */
export function useConnection(
  client: WorkbenchClient,
  { refresh, log, forgetResults, failRun }: ConnectionDeps,
): ConnectionState {
  const [connection, setConnection] = useState<ConnectionState>(client.state);

  useEffect(() => {
    setConnection(client.state); // it may have opened before this subscription
    return client.onConnection((s) => {
      setConnection(s);
      if (s === "open") void refresh();
      if (s === "crashed") {
        // The engine process is gone, and its results with it.
        forgetResults();
        failRun();
        log("error", client.crashMessage ?? "the engine process stopped");
      }
    });
  }, [client, refresh]);

  return connection;
}
