// A run that keeps one worker busy: for tests of what waits for a worker meanwhile.
import { bag, LocalCluster } from "../../engine/api/index.js";

/**
 * A run of one task that keeps its worker busy for `ms`.
 *
 * @example
 * const busy = spinning(500, cluster); // the next run's tasks wait for the worker
 */
export const spinning = (ms: number, cluster: LocalCluster) =>
  bag
    .fromItems([ms], { partitions: 1 })
    .map((wait: number) => {
      const end = Date.now() + wait;
      while (Date.now() < end);
      return wait;
    })
    .compute({ cluster });
