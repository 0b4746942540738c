// A semi or anti join builds its hash table on the right side, which in a query is
// often the big one ("orders that have a late lineitem"). When the right side is
// estimated several times the left, it is first reduced to the rows whose keys the
// left has: `right semi (left's keys)`, which builds on the small left keys and
// streams the big side through them (fused into its scan). The join then builds on
// that remainder. Answers are unchanged: a left key matches the right exactly when it
// matches a right row that has a left key; null keys match nothing either way.
//
// An inner join reduces its big side the same way when that side aggregates by the
// join keys below it (Q20: lineitem's shipped quantity per part and supplier, joined
// with the few partsupp rows of "forest" parts): the rows of groups the join would drop
// are dropped before they are grouped, so the 9M-row aggregation becomes a 100k-row one.
import type { ExprNode } from "../../common/expr.js";
import { childrenOf, withChildren, type PlanNode } from "../../common/plan.js";
import { Estimator } from "../estimate.js";
import { semiJoin } from "./semi_join_pushdown.js";
import type { OptimizerPass } from "./pass.js";

/** Right sides estimated this many times the left are reduced first. */
const REDUCE_RATIO = 4;

type Join = PlanNode & { kind: "join" };

function reduce(node: Join): PlanNode {
  const { left, right, leftOn, rightOn, loc } = node;
  const reduced = reducedBy(right, rightOn, left, leftOn, loc);
  return reduced ? { ...node, right: reduced } : node;
}

/** `big` semi-joined below its passing nodes with `small`'s keys (on bigOn = smallOn), or undefined when its key names repeat. */
function reducedBy(
  big: PlanNode,
  bigOn: string[],
  small: PlanNode,
  smallOn: string[],
  loc: PlanNode["loc"],
): PlanNode | undefined {
  // The small side's keys under the big side's key names (the names must then be distinct).
  if (new Set(bigOn).size !== bigOn.length) return undefined;
  const keys: PlanNode = {
    kind: "project",
    input: small,
    exprs: smallOn.map((l, i) => ({ name: bigOn[i], expr: { kind: "col", name: l } as ExprNode })),
    schema: smallOn.map((l, i) => ({ name: bigOn[i], type: small.schema.find((f) => f.name === l)!.type })),
    ...(loc ? { loc } : {}),
  };
  return semiBelow(big, keys, bigOn, loc);
}

/** Whether a semi join on `names` would pass below an aggregation grouped by them. */
function passesAggregate(input: PlanNode, names: string[]): boolean {
  return canDescend(input, names) && (input.kind === "aggregate" || passesAggregate(input.input, names));
}

/** An inner join with its big side, where that side aggregates by the join keys, reduced to the small side's keys. */
function reduceInner(node: Join, est: Estimator): PlanNode {
  const { left, right, leftOn, rightOn, loc } = node;
  const big = (side: PlanNode, on: string[], other: PlanNode) =>
    passesAggregate(side, on) && est.rows(unfiltered(side, on)) > REDUCE_RATIO * est.rows(other);
  if (big(left, leftOn, right)) {
    const reduced = reducedBy(left, leftOn, right, rightOn, loc);
    return reduced ? { ...node, left: reduced } : node;
  }
  if (big(right, rightOn, left)) {
    const reduced = reducedBy(right, rightOn, left, leftOn, loc);
    return reduced ? { ...node, right: reduced } : node;
  }
  return node;
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
  return semiJoin(input, keys, names, names, "semi", loc);
}

function run(root: PlanNode): PlanNode {
  const est = new Estimator();
  const visit = (node: PlanNode): PlanNode => {
    const n = withChildren(node, childrenOf(node).map(visit));
    if (n.kind === "join" && n.how === "inner") return reduceInner(n, est);
    if (n.kind !== "join" || (n.how !== "semi" && n.how !== "anti")) return n;
    // Sized below the right side's filters: a filter above an aggregate (HAVING) says
    // little about how many groups there are. Not below the aggregate: a left that holds
    // as many keys as the right has groups (Q18: every order) reduces nothing.
    return est.rows(unfiltered(n.right, n.rightOn)) > REDUCE_RATIO * est.rows(n.left) ? reduce(n) : n;
  };
  return visit(root);
}

export const semiJoinReduction: OptimizerPass = { name: "semiJoinReduction", run };
