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
  return { ...node, right: semiBelow(right, keys, rightOn, loc) };
}

/** Whether `name` is a column the node passes through unchanged from its input. */
function passesThrough(node: PlanNode, name: string): boolean {
  if (node.kind === "filter") return true;
  const exprs = node.kind === "aggregate" ? node.keys : node.kind === "project" ? node.exprs : null;
  return exprs !== null && exprs.some((e) => e.name === name && e.expr.kind === "col" && e.expr.name === name);
}

/** `input` below the filters and projections `semiBelow` would pass. */
function unfiltered(input: PlanNode, names: string[]): PlanNode {
  return canDescend(input, names) && input.kind !== "aggregate" ? unfiltered(input.input, names) : input;
}

type PassThrough = PlanNode & { kind: "filter" | "project" | "aggregate" };

function canDescend(input: PlanNode, names: string[]): input is PassThrough {
  return (
    (input.kind === "filter" || input.kind === "project" || input.kind === "aggregate") &&
    names.every((n) => passesThrough(input, n))
  );
}

/**
 * `input semi keys on names`, placed as deep as it stays equal: below filters, below
 * projections that pass the key columns through, and below aggregations grouped by
 * them (a group's rows all share its key, so keeping the groups with a wanted key is
 * keeping the rows with one). Q21's "orders with more than one supplier" then counts
 * distinct suppliers over the wanted orders' lines, not over all of lineitem.
 */
function semiBelow(input: PlanNode, keys: PlanNode, names: string[], loc: PlanNode["loc"]): PlanNode {
  if (canDescend(input, names)) return { ...input, input: semiBelow(input.input, keys, names, loc) } as PlanNode;
  return {
    kind: "join",
    left: input,
    right: keys,
    how: "semi",
    leftOn: names,
    rightOn: names,
    output: input.schema.map((f) => ({ side: "left" as const, source: f.name, name: f.name })),
    schema: input.schema,
    ...(loc ? { loc } : {}),
  };
}

function run(root: PlanNode): PlanNode {
  const est = new Estimator();
  const visit = (node: PlanNode): PlanNode => {
    const n = withChildren(node, childrenOf(node).map(visit));
    if (n.kind !== "join" || (n.how !== "semi" && n.how !== "anti")) return n;
    // Sized below the right side's filters: a filter above an aggregate (HAVING) says
    // little about how many groups there are. Not below the aggregate: a left that holds
    // as many keys as the right has groups (Q18: every order) reduces nothing.
    return est.rows(unfiltered(n.right, n.rightOn)) > REDUCE_RATIO * est.rows(n.left) ? reduce(n) : n;
  };
  return visit(root);
}

export const semiJoinReduction: OptimizerPass = { name: "semiJoinReduction", run };
