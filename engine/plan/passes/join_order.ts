// Orders multi-way inner joins by estimated sizes instead of as written. A tree of
// three or more inner equi-joins is flattened into its relations and key equalities,
// then rebuilt greedily (GOO, as in DuckDB's fallback planner): join the two
// connected parts whose result is estimated smallest, the larger one probing and
// the smaller one built into the hash table, until one part is left. So a filtered
// dimension is joined before the fact table meets it, and the fact table streams
// through small hash tables instead of being built into one. Columns keep their
// output names (leaves are renamed to them first; keys that the written joins
// dropped get internal names) and a final projection restores the written column
// order. A join of two relations is only turned round when its right (build) side
// is estimated clearly larger than its left. Joins are reordered only where every key
// equality has statistics (Parquet min/max, a persisted table's ranges) on one side.
// A join whose result is used twice (Q17's part ⋈ lineitem, averaged and compared
// with the average) stays whole, a relation of the joins above it: reordered into
// them, it would be computed once per use.
import type { SourceLocation } from "../../common/errors.js";
import type { ExprNode } from "../../common/expr.js";
import { childrenOf, withChildren, type JoinOutput, type NamedExpr, type PlanNode } from "../../common/plan.js";
import { Estimator } from "../estimate.js";
import { parentCounts, shareSubplans } from "../shared_plan.js";
import type { OptimizerPass } from "./pass.js";

type Join = PlanNode & { kind: "join" };
/** A leaf relation's column: leaf index and its name there. */
type Ref = string;
const ref = (leaf: number, name: string): Ref => `${leaf}\u0000${name}`;

/** A relation of the flattened join, or a part already joined. */
interface Part {
  plan: PlanNode;
  leaves: Set<number>;
}

/** An equality between columns of two leaves, by their names in the rebuilt plan. */
interface Edge {
  a: { leaf: number; name: string };
  b: { leaf: number; name: string };
}

/** A join of two relations is turned round when its right side is estimated this much larger. */
const SWAP_RATIO = 2;

const isInnerJoin = (n: PlanNode): n is Join => n.kind === "join" && n.how === "inner";

/** Inner joins with more than one parent: relations of the join trees above them, never split. */
type Shared = ReadonlySet<PlanNode>;
/** An inner join whose relations may be reordered with those of the joins above it. */
const isOpenJoin = (n: PlanNode, shared: Shared): n is Join => isInnerJoin(n) && !shared.has(n);

function countLeaves(n: PlanNode, shared: Shared): number {
  return isOpenJoin(n, shared) ? countLeaves(n.left, shared) + countLeaves(n.right, shared) : 1;
}

/** The inner-join tree under `node` (itself split even when shared) with each relation (leaf) replaced by `f(leaf)`. */
function withLeaves(node: PlanNode, f: (leaf: PlanNode) => PlanNode, shared: Shared, top = true): PlanNode {
  if (!isInnerJoin(node) || (!top && shared.has(node))) return f(node);
  return withChildren(node, [withLeaves(node.left, f, shared, false), withLeaves(node.right, f, shared, false)]);
}

/** The inner-join tree under `node` as leaves, key equalities and output columns → leaf columns. */
function flatten(node: PlanNode, leaves: PlanNode[], keys: [Ref, Ref][], shared: Shared): Map<string, Ref> {
  if (!isOpenJoin(node, shared)) {
    const leaf = leaves.push(node) - 1;
    return new Map(node.schema.map((f) => [f.name, ref(leaf, f.name)]));
  }
  const left = flatten(node.left, leaves, keys, shared);
  const right = flatten(node.right, leaves, keys, shared);
  node.leftOn.forEach((l, i) => keys.push([left.get(l)!, right.get(node.rightOn[i])!]));
  return new Map(
    node.output.map((o: JoinOutput) => [
      o.name,
      o.side === "right" ? right.get(o.source)! : left.get(o.side === "key" ? node.leftOn[o.source] : o.source)!,
    ]),
  );
}

const col = (name: string): ExprNode => ({ kind: "col", name });

function project(input: PlanNode, exprs: NamedExpr[], loc?: SourceLocation): PlanNode {
  const schema = exprs.map((x) => ({
    name: x.name,
    type: input.schema.find((f) => f.name === (x.expr as { name: string }).name)!.type,
  }));
  return { kind: "project", input, exprs, schema, ...(loc ? { loc } : {}) };
}

/** The join tree rebuilt in the chosen order, or undefined where the written order stays. */
function reorder(node: Join, shared: Shared): PlanNode | undefined {
  const leaves: PlanNode[] = [];
  const keys: [Ref, Ref][] = [];
  const output = flatten(node, leaves, keys, shared);
  // Every leaf column's name in the rebuilt plan: its output name, or an internal one.
  const taken = new Set(node.schema.map((f) => f.name));
  const nameOf = new Map<Ref, string>([...output].map(([name, r]) => [r, name]));
  for (const [a, b] of keys)
    for (const r of [a, b]) {
      if (nameOf.has(r)) continue;
      let name = `__join_${r.replace("\u0000", "_")}`;
      while (taken.has(name)) name += "_";
      taken.add(name);
      nameOf.set(r, name);
    }
  const parts: Part[] = leaves.map((leaf, i) => {
    const exprs: NamedExpr[] = [];
    for (const f of leaf.schema) {
      const name = nameOf.get(ref(i, f.name));
      if (name !== undefined) exprs.push({ name, expr: col(f.name) });
    }
    const same = exprs.length === leaf.schema.length && exprs.every((x, k) => x.name === leaf.schema[k].name);
    return { plan: same ? leaf : project(leaf, exprs, node.loc), leaves: new Set([i]) };
  });
  const edges: Edge[] = keys.map(([a, b]) => ({
    a: { leaf: Number(a.split("\u0000")[0]), name: nameOf.get(a)! },
    b: { leaf: Number(b.split("\u0000")[0]), name: nameOf.get(b)! },
  }));

  const est = new Estimator();
  // Without statistics on either side of a key, a join on it may multiply rows (a
  // low-cardinality key taken for a unique one): the written order is kept then.
  const known = (leaf: number, name: string) => est.knowsDistinct(parts[leaf].plan, name);
  if (!edges.every((e) => known(e.a.leaf, e.a.name) || known(e.b.leaf, e.b.name))) return undefined;
  while (parts.length > 1) {
    let best: { i: number; j: number; rows: number; on: [string[], string[]] } | undefined;
    for (let i = 0; i < parts.length; i++)
      for (let j = i + 1; j < parts.length; j++) {
        const on = keysBetween(edges, parts[i], parts[j]);
        if (on[0].length === 0) continue;
        const rows = est.joinRows(parts[i].plan, parts[j].plan, on[0], on[1]);
        if (!best || rows < best.rows) best = { i, j, rows, on };
      }
    // Every written join links its two sides by a key, so some pair is always connected.
    if (!best) throw new Error("join order: the join graph is not connected");
    const [a, b] = [parts[best.i], parts[best.j]];
    const aProbes = est.rows(a.plan) >= est.rows(b.plan);
    const [probe, build] = aProbes ? [a, b] : [b, a];
    const [probeOn, buildOn] = aProbes ? best.on : [best.on[1], best.on[0]];
    const joined: Join = {
      kind: "join",
      left: probe.plan,
      right: build.plan,
      how: "inner",
      leftOn: probeOn,
      rightOn: buildOn,
      output: [
        ...probe.plan.schema.map((f) => ({ side: "left" as const, source: f.name, name: f.name })),
        ...build.plan.schema.map((f) => ({ side: "right" as const, source: f.name, name: f.name })),
      ],
      schema: [...probe.plan.schema, ...build.plan.schema],
      ...(node.loc ? { loc: node.loc } : {}),
    };
    parts.splice(best.j, 1);
    parts.splice(best.i, 1);
    parts.push({ plan: joined, leaves: new Set([...a.leaves, ...b.leaves]) });
  }
  return project(
    parts[0].plan,
    node.schema.map((f) => ({ name: f.name, expr: col(f.name) })),
    node.loc,
  );
}

/** The key columns joining part `p` to part `q`: [p's names, q's names]. */
function keysBetween(edges: Edge[], p: Part, q: Part): [string[], string[]] {
  const mine: string[] = [],
    theirs: string[] = [];
  for (const e of edges) {
    if (p.leaves.has(e.a.leaf) && q.leaves.has(e.b.leaf)) (mine.push(e.a.name), theirs.push(e.b.name));
    else if (p.leaves.has(e.b.leaf) && q.leaves.has(e.a.leaf)) (mine.push(e.b.name), theirs.push(e.a.name));
  }
  return [mine, theirs];
}

function run(root: PlanNode): PlanNode {
  const dag = shareSubplans(root);
  const shared = new Set(
    [...parentCounts(dag)].filter(([n, parents]) => parents > 1 && isInnerJoin(n)).map(([n]) => n),
  );
  const order = (node: PlanNode): PlanNode => {
    if (!isInnerJoin(node)) return withChildren(node, childrenOf(node).map(order));
    // The relations first (each once; joins below them are ordered on their own).
    const written = withLeaves(node, order, shared) as Join;
    if (countLeaves(written, shared) >= 3) return reorder(written, shared) ?? written;
    // Two relations: swapped only when the written build side is clearly the larger.
    const est = new Estimator();
    return est.rows(written.right) > SWAP_RATIO * est.rows(written.left)
      ? (reorder(written, shared) ?? written)
      : written;
  };
  return order(dag);
}

export const joinOrder: OptimizerPass = { name: "joinOrder", run };
