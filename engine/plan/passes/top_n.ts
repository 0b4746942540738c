// head(n) right after sort() becomes a top-n sort: each partition keeps only its
// first n rows, instead of the whole frame being sorted and moved.
import { childrenOf, withChildren, type PlanNode } from "../../common/plan.js";
import type { OptimizerPass } from "./pass.js";

function run(node: PlanNode): PlanNode {
  const n = withChildren(node, childrenOf(node).map(run));
  if (n.kind === "head" && n.input.kind === "sort") {
    const limit = Math.min(n.n, n.input.limit ?? Infinity);
    return { ...n.input, limit };
  }
  return n;
}

export const topN: OptimizerPass = { name: "topN", run };
