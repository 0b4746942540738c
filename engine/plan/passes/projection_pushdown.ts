// Reads only the columns the plan uses: unused projections are dropped and a file
// scan materializes just the needed columns (plus those its predicate reads, dropped
// right after it).
// A subplan shared by several parents (plan/shared_plan.ts) is pruned once, for the
// union of what they read: the needs are gathered to a fixpoint first.
import { columnsOf } from "../../common/expr.js";
import type { PlanNode } from "../../common/plan.js";
import { parentCounts, shareSubplans } from "../shared_plan.js";
import type { OptimizerPass } from "./pass.js";

/** The shared nodes' needs (grown while `grew` is set) and, in the final round, their pruned form. */
interface Sharing {
  counts: Map<PlanNode, number>;
  needs: Map<PlanNode, Set<string>>;
  grew: boolean;
  pruned: Map<PlanNode, PlanNode> | null;
}
let sharing: Sharing | null = null;

function prune(node: PlanNode, needed: Set<string>): PlanNode {
  if (!sharing || (sharing.counts.get(node) ?? 0) < 2) return pruneNode(node, needed);
  let all = sharing.needs.get(node);
  if (!all) sharing.needs.set(node, (all = new Set()));
  for (const n of needed)
    if (!all.has(n)) {
      all.add(n);
      sharing.grew = true;
    }
  if (!sharing.pruned) return pruneNode(node, all);
  let out = sharing.pruned.get(node);
  if (!out) sharing.pruned.set(node, (out = pruneNode(node, all)));
  return out;
}

/** `node`, or a projection of its `needed` columns over it when it has others (and some of those). */
function onlyNeeded(node: PlanNode, needed: Set<string>): PlanNode {
  const kept = node.schema.filter((f) => needed.has(f.name));
  if (kept.length === 0 || kept.length === node.schema.length) return node;
  return {
    kind: "project",
    input: node,
    exprs: kept.map((f) => ({ name: f.name, expr: { kind: "col", name: f.name } })),
    schema: kept,
    loc: node.loc,
  };
}

function pruneNode(node: PlanNode, needed: Set<string>): PlanNode {
  switch (node.kind) {
    case "scanCsv":
    case "scanFile": {
      const read = new Set(needed);
      if (node.predicate) columnsOf(node.predicate, read);
      const fields = node.fileSchema.filter((f) => read.has(f.name));
      // Keep at least one column so that row counts survive (e.g. count(*)).
      const kept = fields.length > 0 ? fields : node.fileSchema.slice(0, 1);
      const scan = { ...node, columns: kept.map((f) => f.name), schema: kept };
      // Columns only the predicate reads are dropped after it (TPC-H Q13's o_comment was
      // carried through a shuffle and a join): the scan decodes them, no one else copies them.
      return onlyNeeded(scan, needed);
    }
    case "stored":
      // A persisted table keeps every column; operators above it carry only the used
      // ones (a projection of column references shares the stored columns, copying none).
      return onlyNeeded(node, needed);
    case "values":
    case "fromBag":
      return node;
    case "project": {
      const exprs = node.exprs.filter((e) => needed.has(e.name));
      const kept = exprs.length > 0 ? exprs : node.exprs.slice(0, 1);
      const below = new Set<string>();
      for (const e of kept) columnsOf(e.expr, below);
      const input = prune(node.input, below);
      return { ...node, input, exprs: kept, schema: node.schema.filter((f) => kept.some((e) => e.name === f.name)) };
    }
    case "filter": {
      const input = prune(node.input, columnsOf(node.predicate, new Set(needed)));
      return { ...node, input, schema: input.schema };
    }
    case "window": {
      // Window columns nobody reads are dropped (the whole node when none is read);
      // the kept ones need their inputs and keys from below.
      const windows = node.windows.filter((w) => needed.has(w.name));
      if (windows.length === 0) return prune(node.input, needed);
      const below = new Set([...needed].filter((n) => !windows.some((w) => w.name === n)));
      for (const w of windows) columnsOf(w.expr, below);
      const input = prune(node.input, below);
      return {
        ...node,
        input,
        windows,
        schema: [...input.schema, ...node.schema.filter((f) => windows.some((w) => w.name === f.name))],
      };
    }
    case "head": {
      const input = prune(node.input, needed);
      return { ...node, input, schema: input.schema };
    }
    case "sort": {
      const input = prune(node.input, new Set([...needed, ...node.keys.map((k) => k.name)]));
      return { ...node, input, schema: input.schema };
    }
    case "join": {
      // Keys are always read; other columns only when some output needs them.
      const output = node.output.filter((o) => needed.has(o.name) || o.side === "key");
      const kept = output.length > 0 ? output : node.output.slice(0, 1);
      const side = (s: "left" | "right", on: string[]) =>
        new Set([...on, ...kept.flatMap((o) => (o.side === s ? [o.source] : []))]);
      const left = prune(node.left, side("left", node.leftOn));
      const right = prune(node.right, side("right", node.rightOn));
      return {
        ...node,
        left,
        right,
        output: kept,
        schema: node.schema.filter((f) => kept.some((o) => o.name === f.name)),
      };
    }
    case "aggregate": {
      const below = new Set<string>();
      for (const e of [...node.keys, ...node.aggs]) columnsOf(e.expr, below);
      return { ...node, input: prune(node.input, below) };
    }
    case "tail":
    case "sample": {
      const input = prune(node.input, needed);
      return { ...node, input, schema: input.schema };
    }
    case "distinct": {
      // Which row a key keeps depends only on the keys: other unused columns can go.
      const input = prune(node.input, new Set([...needed, ...node.keys]));
      return { ...node, input, schema: input.schema };
    }
    case "topK": {
      const below = new Set([...needed, node.by]);
      for (const k of node.keys) columnsOf(k.expr, below);
      const input = prune(node.input, below);
      const keyNames = new Set(node.keys.map((k) => k.name));
      return {
        ...node,
        input,
        schema: [
          ...node.schema.filter((f) => keyNames.has(f.name)),
          ...input.schema.filter((f) => !keyNames.has(f.name)),
        ],
      };
    }
    case "stack": {
      const below = new Set<string>();
      for (const block of node.blocks) for (const e of block) columnsOf(e.expr, below);
      return { ...node, input: prune(node.input, below) };
    }
    case "union": {
      // Every input must keep exactly the same columns, in the same order.
      const kept = node.schema.filter((f) => needed.has(f.name));
      const schema = kept.length > 0 ? kept : node.schema.slice(0, 1);
      const names = new Set(schema.map((f) => f.name));
      const inputs = node.inputs.map((i): PlanNode => {
        const input = prune(i, names);
        if (input.schema.length === schema.length && input.schema.every((f, j) => f.name === schema[j].name))
          return input;
        return {
          kind: "project",
          input,
          exprs: schema.map((f) => ({ name: f.name, expr: { kind: "col", name: f.name } })),
          schema,
          loc: node.loc,
        };
      });
      return { ...node, inputs, schema };
    }
  }
}

function run(plan: PlanNode): PlanNode {
  const root = shareSubplans(plan);
  const all = new Set(root.schema.map((f) => f.name));
  sharing = { counts: parentCounts(root), needs: new Map(), grew: true, pruned: null };
  try {
    // Each round can only grow the needs, so this ends; a handful of rounds suffice.
    for (let round = 0; sharing.grew && round < 50; round++) {
      sharing.grew = false;
      prune(root, all);
    }
    sharing.pruned = new Map();
    const out = prune(root, all);
    // A shared node may carry more columns than this root reads, up through filters and sorts.
    const same = out.schema.length === root.schema.length && out.schema.every((f, i) => f.name === root.schema[i].name);
    return same
      ? out
      : {
          kind: "project",
          input: out,
          exprs: root.schema.map((f) => ({ name: f.name, expr: { kind: "col", name: f.name } })),
          schema: root.schema,
          loc: root.loc,
        };
  } finally {
    sharing = null;
  }
}

export const projectionPushdown: OptimizerPass = { name: "projectionPushdown", run };
