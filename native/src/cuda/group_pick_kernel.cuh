// Aggregates that pick a row or count distinct values per group, on the GPU: first and
// last (each group's smallest / largest row holding a value, by atomics), min and max of
// strings and nunique of any type (the valid rows sorted by group, then value: a group's
// run gives its extremes at its ends and its distinct values at the starts of runs of
// equal values). Results match the CPU's AppendAgg (ops/groupby.cc).
#pragma once
#include "cuda/device_table.cuh"
#include "ops/groupby.h"

namespace basin {
namespace gpu {

// Whether aggregate a over a column of type `input` is one this file computes.
bool PickAggOnGpu(const AggSpec& a, DType input);

// Appends aggregate a (PickAggOnGpu) of t's rows grouped by `gid` (int32 per logical row,
// `groups` groups) to `out` as the CPU's AppendAgg lays it out in `mode` (Full or
// Partial; nunique is not decomposable and refuses Partial, as the CPU does).
void AppendPickAgg(Table& out, DTable& t, const DBuf& gid, int64_t groups, const AggSpec& a, AggMode mode);

}  // namespace gpu
}  // namespace basin
