#include "ops/filter_aggregate.h"

#include <cstdint>

namespace basin {

TablePtr FilterAggregate(const Table& t, const Expr& predicate, const std::vector<Projection>& projections,
                         const std::vector<int>& keys, const std::vector<AggSpec>& aggs, AggMode mode) {
  const Column mask = Evaluate(predicate, t);
  std::vector<uint8_t> keep = TrueRows(mask);
  int64_t kept = 0;
  for (uint8_t k : keep) kept += k;
  const bool cut = kept * 4 < t.rows * 3;
  TablePtr rows = cut ? FilterByMask(t, mask) : nullptr;
  for (const Projection& p : projections) rows = EvalExprs(rows ? *rows : t, p.exprs, p.names);
  return GroupByAgg(rows ? *rows : t, keys, aggs, mode, cut || kept == t.rows ? nullptr : keep.data());
}

}  // namespace basin
