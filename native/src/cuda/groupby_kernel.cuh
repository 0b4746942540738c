// Hash group-by on the GPU. Few groups of additive aggregates: one pass
// (few_groups_kernel.cuh). Otherwise group ids by an open-addressing hash table built
// with atomics (null equals null, floats by their canonical value, strings by bytes;
// a small table first, one of twice the rows when more keys come), numbered in order
// of first appearance (as the CPU kernels number them), and
// sum / count / mean / min / max / var / std / corr accumulated per group with atomics,
// median and quantile over each group's values sorted on the device; first, last,
// nunique and string min/max in group_pick_kernel.cuh. Any other aggregate is computed
// by the CPU kernels over the group ids the GPU made.
#pragma once
#include <vector>

#include "cuda/device_table.cuh"
#include "ops/groupby.h"

namespace basin {
namespace gpu {

// Rows a partition may have to be grouped on the GPU: its hash table's 2 × rows slots
// are numbered in int32.
constexpr int64_t kMaxGroupedRows = int64_t(1) << 30;

// Whether aggregate a over a column of type `input` (and `input2`: corr's second) is
// computed on the GPU.
bool AggOnGpu(const AggSpec& a, DType input, DType input2 = DType::String);

// GroupByAgg (mode Full or Partial) of t: the same columns, names and order.
TablePtr Aggregate(DTable& t, const std::vector<int>& keys, const std::vector<AggSpec>& aggs, AggMode mode);

// Top-k rows per group (the CPU's TopKRows): the logical row numbers (int32) kept, each
// group's in rank order, groups in order of first appearance; `count` is how many.
DBuf TopKRows(DTable& t, const std::vector<int>& keys, int column, int64_t k, bool descending, int64_t& count);

}  // namespace gpu
}  // namespace basin
