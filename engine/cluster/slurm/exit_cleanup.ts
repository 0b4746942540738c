// Jobs must not outlive the app: while a SLURM cluster is open, SIGINT, SIGTERM and
// SIGHUP cancel its jobs before the process goes, and a plain exit cancels them
// synchronously where that can be done (local sbatch; over SSH only the signals can).

export interface ExitCleanup {
  /** Cancels the jobs (async: signals). */
  cancel(): Promise<void>;
  /** Cancels the jobs synchronously, best effort (the process's "exit" event). */
  cancelSync(): void;
}

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
const live = new Set<ExitCleanup>();
const handlers = new Map<NodeJS.Signals, () => void>();

function onExit(): void {
  for (const c of live) c.cancelSync();
}

function onSignal(signal: NodeJS.Signals): void {
  // Someone else (basin serve, basin run) handles this signal and closes the cluster
  // itself: cancel now all the same, and let them end the process.
  const others = process.listenerCount(signal) > 1;
  const jobs = live.size;
  void Promise.allSettled([...live].map((c) => c.cancel())).then(() => {
    if (others) return;
    uninstall();
    // Ended by the signal, as the shell expects: say why first, and that nothing runs on.
    process.stderr.write(
      `basin: ${signal === "SIGINT" ? "interrupted" : `stopped by ${signal}`}; cancelled the cluster job${jobs === 1 ? "" : "s"} it had started\n`,
    );
    process.kill(process.pid, signal); // the default action, now that no listener is left
  });
}

function install(): void {
  if (handlers.size > 0) return;
  process.on("exit", onExit);
  for (const s of SIGNALS) {
    const h = () => onSignal(s);
    handlers.set(s, h);
    process.on(s, h);
  }
}

function uninstall(): void {
  process.off("exit", onExit);
  for (const [s, h] of handlers) process.off(s, h);
  handlers.clear();
}

/**
 * Registers a cluster's cancellation for process exit; the returned function
 * unregisters it (once the cluster closed by itself).
 *
 * @example
 * const forget = cancelOnExit({ cancel: () => cancelJobs(runner, ids), cancelSync: () => runner.runSync(["scancel", ...ids]) });
 * ... forget();
 */
export function cancelOnExit(cleanup: ExitCleanup): () => void {
  live.add(cleanup);
  install();
  return () => {
    live.delete(cleanup);
    if (live.size === 0) uninstall();
  };
}
