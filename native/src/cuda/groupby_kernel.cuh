// Hash group-by on the GPU: group ids by an open-addressing hash table built with
// atomics (null equals null, floats by their canonical value, strings by bytes),
// renumbered in order of first appearance (as the CPU kernels number them), and
// sum / count / mean / min / max / var / std accumulated per group with atomics.
// Other aggregates (median, quantile, nunique, corr, first, last, string min/max) are
// computed by the CPU kernels over the group ids the GPU made.
#pragma once
#include <vector>

#include "cuda/device_table.cuh"
#include "ops/groupby.h"

namespace basin {
namespace gpu {

// Whether aggregate a over a column of type `input` is accumulated on the GPU.
bool AggOnGpu(const AggSpec& a, DType input);

// GroupByAgg (mode Full or Partial) of t: the same columns, names and order.
TablePtr Aggregate(DTable& t, const std::vector<int>& keys, const std::vector<AggSpec>& aggs, AggMode mode);

}  // namespace gpu
}  // namespace basin
