// Sorting and range partitioning of tables (ORDER BY semantics as DuckDB's).
//
// Per key: ascending or descending, nulls first or last (independent of direction).
// Strings compare by UTF-8 bytes; floats with -0.0 == 0.0 and NaN after every number
// (NaN == NaN); bools false < true; dates and timestamps numerically. Sorts are stable.
#pragma once
#include <cstdint>
#include <vector>

#include "store/column.h"

namespace basin {

struct SortKey {
  int column = 0;
  bool descending = false;
  bool nullsFirst = false;
};

// An unsigned key that orders non-null values of a fixed-width column (not strings)
// ascending in ORDER BY order: -0.0 == 0.0, NaN above every number.
uint64_t SortOrderKey(const Column& c, int64_t i);
// The stable sorting permutation of t's rows by keys (row indices into t).
std::vector<int64_t> SortIndices(const Table& t, const std::vector<SortKey>& keys);
// Rows idx[0..n) of t, every column (the output of a sorting permutation).
TablePtr GatherRows(const Table& t, const int64_t* idx, int64_t n);
// t with every column gathered in sorted order.
TablePtr SortTable(const Table& t, const std::vector<SortKey>& keys);
// Up to parts - 1 distinct boundary rows (key columns only, in key order) at evenly
// spaced quantiles of t sorted by keys; none equals the largest row.
TablePtr SortBoundaries(const Table& t, const std::vector<SortKey>& keys, int parts);
// bounds.rows + 1 tables: part i holds the rows r with bounds[i-1] < r <= bounds[i] in
// sort order (bounds' column k compares with t's column keys[k]); input order is kept.
std::vector<TablePtr> RangePartition(const Table& t, const std::vector<SortKey>& keys, const Table& bounds);

}  // namespace basin
