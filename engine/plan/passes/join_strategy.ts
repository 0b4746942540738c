// Chooses how each join runs: broadcast the right side to every left partition
// when it is expected to be small (estimated rows, see ../estimate.ts) and the join
// keeps no unmatched right rows; otherwise hash-partition both sides by key.
import { statSync } from "node:fs";
import { childrenOf, withChildren, type PlanNode } from "../../common/plan.js";
import type { Field } from "../../common/types.js";
import { Estimator } from "../estimate.js";
import type { OptimizerPass } from "./pass.js";

/** Right sides estimated below this many bytes are broadcast. */
export const BROADCAST_BYTES = 64 * 1024 * 1024;
/** Right sides of up to this many rows are broadcast even when larger than the left. */
const SMALL_ROWS = 100_000;

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

/** Bytes a value of each type takes in the store (a string: its offset and ~24 characters). */
function fieldBytes(f: Field): number {
  return f.type === "bool" ? 1 : f.type === "date" ? 4 : f.type === "string" ? 32 : 8;
}

/**
 * The bytes a side is expected to hold: the estimated rows of its columns, capped by
 * the upper bound. The bound alone counts a persisted table's every column
 * and a join or aggregation as large as its inputs, so a small filtered dimension or a
 * per-key aggregate was shuffled with the fact table instead of broadcast (TPC-H Q8,
 * Q17 in memory hash-partitioned all of lineitem).
 */
export function expectedBytes(node: PlanNode, est: Estimator = new Estimator()): number {
  const width = node.schema.reduce((n, f) => n + fieldBytes(f), 0);
  return Math.min(estimateBytes(node), est.rows(node) * width);
}

function run(root: PlanNode): PlanNode {
  const est = new Estimator();
  const visit = (node: PlanNode): PlanNode => {
    const n = withChildren(node, childrenOf(node).map(visit));
    if (n.kind !== "join") return n;
    const keepsRightRows = n.how === "right" || n.how === "outer";
    // A right side larger than the left is hash-partitioned with it: its hash table is then
    // built in parallel parts instead of whole by one thread (TPC-H Q13's orders).
    const rows = est.rows(n.right);
    const broadcast =
      !keepsRightRows &&
      expectedBytes(n.right, est) <= BROADCAST_BYTES &&
      (rows <= SMALL_ROWS || rows <= est.rows(n.left));
    const strategy = broadcast ? "broadcast" : "hash";
    return { ...n, strategy };
  };
  return visit(root);
}

export const joinStrategy: OptimizerPass = { name: "joinStrategy", run };
