// Runs a lowered task graph on a cluster and reads its output back as rows: for tests
// of the lowering (engine/lower/), which build graphs by hand rather than through compute().
import type { LocalCluster } from "../../engine/cluster/local.js";
import type { TaskGraph } from "../../engine/graph/tasks.js";
import { native } from "../../engine/native/addon.js";
import { Table } from "../../engine/run/table.js";
import { tableRows } from "./oracle.js";

/**
 * The graph's output rows, in order, with the row count of each output part (several
 * with `parts` lowering); the parts are released.
 *
 * @example
 * const rows = await graphRows(cluster, lowerPlan(optimize(df.toPlan().root)));
 */
export async function graphRows(cluster: LocalCluster, g: TaskGraph): Promise<unknown[][] & { partRows: number[] }> {
  const { refs } = await cluster.runGraph(g, "a test");
  const addon = native();
  try {
    const parts = refs.map((h) => addon.tableToJs(h));
    return Object.assign(tableRows(new Table(parts)), { partRows: parts.map((p) => new Table([p]).numRows) });
  } finally {
    for (const h of refs) addon.release(h);
  }
}
