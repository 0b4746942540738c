#include "ops/filter_aggregate.h"

#include <cstdint>

namespace basin {

TablePtr FilterAggregate(const Table& t, const Expr& predicate, const std::vector<Projection>& projections,
                         const std::vector<int>& keys, const std::vector<AggSpec>& aggs, AggMode mode) {
  const std::vector<uint8_t> keep = TrueRows(Evaluate(predicate, t));
  int64_t kept = 0;
  for (uint8_t k : keep) kept += k;
  const bool cut = kept * 4 < t.rows * 3;
  TablePtr rows = cut ? FilterByKeep(t, keep) : nullptr;
  for (const Projection& p : projections) rows = EvalExprs(rows ? *rows : t, p.exprs, p.names);
  return GroupByAgg(rows ? *rows : t, keys, aggs, mode, cut || kept == t.rows ? nullptr : keep.data());
}

}  // namespace basin
