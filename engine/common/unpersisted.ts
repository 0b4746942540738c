// A persisted frame's partitions are store tables that unpersist() lets go; a run that
// reaches them afterwards (planned after the call, or queued when it came) fails so.
import { BasinError, type SourceLocation } from "./errors.js";

/**
 * The error of a run that reads a persisted frame's partitions after unpersist()
 * released them; `loc` is where the frame was persisted.
 *
 * @example
 * if (!native().tableExists(h)) throw unpersistedError(node.loc);
 */
export function unpersistedError(loc?: SourceLocation): BasinError {
  return new BasinError(
    "BASIN_PLAN",
    "this frame's persisted partitions were let go by unpersist() before the run read them; persist the frame again, or call unpersist() after the runs that read it",
    loc,
  );
}
