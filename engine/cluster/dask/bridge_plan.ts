// The plan as the Dask bridge reads it: the Basin plan itself (PLAN_VERSION 2),
// resolved once by plan/resolve_plan.ts as lowering reads it, so each node's
// expressions travel in its `native` field and the Python side computes but never
// re-derives types or coercions. File scans also carry their partitions (`parts`),
// cut as the local cluster cuts them (io/scan_steps.ts), so a Parquet scan has the
// same partitions on Dask: runs of the row groups left after pruning.
import { BasinError } from "../../common/errors.js";
import { childrenOf, PLAN_VERSION, withChildren, type Plan, type PlanNode } from "../../common/plan.js";
import { fileScanSteps } from "../../io/scan_steps.js";
import { resolvePlan } from "../../plan/resolve_plan.js";

/** One partition of a file scan: a Parquet file's row groups, an NDJSON byte range, or Arrow IPC byte ranges. */
export type BridgeScanPart =
  | { file: string; rowGroups: number[] }
  | { file: string; start: number; end: number }
  | { file: string; ranges: [number, number][] };

function withParts(node: PlanNode): PlanNode {
  const n = withChildren(node, childrenOf(node).map(withParts));
  if (n.kind !== "scanFile") return n;
  const columns = n.schema;
  let parts: BridgeScanPart[];
  try {
    parts = n.files.flatMap((file, i) =>
      fileScanSteps(n.format, file, columns, n.options.blocksize, n.rowGroups?.kept[i]).map((s): BridgeScanPart => {
        switch (s.kind) {
          case "scanParquet":
            return { file, rowGroups: s.rowGroups };
          case "scanJson":
            return { file, start: s.start, end: s.end };
          case "scanArrow":
            return { file, ranges: s.ranges };
          default:
            throw new BasinError("BASIN_INTERNAL", `a file scan became a ${s.kind} step`);
        }
      }),
    );
  } catch (e) {
    throw BasinError.from(e, n.loc);
  }
  return { ...n, parts } as PlanNode;
}

/**
 * The optimized plan with resolved expressions and file scans' partitions, ready for resources/dask_bridge.
 *
 * @example
 * const wire = bridgePlan(optimize(df.toPlan().root));
 */
export function bridgePlan(root: PlanNode): Plan {
  return { version: PLAN_VERSION, root: resolvePlan(withParts(root)) };
}
