// Row-level kernels: distinct rows, per-group top-k, sampling keys (no N-API here).
#pragma once
#include <cstdint>
#include <vector>

#include "store/column.h"

namespace basin {

// The first row of every distinct combination of `keys` (null equals null), every
// column, in order of first appearance.
TablePtr DistinctRows(const Table& t, const std::vector<int>& keys);

// Per group of `keys` (one group when empty): the k rows with the largest (descending)
// or smallest non-null values of `column`, ties broken by row order. Groups come in
// order of first appearance, each group's rows best first. Columns as in t.
TablePtr TopKRows(const Table& t, const std::vector<int>& keys, int column, int64_t k, bool descending);

// t plus two columns: "__sample_key", float64 uniform in [0, 1) from (seed, part, row),
// and "__sample_pos", int64 part * 2^40 + row (frame order across parts).
TablePtr SampleKeys(const Table& t, uint64_t seed, int64_t part);

}  // namespace basin
