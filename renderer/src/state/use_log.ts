// The Output panel's lines: engine log events, run summaries and the workbench's
// own errors. A hook of its own because every other concern writes to it, so it
// comes first and the others take its `log`.
import { useCallback, useEffect, useState } from "react";
import type { LogLine } from "../OutputPanel.js";

/** The page's Output lines survive a reload of this tab (sessionStorage). */
const LOG_KEY = "basin.output.v1";
const KEPT = 300;

function storedLines(): LogLine[] {
  try {
    const v: unknown = JSON.parse(sessionStorage.getItem(LOG_KEY) ?? "[]");
    return Array.isArray(v)
      ? v.filter(
          (l): l is LogLine =>
            typeof l === "object" && l !== null && typeof l.time === "number" && typeof l.text === "string",
        )
      : [];
  } catch {
    return [];
  }
}

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
  const [logs, setLogs] = useState<LogLine[]>(storedLines);
  useEffect(() => {
    try {
      sessionStorage.setItem(LOG_KEY, JSON.stringify(logs.slice(-KEPT)));
    } catch {
      /* storage full or off: the lines stay on this page only */
    }
  }, [logs]);
  const log = useCallback(
    (level: LogLine["level"], text: string) => setLogs((l) => [...l.slice(-999), { time: Date.now(), level, text }]),
    [],
  );
  return { logs, log };
}
