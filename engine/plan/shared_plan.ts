// A plan is a DAG: a frame used twice (Q17's part ⋈ lineitem, feeding both an
// average and the rows compared with it) must be computed once. Passes rewrite
// plans as trees, so sharing is restored by hash-consing: subtrees that are equal
// node for node become one object, which projection pushdown prunes once (for the
// union of what its parents read) and lowering turns into tasks once.
import { childrenOf, withChildren, type PlanNode } from "../common/plan.js";

/** Nodes holding data or handles are only the same when they are the same object. */
const BY_IDENTITY = new Set<PlanNode["kind"]>(["values", "stored", "fromBag"]);

/**
 * The plan with structurally equal subtrees (source locations aside) replaced by one
 * shared object.
 *
 * @example
 * const dag = shareSubplans(optimizedRoot);
 */
export function shareSubplans(root: PlanNode): PlanNode {
  const ids = new Map<PlanNode, number>(); // node → id of its class
  const byKey = new Map<string, PlanNode>();
  const done = new Map<PlanNode, PlanNode>();
  let identities = 0;
  const identity = new WeakMap<object, number>();
  const visit = (node: PlanNode): PlanNode => {
    const seen = done.get(node);
    if (seen) return seen;
    const kids = childrenOf(node).map(visit);
    const rebuilt = kids.every((k, i) => k === childrenOf(node)[i]) ? node : withChildren(node, kids);
    const childSet = new Set<unknown>(kids);
    let own: string;
    if (BY_IDENTITY.has(node.kind)) {
      if (!identity.has(node)) identity.set(node, identities++);
      own = `${node.kind}#${identity.get(node)}`;
    } else {
      // NaN, ±Infinity and -0 keep their own keys (JSON makes null of the first three, 0 of -0).
      own = JSON.stringify(rebuilt, (k, v: unknown) =>
        k === "loc" || k === "predicateLoc"
          ? undefined
          : childSet.has(v)
            ? `#${ids.get(v as PlanNode)}`
            : typeof v === "number" && (!Number.isFinite(v) || Object.is(v, -0))
              ? `#number:${Object.is(v, -0) ? "-0" : v}`
              : v,
      );
    }
    let canonical = byKey.get(own);
    if (!canonical) {
      canonical = rebuilt;
      byKey.set(own, canonical);
      ids.set(canonical, ids.size);
    }
    done.set(node, canonical);
    return canonical;
  };
  return visit(root);
}

/**
 * How many parent edges reach each node (a self-join's input counts twice).
 *
 * @example
 * const shared = parentCounts(root); // shared.get(node)! > 1: computed once, read twice
 */
export function parentCounts(root: PlanNode): Map<PlanNode, number> {
  const counts = new Map<PlanNode, number>();
  const seen = new Set<PlanNode>();
  const walk = (node: PlanNode) => {
    if (seen.has(node)) return;
    seen.add(node);
    for (const c of childrenOf(node)) {
      counts.set(c, (counts.get(c) ?? 0) + 1);
      walk(c);
    }
  };
  walk(root);
  return counts;
}
