import type { ProgressEvent } from "../scheduler/shell.js";

/**
 * A one-line progress bar on a TTY (redrawn in place); silent elsewhere.
 *
 * @example
 * const bar = new ProgressBar(process.stderr); df.compute({ onProgress: (e) => bar.update(e) }); bar.done();
 */
export class ProgressBar {
  private readonly groups = new Map<string, ProgressEvent>();
  private last = 0;
  private readonly started = performance.now();
  private shown = false;

  constructor(private readonly out: NodeJS.WriteStream) {}

  update(e: ProgressEvent): void {
    this.groups.set(e.group, e);
    const now = performance.now();
    if (!this.out.isTTY || (now - this.last < 80 && e.done < e.total)) return;
    this.last = now;
    let done = 0,
      total = 0;
    for (const g of this.groups.values()) {
      done += g.done;
      total += g.total;
    }
    const width = 30;
    const filled = total ? Math.round((done / total) * width) : 0;
    const secs = ((now - this.started) / 1000).toFixed(1);
    const current = [...this.groups.values()].find((g) => g.done < g.total) ?? e;
    const label = `${current.group} ${current.done}/${current.total}`;
    this.out.write(
      `\r\x1b[K[${"█".repeat(filled)}${"░".repeat(width - filled)}] ${done}/${total} tasks ${secs}s  ${label}`.slice(
        0,
        (this.out.columns || 120) + 8,
      ),
    );
    this.shown = true;
  }

  /** Clears the bar line. */
  done(): void {
    if (this.shown) this.out.write("\r\x1b[K");
  }
}
