// Moves filters towards the scan: through projections (substituting the projected
// expressions), through aggregations when they test only group keys, merging
// adjacent filters, into the sides of joins that keep their rows (with what an OR
// across both sides implies for each), and finally into the file scan itself.
import { columnsOf, mapChildren, type ExprNode } from "../../common/expr.js";
import { childrenOf, withChildren, type NamedExpr, type PlanNode } from "../../common/plan.js";
import type { OptimizerPass } from "./pass.js";

function substitute(e: ExprNode, by: Map<string, ExprNode>): ExprNode {
  return e.kind === "col" ? (by.get(e.name) ?? e) : mapChildren(e, (c) => substitute(c, by));
}

function unalias(e: ExprNode): ExprNode {
  return e.kind === "alias" ? unalias(e.arg) : e;
}

function and(a: ExprNode, b: ExprNode): ExprNode {
  return { kind: "binary", op: "and", left: a, right: b };
}

function byName(exprs: NamedExpr[]): Map<string, ExprNode> {
  return new Map(exprs.map((x) => [x.name, unalias(x.expr)]));
}

function conjuncts(e: ExprNode): ExprNode[] {
  return e.kind === "binary" && e.op === "and" ? [...conjuncts(e.left), ...conjuncts(e.right)] : [e];
}

function disjuncts(e: ExprNode): ExprNode[] {
  return e.kind === "binary" && e.op === "or" ? [...disjuncts(e.left), ...disjuncts(e.right)] : [e];
}

function or(a: ExprNode, b: ExprNode): ExprNode {
  return { kind: "binary", op: "or", left: a, right: b };
}

/**
 * What an OR of ANDs says about one side's columns alone: each branch cut down to its
 * conjuncts that `reads` accepts, ORed; null when a branch has none. It is true
 * wherever `e` is, so a side may filter on it while `e` stays above the join (TPC-H
 * Q19's three part/lineitem branches become a part filter that keeps ~0.2% of parts).
 */
function impliedBy(e: ExprNode, reads: (c: ExprNode) => boolean): ExprNode | null {
  const branches = disjuncts(e);
  if (branches.length < 2) return null;
  const cut: ExprNode[] = [];
  for (const b of branches) {
    const mine = conjuncts(b).filter(reads);
    if (mine.length === 0) return null;
    cut.push(mine.reduce(and));
  }
  return cut.reduce(or);
}

function renamer(pairs: [string, string][]): Map<string, ExprNode> {
  return new Map(pairs.map(([from, to]) => [from, { kind: "col", name: to }]));
}

/**
 * Splits a filter above a join into the parts each side can take. A side takes a
 * conjunct that reads only its columns when the join never null-extends that side
 * (its rows reach the output as they are). A conjunct on the left's join keys also
 * holds for the right rows they match, so an inner, left, semi or anti join copies
 * it to the right side too (DuckDB and Polars do the same).
 */
function pushIntoJoin(
  node: Extract<PlanNode, { kind: "join" }>,
  predicate: ExprNode,
  loc: string | undefined,
): PlanNode {
  const leftKeeps = node.how !== "right" && node.how !== "outer";
  const rightKeeps = node.how === "inner" || node.how === "right";
  const leftNames = renamer(
    node.output.flatMap((o): [string, string][] => (o.side === "left" ? [[o.name, o.source]] : [])),
  );
  const rightNames = renamer(
    node.output.flatMap((o): [string, string][] =>
      o.side === "right" ? [[o.name, o.source]] : o.side === "key" ? [[o.name, node.rightOn[o.source]]] : [],
    ),
  );
  const keyToRight = renamer(node.leftOn.map((k, i) => [k, node.rightOn[i]]));
  const reads = (e: ExprNode, names: Map<string, ExprNode>) => [...columnsOf(e)].every((c) => names.has(c));
  const left: ExprNode[] = [],
    right: ExprNode[] = [],
    rest: ExprNode[] = [];
  for (const c of conjuncts(predicate)) {
    if (leftKeeps && reads(c, leftNames)) {
      const onLeft = substitute(c, leftNames);
      left.push(onLeft);
      if (reads(onLeft, keyToRight)) right.push(substitute(onLeft, keyToRight));
    } else if (rightKeeps && reads(c, rightNames)) right.push(substitute(c, rightNames));
    else {
      rest.push(c);
      const onLeft = leftKeeps ? impliedBy(c, (x) => reads(x, leftNames)) : null;
      const onRight = rightKeeps ? impliedBy(c, (x) => reads(x, rightNames)) : null;
      if (onLeft) left.push(substitute(onLeft, leftNames));
      if (onRight) right.push(substitute(onRight, rightNames));
    }
  }
  const push = (side: PlanNode, parts: ExprNode[]) =>
    parts.length === 0 ? side : pushFilter(side, parts.reduce(and), loc);
  const joined: PlanNode = { ...node, left: push(node.left, left), right: push(node.right, right) };
  return rest.length === 0
    ? joined
    : { kind: "filter", input: joined, predicate: rest.reduce(and), schema: node.schema, loc };
}

/** Places `predicate` as low as it can go beneath `node`. */
function pushFilter(node: PlanNode, predicate: ExprNode, loc: string | undefined): PlanNode {
  switch (node.kind) {
    case "filter":
      return pushFilter(node.input, and(node.predicate, predicate), loc);
    case "project":
      return { ...node, input: pushFilter(node.input, substitute(predicate, byName(node.exprs)), loc) };
    case "aggregate": {
      const keys = new Set(node.keys.map((k) => k.name));
      if (![...columnsOf(predicate)].every((c) => keys.has(c))) break;
      return { ...node, input: pushFilter(node.input, substitute(predicate, byName(node.keys)), loc) };
    }
    case "sort":
      if (node.limit !== undefined) break; // filtering before a top-n changes which rows are kept
      return { ...node, input: pushFilter(node.input, predicate, loc) };
    case "join":
      return pushIntoJoin(node, predicate, loc);
    case "window":
      break; // filtering first would change which rows the windows see
    case "scanCsv":
    case "scanFile":
      return {
        ...node,
        predicate: node.predicate ? and(node.predicate, predicate) : predicate,
        predicateLoc: node.predicateLoc ?? loc,
      };
    default:
      break;
  }
  return { kind: "filter", input: node, predicate, schema: node.schema, loc };
}

function run(node: PlanNode): PlanNode {
  const children = childrenOf(node).map(run);
  if (node.kind === "filter") return pushFilter(children[0], node.predicate, node.loc);
  return withChildren(node, children);
}

export const predicatePushdown: OptimizerPass = { name: "predicatePushdown", run };
