// Skips Parquet row groups that cannot hold a matching row: the scan's pushed-down
// predicate is checked against each row group's min/max/null-count statistics
// (simple `col op literal` comparisons under and/or; anything else keeps the group).
// Runs after predicate and projection pushdown, on the predicate the scan ended with.
// The same statistics tell which integer columns are clustered: each value in one
// row group, so in one scan partition (lower/lower.ts then aggregates by them in place).
import { BasinError } from "../../common/errors.js";
import { childrenOf, withChildren, type PlanNode } from "../../common/plan.js";
import { readParquetFooter } from "../../io/parquet_footer.js";
import { clustered, mayMatch } from "../../io/parquet_stats.js";
import { resolveExpr, scannedFields } from "../resolve.js";
import type { OptimizerPass } from "./pass.js";

function prune(node: Extract<PlanNode, { kind: "scanFile" }>): PlanNode {
  const names = node.columns ?? node.fileSchema.map((f) => f.name);
  const predicate = node.predicate ? resolveExpr(node.predicate, scannedFields(node), node.loc) : undefined;
  let total = 0;
  const footers = node.files.map((path) => {
    try {
      return readParquetFooter(path);
    } catch (e) {
      throw BasinError.from(e, node.loc);
    }
  });
  const kept = footers.map((footer) => {
    total += footer.rowGroups.length;
    const all = footer.rowGroups.map((_, i) => i);
    const fileIndex = names.map((n) => footer.columns.findIndex((c) => c.name === n));
    if (!predicate || fileIndex.some((i) => i < 0)) return all;
    return all.filter((g) => mayMatch(predicate, footer.rowGroups[g], footer.columns, fileIndex));
  });
  const key = new Set(["int64", "date"]);
  const sorted = names.filter(
    (n) => key.has(node.schema.find((f) => f.name === n)?.type ?? "") && clustered(footers, kept, n),
  );
  return { ...node, rowGroups: sorted.length > 0 ? { kept, total, clustered: sorted } : { kept, total } };
}

function run(node: PlanNode): PlanNode {
  const n = withChildren(node, childrenOf(node).map(run));
  return n.kind === "scanFile" && n.format === "parquet" ? prune(n) : n;
}

export const rowGroupPruning: OptimizerPass = { name: "rowGroupPruning", run };
