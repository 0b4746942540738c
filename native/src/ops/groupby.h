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

#include "store/block_pool.h"
#include "store/column.h"

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
  PoolVector<uint32_t> gid;        // per row
  std::vector<int64_t> firstRow;   // per group: its first row
};

// Per-group (count, mean, M2) of one column: the var/std state.
struct Moments {
  std::vector<int64_t> n;
  std::vector<double> mean, m2;
};

// Per-group co-moments of (x, y) pairs (rows where both are non-null): the corr state.
struct CoMoments {
  std::vector<int64_t> n;
  std::vector<double> mx, my, m2x, m2y, cxy;
  explicit CoMoments(size_t G) : n(G, 0), mx(G, 0.0), my(G, 0.0), m2x(G, 0.0), m2y(G, 0.0), cxy(G, 0.0) {}
};

// Shifted sums of one pass, per group: the shift (kx, ky: the group's first pair), the
// sums of deviations from it (sx, sy) and of their squares and products (m2x, m2y, cxy).
struct ShiftedSums {
  std::vector<int64_t> n;
  std::vector<double> kx, ky, sx, sy, m2x, m2y, cxy;
};

// A column of per-group values; null where cnt[g] == 0 (cnt may be null: no nulls).
template <class T>
Column FixedColumn(DType type, const std::vector<T>& vals, const std::vector<int64_t>* cnt) {
  Column c;
  c.type = type;
  c.length = int64_t(vals.size());
  c.data = MakeBuffer(vals.size() * sizeof(T));
  if (!vals.empty()) std::memcpy(c.data->data(), vals.data(), vals.size() * sizeof(T));
  bool anyEmpty = false;
  if (cnt)
    for (int64_t n : *cnt) anyEmpty = anyEmpty || n == 0;
  if (anyEmpty) {
    c.validity = MakeBuffer(vals.size());
    uint8_t* v = c.validity->data();
    for (size_t g = 0; g < vals.size(); g++) v[g] = (*cnt)[g] != 0;
  }
  return c;
}

// Groups the rows of t by key columns `keys` (null equals null). Keys [] → one group,
// even for zero rows. With `keep` (a 0/1 byte per row), the rows it leaves out form one
// more group, the last.
Grouping ComputeGrouping(const Table& t, const std::vector<int>& keys, const uint8_t* keep = nullptr);

// Key columns (named as in t), then the aggregates (Full/Final) or their states; over
// the rows `keep` keeps (a 0/1 byte per row), when given.
TablePtr GroupByAgg(const Table& t, const std::vector<int>& keys, const std::vector<AggSpec>& aggs, AggMode mode,
                    const uint8_t* keep = nullptr);

// The pieces of GroupByAgg, for callers that group or accumulate elsewhere (the GPU):
// argument checks, rows per group, the key columns at each group's first row, one
// aggregate computed here, and the output of aggregates accumulated elsewhere (mean
// from sums and counts, var/std from moments), laid out as GroupByAgg lays them out.
void CheckAggs(const Table& t, const std::vector<AggSpec>& aggs, AggMode mode);
std::vector<int64_t> GroupRows(const Grouping& gr, int64_t rows);
std::shared_ptr<Table> KeyColumns(const Table& t, const std::vector<int>& keys, const Grouping& gr);
void AppendAgg(Table& out, const Table& t, const Grouping& gr, const std::vector<int64_t>& groupRows, const AggSpec& a, AggMode mode);
void AppendMean(Table& out, const std::string& name, std::vector<double> sum, const std::vector<int64_t>& cnt, bool emitState);
void AppendMoments(Table& out, const AggSpec& a, const Moments& m, bool emitState);
// Co-moments from shifted sums: the mean deviation corrects them (m2 = Σd² − (Σd)²/n).
CoMoments FinishCoMoments(ShiftedSums s);
// corr's state columns (Partial/Merge) or Pearson's r.
void AppendCorr(Table& out, const AggSpec& a, const CoMoments& m, bool emitState);

// Splits t into `parts` tables by the hash of `keys` (hash.h); row order kept per part.
std::vector<TablePtr> HashPartition(const Table& t, const std::vector<int>& keys, int parts);

}  // namespace basin
