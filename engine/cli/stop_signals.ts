import { constants } from "node:os";

/** Signals that cancel a CLI run (its partial output removed) instead of killing the process on the spot: Ctrl+C, a stop from the system, a closed terminal. */
export const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

let stoppedBy: NodeJS.Signals | undefined;

/**
 * Notes the stop signal that cancelled the run, for its exit code.
 *
 * @example
 * process.once("SIGTERM", (sig) => { noteStop(sig); ac.abort("interrupted"); });
 */
export function noteStop(signal: NodeJS.Signals): void {
  stoppedBy = signal;
}

/**
 * The exit code of a cancelled run, as shells write "ended by a signal": 128 + its
 * number (130 for Ctrl+C, 143 for SIGTERM, 129 for a closed terminal); 130 when no
 * signal cancelled it.
 *
 * @example
 * if (err.code === "BASIN_CANCELLED") return cancelledExitCode();
 */
export function cancelledExitCode(): number {
  return 128 + (stoppedBy ? constants.signals[stoppedBy] : constants.signals.SIGINT);
}
