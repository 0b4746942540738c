// A semi or anti join builds its hash table on the right side, which in a query is
// often the big one ("orders that have a late lineitem"). When the right side is
// estimated several times the left, it is first reduced to the rows whose keys the
// left has: `right semi (left's keys)`, which builds on the small left keys and
// streams the big side through them (fused into its scan). The join then builds on
// that remainder. Answers are unchanged: a left key matches the right exactly when it
// matches a right row that has a left key; null keys match nothing either way.
import type { ExprNode } from "../../common/expr.js";
import { childrenOf, withChildren, type PlanNode } from "../../common/plan.js";
import { Estimator } from "../estimate.js";
import type { OptimizerPass } from "./pass.js";

/** Right sides estimated this many times the left are reduced first. */
const REDUCE_RATIO = 4;

type Join = PlanNode & { kind: "join" };

function reduce(node: Join): PlanNode {
  const { left, right, leftOn, rightOn, loc } = node;
  // The left's keys under the right's key names (the names must then be distinct).
  if (new Set(rightOn).size !== rightOn.length) return node;
  const keyExprs = leftOn.map((l, i) => ({ name: rightOn[i], expr: { kind: "col", name: l } as ExprNode }));
  const keys: PlanNode = {
    kind: "project",
    input: left,
    exprs: keyExprs,
    schema: leftOn.map((l, i) => ({ name: rightOn[i], type: left.schema.find((f) => f.name === l)!.type })),
    ...(loc ? { loc } : {}),
  };
  const reduced: Join = {
    kind: "join",
    left: right,
    right: keys,
    how: "semi",
    leftOn: rightOn,
    rightOn,
    output: right.schema.map((f) => ({ side: "left" as const, source: f.name, name: f.name })),
    schema: right.schema,
    ...(loc ? { loc } : {}),
  };
  return { ...node, right: reduced };
}

function run(node: PlanNode): PlanNode {
  const n = withChildren(node, childrenOf(node).map(run));
  if (n.kind !== "join" || (n.how !== "semi" && n.how !== "anti")) return n;
  const est = new Estimator();
  return est.rows(n.right) > REDUCE_RATIO * est.rows(n.left) ? reduce(n) : n;
}

export const semiJoinReduction: OptimizerPass = { name: "semiJoinReduction", run };
