// A group-by over few groups in one pass over the rows: each row finds its key's slot in
// a small hash table (it stays in L2) and adds into the block's own accumulators in
// shared memory, flushed once per block; no per-row group id is written, so the rows'
// columns are read once and nothing per row is written back (q1 of the db-benchmark:
// 100 groups over 1e8 rows). Count, sum, mean, min and max only.
#pragma once
#include <vector>

#include "cuda/device_table.cuh"
#include "ops/groupby.h"

namespace basin {
namespace gpu {

// GroupByAgg (mode Full or Partial) of t when every aggregate is additive and the keys
// make at most a thousand groups: the same columns, names and order as Aggregate's.
// Null when it does not apply (the caller then groups the general way).
TablePtr FewGroupsAggregate(DTable& t, const std::vector<int>& keys, const std::vector<AggSpec>& aggs, AggMode mode);

}  // namespace gpu
}  // namespace basin
