/** Signals that cancel a CLI run (its partial output removed) instead of killing the process on the spot: Ctrl+C, a stop from the system, a closed terminal. */
export const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
