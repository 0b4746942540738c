// The plan resolved once, after optimizing: each node that computes something gets a
// `native` field with its expressions and column references as the kernels take
// them (column indices, every node typed). Lowering and the Dask bridge both read
// this one resolution and never resolve expressions themselves. (Building a plan
// checks the same expressions with the same resolver, so whatever was accepted then
// resolves here.) Field names never reuse "exprs", "keys", "aggs" or "predicate" with
// another shape: resources/dask_bridge reads those four.
import type { AggOp } from "../common/expr.js";
import { BasinError } from "../common/errors.js";
import { childrenOf, withChildren, type PlanNode } from "../common/plan.js";
import type { Field } from "../common/types.js";
import type { JoinSpec, NativeExpr, SortKey } from "../graph/kernel_args.js";
import { aggParts, fieldIndex, resolveExpr, resolveWindow, scannedFields, type ResolvedWindow } from "./resolve.js";

/** A named resolved expression. */
export interface NamedNative {
  name: string;
  expr: NativeExpr;
}

/** An aggregation: its operation and resolved inputs (null for count()). */
export interface ResolvedAgg {
  name: string;
  op: AggOp;
  arg: NativeExpr | null;
  /** corr: the second input. */
  arg2?: NativeExpr;
  /** quantile: q. */
  q?: number;
}

/** What each kind of node resolves to. */
export interface NativeOf {
  /** The file's columns read, by index in file order; the predicate over them. */
  scanCsv: { columns: number[]; predicate?: NativeExpr };
  scanFile: { columns: Field[]; predicate?: NativeExpr };
  filter: { predicate: NativeExpr };
  project: { exprs: NamedNative[] };
  aggregate: { keys: NamedNative[]; aggs: ResolvedAgg[] };
  sort: { order: SortKey[] };
  join: { spec: JoinSpec };
  window: { windows: ResolvedWindow[] };
  distinct: { columns: number[] };
  topK: { keys: NamedNative[] };
  stack: { blocks: NativeExpr[][] };
}

type Kind = keyof NativeOf;
type NodeOf<K extends PlanNode["kind"]> = Extract<PlanNode, { kind: K }>;

/** A plan node after resolvePlan: its children are resolved too. */
export type ResolvedNode = PlanNode & { native?: NativeOf[Kind] };

function nativeFor(node: PlanNode): NativeOf[Kind] | undefined {
  const loc = node.loc;
  switch (node.kind) {
    case "scanCsv": {
      const names = node.fileSchema.map((f) => f.name);
      const columns = (node.columns ?? names).map((n) => names.indexOf(n));
      const scanned = columns.map((i) => node.fileSchema[i]);
      return { columns, ...(node.predicate ? { predicate: resolveExpr(node.predicate, scanned, loc) } : {}) };
    }
    case "scanFile": {
      const columns = scannedFields(node);
      return { columns, ...(node.predicate ? { predicate: resolveExpr(node.predicate, columns, loc) } : {}) };
    }
    case "filter":
      return { predicate: resolveExpr(node.predicate, node.input.schema, loc) };
    case "project":
      return { exprs: node.exprs.map((e) => ({ name: e.name, expr: resolveExpr(e.expr, node.input.schema, loc) })) };
    case "aggregate": {
      const input = node.input.schema;
      const keys = node.keys.map((k) => ({ name: k.name, expr: resolveExpr(k.expr, input, loc) }));
      const aggs = node.aggs.map((a): ResolvedAgg => {
        const p = aggParts(a.expr, a.name, input, loc);
        return {
          name: p.name,
          op: p.op,
          arg: p.arg ? resolveExpr(p.arg, input, loc) : null,
          ...(p.arg2 ? { arg2: resolveExpr(p.arg2, input, loc) } : {}),
          ...(p.q !== undefined ? { q: p.q } : {}),
        };
      });
      return { keys, aggs };
    }
    case "sort":
      return {
        order: node.keys.map((k) => ({
          column: fieldIndex(node.input.schema, k.name),
          descending: k.descending,
          nullsFirst: k.nullsFirst,
        })),
      };
    case "join": {
      const L = node.left.schema,
        R = node.right.schema;
      return {
        spec: {
          how: node.how,
          leftKeys: node.leftOn.map((n) => fieldIndex(L, n)),
          rightKeys: node.rightOn.map((n) => fieldIndex(R, n)),
          output: node.output.map((o) =>
            o.side === "key"
              ? { side: "key", column: o.source, name: o.name }
              : { side: o.side, column: fieldIndex(o.side === "left" ? L : R, o.source), name: o.name },
          ),
        },
      };
    }
    case "window":
      return { windows: node.windows.map((w) => resolveWindow(w.expr, node.input.schema, loc)) };
    case "distinct":
      return { columns: node.keys.map((k) => fieldIndex(node.input.schema, k, loc)) };
    case "topK":
      return { keys: node.keys.map((k) => ({ name: k.name, expr: resolveExpr(k.expr, node.input.schema, loc) })) };
    case "stack":
      return { blocks: node.blocks.map((block) => block.map((e) => resolveExpr(e.expr, node.input.schema, loc))) };
    default:
      return undefined;
  }
}

/**
 * The optimized plan with every node resolved (a copy; the input is not changed).
 *
 * @example
 * const root = resolvePlan(optimize(df.toPlan().root));
 * nativeOf(root as Extract<PlanNode, { kind: "filter" }>).predicate
 */
export function resolvePlan(root: PlanNode, done = new Map<PlanNode, ResolvedNode>()): ResolvedNode {
  // A shared subplan stays shared (lowering computes it once).
  const seen = done.get(root);
  if (seen) return seen;
  const withKids = withChildren(
    root,
    childrenOf(root).map((c) => resolvePlan(c, done)),
  );
  const native = nativeFor(root);
  const out = native ? { ...withKids, native } : withKids;
  done.set(root, out);
  return out;
}

/**
 * A resolved node's native form; a node resolvePlan did not produce is a bug of the caller.
 *
 * @example
 * const { predicate } = nativeOf(node); // node: a resolved "filter"
 */
export function nativeOf<K extends Kind>(node: NodeOf<K>): NativeOf[K] {
  const resolved = node as ResolvedNode;
  if (!resolved.native)
    throw new BasinError(
      "BASIN_INTERNAL",
      `a ${resolved.kind} node reached lowering unresolved; lower what resolvePlan returns`,
    );
  const native = resolved.native;
  return native as NativeOf[K];
}
