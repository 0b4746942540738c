// Chooses how each join runs: broadcast the right side to every left partition
// when it is small and the join keeps no unmatched right rows; otherwise
// hash-partition both sides by key.
import { statSync } from "node:fs";
import { childrenOf, withChildren, type PlanNode } from "../../common/plan.js";
import type { OptimizerPass } from "./pass.js";

/** Right sides estimated below this many bytes are broadcast. */
export const BROADCAST_BYTES = 64 * 1024 * 1024;

/**
 * An upper bound on the bytes a node produces (files on disk, or 8 bytes a cell);
 * `fileFactor` scales what files weigh (their in-memory size is larger).
 */
export function estimateBytes(node: PlanNode, fileFactor = 1): number {
  const est = (n: PlanNode) => estimateBytes(n, fileFactor);
  switch (node.kind) {
    case "scanCsv":
    case "scanFile": {
      const total = node.files.reduce((n, f) => n + (statSync(f, { throwIfNoEntry: false })?.size ?? 0), 0);
      return (fileFactor * total * node.schema.length) / Math.max(1, node.fileSchema.length);
    }
    case "values":
      return node.partitions.reduce((n, p) => n + (Object.values(p)[0]?.length ?? 0), 0) * node.schema.length * 8;
    case "stored":
      return node.bytes;
    case "fromBag":
      return Number.POSITIVE_INFINITY; // unknown until run: never broadcast
    case "head":
      return Math.min(est(node.input), node.n * node.schema.length * 8);
    case "union":
      return node.inputs.reduce((n, i) => n + est(i), 0);
    case "join":
      return est(node.left) + est(node.right) * (node.how === "semi" || node.how === "anti" ? 0 : 1);
    default:
      return est(node.input);
  }
}

function run(node: PlanNode): PlanNode {
  const n = withChildren(node, childrenOf(node).map(run));
  if (n.kind !== "join") return n;
  const keepsRightRows = n.how === "right" || n.how === "outer";
  const strategy = !keepsRightRows && estimateBytes(n.right) <= BROADCAST_BYTES ? "broadcast" : "hash";
  return { ...n, strategy };
}

export const joinStrategy: OptimizerPass = { name: "joinStrategy", run };
