// Cardinality estimates for the planner: how many rows a plan node yields and how
// many distinct values a column of it holds. Parquet footers give exact row counts
// and per-column min/max (a range bounds the distinct integers, and places a
// comparison's constant within it); the rest is the textbook: filters multiply
// selectivities, an equi-join yields |L|·|R| / max(ndv(l), ndv(r)). Estimates order
// joins and pick build sides; they never change an answer.
import { statSync } from "node:fs";
import type { NativeExpr } from "../graph/kernel_args.js";
import type { PlanNode } from "../common/plan.js";
import type { Field } from "../common/types.js";
import { readParquetFooter, type ParquetFooter } from "../io/parquet_footer.js";
import { numericRange } from "../io/parquet_stats.js";
import { resolveExpr, scannedFields } from "./resolve.js";
import { own } from "../common/own.js";

/** What the estimates know of one column: its distinct values (when bounded) and range. */
interface ColumnFacts {
  ndv?: number;
  min?: number;
  max?: number;
}

/** Selectivity of a predicate nothing is known about, and of a string match (DuckDB's 0.2). */
const DEFAULT_SELECTIVITY = 0.2;
const RANGE_SELECTIVITY = 1 / 3;
const EQ_SELECTIVITY = 0.1;
/** Bytes per field of a text file, for row counts of CSV and JSON files. */
const TEXT_BYTES_PER_FIELD = 8;

/**
 * Estimates over one plan (memoized per node object).
 *
 * @example
 * const e = new Estimator();
 * e.rows(plan)          // 227_000
 * e.ndv(plan, "o_custkey") // 99_996
 */
export class Estimator {
  private readonly rowMemo = new Map<PlanNode, number>();
  private readonly factMemo = new Map<PlanNode, Map<string, ColumnFacts>>();

  /** Rows `node` yields (at least 1). */
  rows(node: PlanNode): number {
    let r = this.rowMemo.get(node);
    if (r === undefined) {
      r = Math.max(1, this.rowsOf(node));
      this.rowMemo.set(node, r);
    }
    return r;
  }

  /** Distinct values of `column` in `node`'s output (at most its rows). */
  ndv(node: PlanNode, column: string): number {
    return Math.max(1, Math.min(this.rows(node), this.facts(node, column).ndv ?? Infinity));
  }

  /** Whether the distinct values of `column` are bounded by statistics (not just by rows). */
  knowsDistinct(node: PlanNode, column: string): boolean {
    return this.facts(node, column).ndv !== undefined;
  }

  /** Estimated rows of an inner equi-join of `left` and `right` on key pairs. */
  joinRows(left: PlanNode, right: PlanNode, leftOn: readonly string[], rightOn: readonly string[]): number {
    let div = 1;
    leftOn.forEach((l, i) => {
      div = Math.max(div, this.ndv(left, l), this.ndv(right, rightOn[i]));
    });
    return Math.max(1, (this.rows(left) * this.rows(right)) / div);
  }

  private rowsOf(node: PlanNode): number {
    switch (node.kind) {
      case "scanFile":
      case "scanCsv": {
        const base = this.baseRows(node);
        return node.predicate ? base * this.selectivity(node.predicate, node) : base;
      }
      case "values":
        return node.partitions.reduce((n, p) => n + (Object.values(p)[0]?.length ?? 0), 0);
      case "stored":
        return node.bytes / (8 * Math.max(1, node.schema.length));
      case "fromBag":
        return 1e6;
      case "filter":
        return this.rows(node.input) * this.selectivity(node.predicate, node.input);
      case "aggregate": {
        if (node.keys.length === 0) return 1;
        const input = this.rows(node.input);
        let groups = 1;
        for (const k of node.keys)
          groups *= k.expr.kind === "col" ? this.ndv(node.input, k.expr.name) : Math.sqrt(input);
        return Math.min(input, groups);
      }
      case "distinct": {
        const input = this.rows(node.input);
        return Math.min(
          input,
          node.keys.reduce((g, k) => g * this.ndv(node.input, k), 1),
        );
      }
      case "head":
      case "tail":
        return Math.min(node.n, this.rows(node.input));
      case "topK":
        return Math.min(
          this.rows(node.input),
          node.k * (node.keys.length === 0 ? 1 : Math.sqrt(this.rows(node.input))),
        );
      case "union":
        return node.inputs.reduce((n, i) => n + this.rows(i), 0);
      case "stack":
        return this.rows(node.input) * node.blocks.length;
      case "join": {
        const l = this.rows(node.left),
          r = this.rows(node.right);
        const inner = this.joinRows(node.left, node.right, node.leftOn, node.rightOn);
        switch (node.how) {
          case "inner":
            return inner;
          case "left":
            return Math.max(inner, l);
          case "right":
            return Math.max(inner, r);
          case "outer":
            return Math.max(inner, l + r);
          case "semi":
          case "anti": {
            let kept = 1;
            node.leftOn.forEach((k, i) => {
              kept = Math.min(kept, this.ndv(node.right, node.rightOn[i]) / this.ndv(node.left, k));
            });
            return node.how === "semi" ? l * kept : l * (1 - kept);
          }
        }
        return inner;
      }
      case "sample":
        return this.rows(node.input) * ("fraction" in node && typeof node.fraction === "number" ? node.fraction : 1);
      default:
        return "input" in node ? this.rows(node.input) : 1e6;
    }
  }

  /** Rows of a file scan before its predicate. */
  private baseRows(node: PlanNode & { kind: "scanFile" | "scanCsv" }): number {
    if (node.kind === "scanFile" && node.format === "parquet") {
      let rows = 0;
      node.files.forEach((f, i) => {
        const footer = footerOf(f);
        const kept = node.rowGroups?.kept[i];
        rows += footer ? (kept ? kept.reduce((n, g) => n + (footer.rowGroups[g]?.rows ?? 0), 0) : footer.rows) : 1e6;
      });
      return rows;
    }
    const bytes = node.files.reduce((n, f) => n + (statSync(f, { throwIfNoEntry: false })?.size ?? 0), 0);
    return bytes / (TEXT_BYTES_PER_FIELD * Math.max(1, node.fileSchema.length));
  }

  /** What is known of `column` in `node`'s output, traced back to a file's statistics. */
  private facts(node: PlanNode, column: string): ColumnFacts {
    let memo = this.factMemo.get(node);
    if (!memo) this.factMemo.set(node, (memo = new Map()));
    let f = memo.get(column);
    if (!f) {
      f = this.factsOf(node, column);
      memo.set(column, f);
    }
    return f;
  }

  private factsOf(node: PlanNode, column: string): ColumnFacts {
    switch (node.kind) {
      case "scanFile": {
        if (node.format !== "parquet") return {};
        let ndv = 0,
          min = Infinity,
          max = -Infinity;
        for (const [i, f] of node.files.entries()) {
          const footer = footerOf(f);
          const index = footer ? footer.columns.findIndex((c) => c.name === column) : -1;
          const range = footer && index >= 0 ? numericRange(footer, index, node.rowGroups?.kept[i]) : undefined;
          if (!footer || !range) return {};
          const integral = footer.columns[index].stat !== "float";
          ndv += integral ? range.max - range.min + 1 : footer.rows;
          min = Math.min(min, range.min);
          max = Math.max(max, range.max);
        }
        return { ndv, min, max };
      }
      case "values": {
        const type = node.schema.find((f) => f.name === column)?.type;
        if (type !== "int64" && type !== "float64") return {};
        let min = Infinity,
          max = -Infinity;
        for (const p of node.partitions)
          for (const v of own(p, column) ?? [])
            if (typeof v === "number") ((min = Math.min(min, v)), (max = Math.max(max, v)));
        if (!(min <= max)) return {};
        return { ...(type === "int64" ? { ndv: max - min + 1 } : {}), min, max };
      }
      case "stored": {
        const r = own(node.ranges, column);
        if (!r) return {};
        const integral = node.schema.find((f) => f.name === column)?.type !== "float64";
        return { ...(integral ? { ndv: r.max - r.min + 1 } : {}), min: r.min, max: r.max };
      }
      case "project": {
        const e = node.exprs.find((x) => x.name === column)?.expr;
        return e?.kind === "col" ? this.facts(node.input, e.name) : {};
      }
      case "aggregate": {
        const k = node.keys.find((x) => x.name === column)?.expr;
        return k?.kind === "col" ? this.facts(node.input, k.name) : {};
      }
      case "join": {
        const o = node.output.find((x) => x.name === column);
        if (!o) return {};
        if (o.side === "key") return this.facts(node.left, node.leftOn[o.source]);
        return this.facts(o.side === "left" ? node.left : node.right, o.source);
      }
      case "union":
        return {};
      default:
        return "input" in node && node.input.schema.some((f) => f.name === column)
          ? this.facts(node.input, column)
          : {};
    }
  }

  /** The fraction of `input`'s rows for which `predicate` (over its columns) is true. */
  private selectivity(predicate: Parameters<typeof resolveExpr>[0], input: PlanNode): number {
    let schema: Field[];
    let e: NativeExpr;
    try {
      schema = input.kind === "scanFile" || input.kind === "scanCsv" ? scannedFields(input) : input.schema;
      e = resolveExpr(predicate, schema);
    } catch {
      return DEFAULT_SELECTIVITY;
    }
    return clamp(this.exprSelectivity(e, schema, input));
  }

  private exprSelectivity(e: NativeExpr, schema: Field[], input: PlanNode): number {
    const facts = (c: NativeExpr) => (c.kind === "col" ? this.facts(input, schema[c.index].name) : {});
    const ndv = (c: NativeExpr) => (c.kind === "col" ? this.facts(input, schema[c.index].name).ndv : undefined);
    if (e.kind === "unary") {
      if (e.op === "not") return 1 - this.exprSelectivity(e.arg, schema, input);
      if (e.op === "isNull") return 0.05;
      if (e.op === "isNotNull") return 0.95;
      return DEFAULT_SELECTIVITY;
    }
    if (e.kind === "fn") {
      if (e.name === "isIn") {
        const values = Object.values(e.options).find(Array.isArray);
        const n = ndv(e.args[0]);
        const k = Array.isArray(values) ? values.length : 3;
        return n ? k / n : k * EQ_SELECTIVITY;
      }
      return DEFAULT_SELECTIVITY;
    }
    if (e.kind !== "binary") return DEFAULT_SELECTIVITY;
    if (e.op === "and") {
      const ranges = rangeConjunction(e, (c) => facts(c));
      if (ranges !== undefined) return ranges;
      return this.exprSelectivity(e.left, schema, input) * this.exprSelectivity(e.right, schema, input);
    }
    if (e.op === "or") {
      const a = this.exprSelectivity(e.left, schema, input),
        b = this.exprSelectivity(e.right, schema, input);
      return a + b - a * b;
    }
    const [c, lit] = e.left.kind === "col" ? [e.left, e.right] : [e.right, e.left];
    if (c.kind !== "col" || lit.kind !== "lit") return e.op === "eq" ? EQ_SELECTIVITY : RANGE_SELECTIVITY;
    if (e.op === "eq" || e.op === "ne") {
      const n = ndv(c);
      const eq = n ? 1 / n : EQ_SELECTIVITY;
      return e.op === "eq" ? eq : 1 - eq;
    }
    const r = rangeConjunction(e, (x) => facts(x));
    return r ?? RANGE_SELECTIVITY;
  }
}

/**
 * A conjunction of comparisons of one numeric column with constants, as the fraction
 * of the column's [min, max] they leave (uniform values assumed); undefined for
 * anything else.
 */
function rangeConjunction(e: NativeExpr, facts: (c: NativeExpr) => ColumnFacts): number | undefined {
  let index = -1;
  let lo = -Infinity,
    hi = Infinity;
  let col: NativeExpr | undefined;
  const visit = (x: NativeExpr): boolean => {
    if (x.kind !== "binary") return false;
    if (x.op === "and") return visit(x.left) && visit(x.right);
    const flip = x.left.kind !== "col";
    const c = flip ? x.right : x.left,
      l = flip ? x.left : x.right;
    if (c.kind !== "col" || l.kind !== "lit" || typeof l.value !== "number") return false;
    if (index >= 0 && c.index !== index) return false;
    index = c.index;
    col = c;
    const op = flip ? ({ lt: "gt", le: "ge", gt: "lt", ge: "le" } as const)[x.op as "lt"] : x.op;
    if (op === "lt" || op === "le") hi = Math.min(hi, l.value);
    else if (op === "gt" || op === "ge") lo = Math.max(lo, l.value);
    else return false;
    return true;
  };
  if (!visit(e) || !col) return undefined;
  const f = facts(col);
  if (f.min === undefined || f.max === undefined) return undefined;
  const width = f.max - f.min || 1;
  const from = Math.max(lo, f.min),
    to = Math.min(hi, f.max);
  return to < from ? 0 : (to - from) / width;
}

function clamp(s: number): number {
  return Number.isFinite(s) ? Math.min(1, Math.max(1e-6, s)) : DEFAULT_SELECTIVITY;
}

function footerOf(path: string): ParquetFooter | undefined {
  try {
    return readParquetFooter(path);
  } catch {
    return undefined;
  }
}
