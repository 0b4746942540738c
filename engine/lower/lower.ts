// Turns an optimized logical plan into a partitioned task graph. Narrow operations
// (scan, filter, project, partial aggregation) are fused into one task per
// partition; wide ones (aggregation, head) end those tasks and start new ones.
import { BasinError } from "../common/errors.js";
import { HOLISTIC_AGGS } from "../common/expr.js";
import type { PlanNode } from "../common/plan.js";
import type { Schema } from "../common/types.js";
import type { NativeAgg, NativeExpr } from "../native/addon.js";
import { csvBlocks } from "./csv_blocks.js";
import { aggParts, resolveExpr } from "../plan/resolve.js";
import type { Dep, Step, Task, TaskGraph } from "./tasks.js";

/** Upper bound on output partitions of a shuffle. */
export const MAX_SHUFFLE_PARTS = 32;

/** A partition still being built: inputs plus steps not yet closed into a task. */
interface Chain {
  deps: Dep[];
  steps: Step[];
}

class GraphBuilder {
  readonly tasks: Task[] = [];
  private counter = 0;

  /** Closes a chain into a task and returns a reference to its outputs. */
  close(chain: Chain): string {
    const group = chain.steps.map((s) => s.kind).join("→");
    const key = `${group}-${this.counter++}`;
    this.tasks.push({ key, group, deps: chain.deps, steps: chain.steps });
    return key;
  }

  lower(node: PlanNode): Chain[] {
    switch (node.kind) {
      case "scanCsv": return this.scanCsv(node);
      case "values":
        return node.partitions.map((columns) => ({
          deps: [],
          steps: [{ kind: "values", schema: node.schema, columns, rows: columns[node.schema[0].name]?.length ?? 0, loc: node.loc }],
        }));
      case "filter": {
        const predicate = resolveExpr(node.predicate, node.input.schema, node.loc);
        return this.lower(node.input).map((c) => append(c, { kind: "filter", predicate, loc: node.loc }));
      }
      case "project": {
        const exprs = node.exprs.map((e) => resolveExpr(e.expr, node.input.schema, node.loc));
        const names = node.exprs.map((e) => e.name);
        return this.lower(node.input).map((c) => append(c, { kind: "project", exprs, names, loc: node.loc }));
      }
      case "head": {
        const deps = this.lower(node.input).map((c) => ({ key: this.close(append(c, { kind: "head", n: node.n, loc: node.loc })), index: 0 }));
        return [{ deps, steps: [{ kind: "concat" }, { kind: "head", n: node.n, loc: node.loc }] }];
      }
      case "aggregate": return this.aggregate(node);
    }
  }

  private scanCsv(node: Extract<PlanNode, { kind: "scanCsv" }>): Chain[] {
    const names = node.fileSchema.map((f) => f.name);
    const columns = (node.columns ?? names).map((n) => names.indexOf(n));
    const scanned: Schema = columns.map((i) => node.fileSchema[i]);
    const predicate = node.predicate ? resolveExpr(node.predicate, scanned, node.loc) : undefined;
    const chains: Chain[] = [];
    for (const path of node.files) {
      const csv = { delimiter: node.options.delimiter, header: node.options.header, nullValues: node.options.nullValues };
      let blocks;
      try {
        blocks = csvBlocks(path, node.options.blocksize, csv);
      } catch (e) {
        throw BasinError.from(e, node.loc);
      }
      for (const b of blocks) {
        const options = { ...csv, names, types: node.fileSchema.map((f) => f.type), columns, line: b.line, onBadLines: node.options.onBadLines };
        const steps: Step[] = [{ kind: "scanCsv", path, start: b.start, end: b.end, options, loc: node.loc }];
        if (predicate) steps.push({ kind: "filter", predicate, loc: node.loc });
        chains.push({ deps: [], steps });
      }
    }
    return chains;
  }

  private aggregate(node: Extract<PlanNode, { kind: "aggregate" }>): Chain[] {
    const input = node.input.schema;
    const parts = node.aggs.map((a) => aggParts(a.expr, a.name, input, node.loc));
    // Pre-project keys and aggregation inputs into plain columns.
    const exprs: NativeExpr[] = node.keys.map((k) => resolveExpr(k.expr, input, node.loc));
    const names = node.keys.map((k) => k.name);
    const aggs: NativeAgg[] = parts.map((p, i) => {
      if (!p.arg) return { op: p.op, column: -1, name: p.name };
      exprs.push(resolveExpr(p.arg, input, node.loc));
      names.push(`__agg${i}`);
      return { op: p.op, column: names.length - 1, name: p.name };
    });
    const keys = node.keys.map((_, i) => i);
    const pre: Step = { kind: "project", exprs, names, loc: node.loc };
    const chains = this.lower(node.input).map((c) => append(c, pre));
    const loc = node.loc;

    // Shuffle by key so that every group's rows (or partial states) meet in one
    // task, and the final aggregation runs in parallel, one task per bucket (like
    // Dask's split_out). Decomposable aggregations shrink each partition first.
    const holistic = parts.some((p) => HOLISTIC_AGGS.includes(p.op));
    const n = keys.length === 0 ? 1 : Math.min(chains.length, MAX_SHUFFLE_PARTS);
    const mapped = holistic ? chains : chains.map((c) => append(c, { kind: "aggregate", keys, aggs, mode: "partial", loc }));
    const shuffled = mapped.map((c) => this.close(n === 1 ? c : append(c, { kind: "hashPartition", keys, parts: n, loc })));
    return Array.from({ length: n }, (_, r) => ({
      deps: shuffled.map((key) => ({ key, index: n === 1 ? 0 : r })),
      steps: [{ kind: "concat" }, { kind: "aggregate", keys, aggs, mode: holistic ? "full" : "final", loc }],
    }));
  }
}

function append(c: Chain, step: Step): Chain {
  return { deps: c.deps, steps: [...c.steps, step] };
}

/**
 * Lowers an (optimized) plan to a task graph whose output task yields the whole result.
 *
 * @example
 * const graph = lowerPlan(optimize(df.node));
 */
export function lowerPlan(root: PlanNode): TaskGraph {
  const b = new GraphBuilder();
  const chains = b.lower(root);
  const last: { deps: Dep[]; steps: Step[] } =
    chains.length === 1 ? chains[0] : { deps: chains.map((c) => ({ key: b.close(c), index: 0 })), steps: [{ kind: "concat" }] };
  const output = b.close(last);
  return { tasks: b.tasks, output };
}

