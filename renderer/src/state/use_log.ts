// The Output panel's lines: engine log events, run summaries and the workbench's
// own errors. A hook of its own because every other concern writes to it, so it
// comes first and the others take its `log`.
import { useCallback, useState } from "react";
import type { LogLine } from "../OutputPanel.js";

/** Appends one line to the Output panel. */
export type Log = (level: LogLine["level"], text: string) => void;

export interface OutputLog {
  /** The last 1000 lines, newest last. */
  logs: LogLine[];
  /** Appends a line; the same function on every render. */
  log: Log;
}

/**
 * The Output panel's lines and the function that appends one.
 *
 * @example
 * const { logs, log } = useLog();
 * client.readFile(path).catch((e: Error) => log("error", e.message));
 * return <OutputPanel lines={logs} />;
 */
export function useLog(): OutputLog {
  const [logs, setLogs] = useState<LogLine[]>([]);
  const log = useCallback(
    (level: LogLine["level"], text: string) => setLogs((l) => [...l.slice(-999), { time: Date.now(), level, text }]),
    [],
  );
  return { logs, log };
}
