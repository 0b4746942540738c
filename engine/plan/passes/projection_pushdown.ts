// Reads only the columns the plan uses: unused projections are dropped and the
// CSV scan materializes just the needed columns (plus those its predicate reads).
import { columnsOf } from "../../common/expr.js";
import type { PlanNode } from "../../common/plan.js";
import type { OptimizerPass } from "../optimizer.js";

function prune(node: PlanNode, needed: Set<string>): PlanNode {
  switch (node.kind) {
    case "scanCsv":
    case "scanFile": {
      const read = new Set(needed);
      if (node.predicate) columnsOf(node.predicate, read);
      const fields = node.fileSchema.filter((f) => read.has(f.name));
      // Keep at least one column so that row counts survive (e.g. count(*)).
      const kept = fields.length > 0 ? fields : node.fileSchema.slice(0, 1);
      return { ...node, columns: kept.map((f) => f.name), schema: kept };
    }
    case "values":
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
      const side = (s: "left" | "right", on: string[]) => new Set([...on, ...kept.flatMap((o) => (o.side === s ? [o.source] : []))]);
      const left = prune(node.left, side("left", node.leftOn));
      const right = prune(node.right, side("right", node.rightOn));
      return { ...node, left, right, output: kept, schema: node.schema.filter((f) => kept.some((o) => o.name === f.name)) };
    }
    case "aggregate": {
      const below = new Set<string>();
      for (const e of [...node.keys, ...node.aggs]) columnsOf(e.expr, below);
      return { ...node, input: prune(node.input, below) };
    }
  }
}

function run(node: PlanNode): PlanNode {
  return prune(node, new Set(node.schema.map((f) => f.name)));
}

export const projectionPushdown: OptimizerPass = { name: "projectionPushdown", run };
