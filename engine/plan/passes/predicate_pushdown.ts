// Moves filters towards the scan: through projections (substituting the projected
// expressions), through aggregations when they test only group keys, merging
// adjacent filters, and finally into the file scan itself.
import { columnsOf, type ExprNode } from "../../common/expr.js";
import { childrenOf, withChildren, type NamedExpr, type PlanNode } from "../../common/plan.js";
import type { OptimizerPass } from "../optimizer.js";

function substitute(e: ExprNode, by: Map<string, ExprNode>): ExprNode {
  switch (e.kind) {
    case "col": return by.get(e.name) ?? e;
    case "lit": return e;
    case "binary": return { ...e, left: substitute(e.left, by), right: substitute(e.right, by) };
    case "fillNull": return { ...e, arg: substitute(e.arg, by), fill: substitute(e.fill, by) };
    case "agg": return e.arg ? { ...e, arg: substitute(e.arg, by) } : e;
    default: return { ...e, arg: substitute(e.arg, by) } as ExprNode;
  }
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
    case "scanCsv":
    case "scanFile":
      return { ...node, predicate: node.predicate ? and(node.predicate, predicate) : predicate };
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
