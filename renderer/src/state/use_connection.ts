// The engine connection's state, for the run bar and the crash dialog. Its own
// hook because a change of it reaches every other concern: when it (re)opens the
// file list is read again; when the engine process crashes, the results and a
// run still going go with it.
import { useEffect, useState } from "react";
import type { ConnectionState, WorkbenchClient } from "../../common/rpc_client.js";
import type { Log } from "./use_log.js";

/** How long a dropped connection may stay down before the page says so (ms). */
const CONNECTION_LOST_MS = 4000;

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
    // A dropped connection is retried; one still down after a while is told, and a run
    // the page was following is given up (the engine says how it ended, if it comes back).
    let lost: ReturnType<typeof setTimeout> | undefined;
    let told = false;
    const off = client.onConnection((s) => {
      setConnection(s);
      if (s === "open") {
        if (told) log("info", "the connection to the engine is back");
        clearTimeout(lost);
        lost = undefined;
        told = false;
        void refresh();
      }
      if (s === "closed" && lost === undefined)
        lost = setTimeout(() => {
          told = true;
          failRun();
          log(
            "error",
            "lost the connection to the engine: basin serve is not answering (stopped, or its machine is busy); reconnecting by itself — start it again if it stopped",
          );
        }, CONNECTION_LOST_MS);
      if (s === "crashed") {
        clearTimeout(lost);
        // The engine process is gone, and its results with it.
        forgetResults();
        failRun();
        log("error", client.crashMessage ?? "the engine process stopped");
      }
    });
    return () => {
      clearTimeout(lost);
      off();
    };
  }, [client, refresh]);

  return connection;
}
