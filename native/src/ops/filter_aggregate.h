// A filter, projections and a group-by run as one step (engine/workers/run_steps.ts
// fuses them). When the filter keeps most rows, cutting every column to the kept rows
// costs more than it saves: TPC-H Q1 keeps 98% of lineitem, and its cut wrote 6 GB of
// fresh memory a run at SF 10. Then the projections run over every row and the group-by
// leaves the filtered-out rows out; otherwise the rows are cut first, as the steps would.
#pragma once
#include <string>
#include <vector>

#include "ops/expr.h"
#include "ops/groupby.h"
#include "store/column.h"

namespace basin {

struct Projection {
  std::vector<Expr> exprs;
  std::vector<std::string> names;
};

// GroupByAgg of Filter(t, predicate) projected by each of `projections` in turn, without
// cutting the rows when the filter keeps at least three quarters of them. The caller
// passes only projections that cannot fail on a row the filter drops (no strict cast,
// no function): they may be evaluated on every row.
TablePtr FilterAggregate(const Table& t, const Expr& predicate, const std::vector<Projection>& projections,
                         const std::vector<int>& keys, const std::vector<AggSpec>& aggs, AggMode mode);

}  // namespace basin
