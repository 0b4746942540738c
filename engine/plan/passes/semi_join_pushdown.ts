// A semi or anti join whose keys all come from one side of an inner join (or the
// kept side of a left join) below it filters that side instead, when that side is
// estimated no larger than the join's output: it then tests no more rows than
// before, and the join meets only the rows kept. TPC-H Q11's "suppliers in GERMANY"
// cuts supplier to 4% before partsupp probes it, instead of probing all of it and
// cutting partsupp's 8M joined rows; Q18's orders of more than 300 units are found
// before their customers are joined. Answers are unchanged: whether a row's key
// matches does not depend on the rows it is joined with, and a row stays or goes with
// every row it joins to. Filters and projections that pass the keys are passed.
import { childrenOf, withChildren, type PlanNode } from "../../common/plan.js";
import { Estimator } from "../estimate.js";
import type { OptimizerPass } from "./pass.js";

type Join = PlanNode & { kind: "join" };

/**
 * `left semi/anti right on leftOn = rightOn`: the left side's rows, filtered.
 *
 * @example
 * semiJoin(orders, large, ["o_orderkey"], ["l_orderkey"], "semi", loc)
 */
export function semiJoin(
  left: PlanNode,
  right: PlanNode,
  leftOn: string[],
  rightOn: string[],
  how: "semi" | "anti",
  loc: PlanNode["loc"],
): PlanNode {
  return {
    kind: "join",
    left,
    right,
    how,
    leftOn,
    rightOn,
    output: left.schema.map((f) => ({ side: "left" as const, source: f.name, name: f.name })),
    schema: left.schema,
    ...(loc ? { loc } : {}),
  };
}

/** The input column behind each of `names` in a projection's output, if all are plain columns. */
function sources(node: PlanNode & { kind: "project" }, names: string[]): string[] | undefined {
  const out = names.map((n) => {
    const e = node.exprs.find((x) => x.name === n)?.expr;
    return e?.kind === "col" ? e.name : undefined;
  });
  return out.every((s) => s !== undefined) ? (out as string[]) : undefined;
}

/** `input` with the semi join `j` (on keys `on`, in input's names) moved into it, or undefined when it cannot go lower. */
function pushed(input: PlanNode, j: Join, on: string[], est: Estimator): PlanNode | undefined {
  switch (input.kind) {
    case "filter": {
      const inner = pushed(input.input, j, on, est);
      return inner && { ...input, input: inner };
    }
    case "project": {
      const from = sources(input, on);
      const inner = from && pushed(input.input, j, from, est);
      return inner && { ...input, input: inner };
    }
    case "join": {
      if (input.how !== "inner" && input.how !== "left") return undefined;
      for (const side of input.how === "inner" ? (["left", "right"] as const) : (["left"] as const)) {
        const from = on.map((n) => input.output.find((o) => o.side === side && o.name === n)?.source);
        if (!from.every((s) => s !== undefined)) continue;
        const target = input[side];
        if (est.rows(target) > est.rows(input)) return undefined;
        const keys = from as string[];
        const moved =
          pushed(target, j, keys, est) ?? semiJoin(target, j.right, keys, j.rightOn, j.how as "semi" | "anti", j.loc);
        return { ...input, [side]: moved };
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

function run(root: PlanNode): PlanNode {
  const est = new Estimator();
  const visit = (node: PlanNode): PlanNode => {
    const n = withChildren(node, childrenOf(node).map(visit));
    if (n.kind !== "join" || (n.how !== "semi" && n.how !== "anti")) return n;
    return pushed(n.left, n, n.leftOn, est) ?? n;
  };
  return visit(root);
}

export const semiJoinPushdown: OptimizerPass = { name: "semiJoinPushdown", run };
