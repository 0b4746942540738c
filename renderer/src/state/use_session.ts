// The page's session in the engine: an id kept in this tab's sessionStorage, so a
// reload attaches to the same session and gets its results and its last run (or the
// run still going) back; the engine releases a session's results once no page has
// been attached to it for a while. Its own hook because it feeds both the results
// and the run when the connection (re)opens.
import { useEffect } from "react";
import type { ResultInfo, SessionRun } from "../../../engine/common/rpc.js";
import type { WorkbenchClient } from "../../common/rpc_client.js";
import type { Log } from "./use_log.js";

const SESSION_KEY = "basin.session.v1";

/** This tab's session id (made on first use, kept across reloads of the tab). */
export function sessionId(): string {
  let id = sessionStorage.getItem(SESSION_KEY);
  if (!id || !/^[\w-]{8,100}$/.test(id)) {
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    id = `page-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
    sessionStorage.setItem(SESSION_KEY, id);
  }
  return id;
}

/** What attaching restores. */
export interface SessionDeps {
  log: Log;
  /** The session's results; `others` (views, previews of an earlier page) may be released when `first`. */
  restoreResults: (results: ResultInfo[], others: string[], first: boolean) => void;
  restoreRun: (run: SessionRun | undefined) => void;
}

/**
 * Attaches to the tab's session whenever the connection opens.
 *
 * @example
 * useSession(client, { log, restoreResults, restoreRun });
 */
export function useSession(client: WorkbenchClient, { log, restoreResults, restoreRun }: SessionDeps): void {
  useEffect(() => {
    let first = true;
    const attach = () =>
      client.attach(sessionId()).then(
        (s) => {
          restoreResults(s.results, s.others, first);
          restoreRun(s.run);
          first = false;
        },
        (e: Error) => log("warn", `results are not kept across reloads: ${e.message}`),
      );
    if (client.state === "open") void attach();
    return client.onConnection((state) => {
      if (state === "open") void attach();
    });
  }, [client]);
}
