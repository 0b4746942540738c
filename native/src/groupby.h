// Hash group-by and hash partitioning over native tables (no N-API here).
//
// State layout of the distributed plan ("partial" → "merge"* → "final"), per agg `name`:
//   sum, min, max, first, last: `name` (the input type; sum: int64 or float64), null
//                               when the group had no non-null value
//   count:                      `name` int64
//   mean:                       `name#sum` float64, `name#count` int64
//   var, std:                   `name#count` int64, `name#mean` float64, `name#m2` float64
//                               (merged with Chan's parallel formula)
//   corr (of column, column2):  `name#count` int64, `name#meanx`, `name#meany`, `name#m2x`,
//                               `name#m2y`, `name#cxy` float64 (co-moments over the rows
//                               where both values are non-null; Chan's formula to merge)
// median, quantile and nunique are not decomposable: only "full".
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "column.h"

namespace basin {

enum class AggOp { Sum, Mean, Min, Max, Count, Std, Var, Median, NUnique, First, Last, Quantile, Corr };
enum class AggMode { Full, Partial, Merge, Final };

AggOp AggOpFromName(const std::string& s);
AggMode AggModeFromName(const std::string& s);

struct AggSpec {
  AggOp op = AggOp::Count;
  int column = -1;  // input column; -1 with Count counts rows; ignored in Merge/Final
  std::string name;
  double param = 0;  // Quantile: the quantile q in [0, 1]
  int column2 = -1;  // Corr: the second input column
};

// Dense group ids in order of first appearance.
struct Grouping {
  int64_t groups = 0;
  std::vector<uint32_t> gid;       // per row
  std::vector<int64_t> firstRow;   // per group: its first row
};

// Groups the rows of t by key columns `keys` (null equals null). Keys [] → one group,
// even for zero rows.
Grouping ComputeGrouping(const Table& t, const std::vector<int>& keys);

// Key columns (named as in t), then the aggregates (Full/Final) or their states.
TablePtr GroupByAgg(const Table& t, const std::vector<int>& keys, const std::vector<AggSpec>& aggs, AggMode mode);

// Splits t into `parts` tables by the hash of `keys` (hash.h); row order kept per part.
std::vector<TablePtr> HashPartition(const Table& t, const std::vector<int>& keys, int parts);

}  // namespace basin
