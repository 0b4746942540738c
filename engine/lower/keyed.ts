// What the lowering knows of how a node's partitions split its rows: sets of columns
// such that rows equal in every column of one set lie in one partition (a hash
// shuffle by those columns, a scan of a file clustered by one, or a single
// partition: the empty set). Dask calls the ordered case known divisions. An
// aggregation grouped by a superset of such a set is whole in each partition and
// runs there, with no shuffle (TPC-H Q18 and Q21 group lineitem by l_orderkey, the
// order it is stored in; Q13 groups a join's output by its key).
import type { JoinOutput, NamedExpr, PlanNode } from "../common/plan.js";

/** Alternative column sets, each keying the partitions on its own. */
export type Keyed = string[][];

/** Keyed by nothing known. */
export const NOT_KEYED: Keyed = [];

/** One partition: every set of columns keys it. */
export const ONE_PARTITION: Keyed = [[]];

/**
 * The sets that survive a renaming: each column through `rename` (undefined drops it).
 *
 * @example
 * renamed([["a"]], (c) => (c === "a" ? "b" : undefined)) // [["b"]]
 */
export function renamed(keyed: Keyed, rename: (column: string) => string | undefined): Keyed {
  const out: Keyed = [];
  for (const set of keyed) {
    const names = set.map(rename);
    if (names.every((n) => n !== undefined)) out.push(names as string[]);
  }
  return out;
}

/**
 * A projection's keying: columns it passes through unchanged keep their sets.
 *
 * @example
 * projected([["k"]], [{ name: "key", expr: { kind: "col", name: "k" } }]) // [["key"]]
 */
export function projected(keyed: Keyed, exprs: readonly NamedExpr[]): Keyed {
  return renamed(keyed, (c) => exprs.find((e) => e.expr.kind === "col" && e.expr.name === c)?.name);
}

/** Where a join's output shows each column of one side. */
function sideNames(output: readonly JoinOutput[], side: "left" | "right"): (column: string) => string | undefined {
  return (c) => output.find((o) => o.side === side && o.source === c)?.name;
}

/**
 * A broadcast join's keying: the left side's partitions, each joined whole.
 *
 * @example
 * broadcastJoined(join, [["l_orderkey"]]) // [["l_orderkey"]]
 */
export function broadcastJoined(node: Extract<PlanNode, { kind: "join" }>, left: Keyed): Keyed {
  return renamed(left, sideNames(node.output, "left"));
}

/**
 * A hash join's keying: bucket r holds the rows whose keys hash to r, so the left keys
 * key it, and for an inner join the right keys too (equal values); `parts` 1 is one
 * partition.
 *
 * @example
 * hashJoined(join, 8) // [["l_orderkey"], ["o_orderkey"]] for an inner join on them
 */
export function hashJoined(node: Extract<PlanNode, { kind: "join" }>, parts: number): Keyed {
  if (parts === 1) return ONE_PARTITION;
  const sets = renamed([node.leftOn], sideNames(node.output, "left"));
  if (node.how === "inner") sets.push(...renamed([node.rightOn], sideNames(node.output, "right")));
  // Right and outer joins coalesce `on` keys: a key's rows from either side share its bucket.
  const coalesced = node.output.filter((o) => o.side === "key").map((o) => o.name);
  if (coalesced.length === node.leftOn.length) sets.push(coalesced);
  return sets;
}

/**
 * Whether rows equal in `columns` always lie in one partition.
 *
 * @example
 * keyedWithin([["l_orderkey"]], ["l_orderkey", "o_orderdate"]) // true
 */
export function keyedWithin(keyed: Keyed, columns: readonly string[]): boolean {
  return keyed.some((set) => set.every((c) => columns.includes(c)));
}
