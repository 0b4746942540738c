// Sorting on the GPU by several keys of any type, as ops/sort.cc orders rows: LSD over
// the keys (the last key first), each pass a stable sort of the current permutation by
// one key. A fixed-width key is a radix sort of order-preserving unsigned keys (as the
// CPU's SortOrderKey: -0 == 0, NaN above every number; inverted for descending), then
// of a one-bit null class; a string key is a stable merge sort on its first 8 bytes
// that compares the rest of the bytes only on a tie. The permutation stays on the
// device, so the caller gathers the rows there.
#pragma once
#include <vector>

#include "cuda/device_table.cuh"
#include "ops/sort.h"

namespace basin {
namespace gpu {

// The stable sorting permutation of t's rows by keys, as t's logical rows (int32, one
// per row; a buffer of at least one entry even for no rows).
DBuf SortRows(DTable& t, const std::vector<SortKey>& keys);

}  // namespace gpu
}  // namespace basin
