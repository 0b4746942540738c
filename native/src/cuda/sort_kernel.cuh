// Sorting on the GPU: each row's key as an unsigned order-preserving value (as the CPU's
// SortOrderKey: -0 == 0, NaN above every number; inverted for descending), the non-null
// rows stably radix-sorted with their row numbers, the null rows before or after them
// in input order. The permutation comes back; the host gathers the rows.
#pragma once
#include <vector>

#include "cuda/device_table.cuh"
#include "ops/sort.h"

namespace basin {
namespace gpu {

// The stable sorting permutation of t's rows by one fixed-width key.
std::vector<int64_t> SortPermutation(DTable& t, const SortKey& key);

}  // namespace gpu
}  // namespace basin
