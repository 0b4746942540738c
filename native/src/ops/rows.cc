#include "ops/rows.h"

#include <algorithm>

#include "ops/groupby.h"
#include "ops/hash.h"
#include "ops/sort.h"

namespace basin {
namespace {

TablePtr TakeRows(const Table& t, const std::vector<int64_t>& idx) {
  auto out = std::make_shared<Table>();
  out->names = t.names;
  out->rows = int64_t(idx.size());
  out->columns.reserve(t.columns.size());
  for (const Column& c : t.columns) out->columns.push_back(Take(c, idx.data(), out->rows));
  return out;
}

void CheckColumn(const Table& t, int c, const char* what) {
  if (c < 0 || size_t(c) >= t.columns.size()) throw BasinError("BASIN_INTERNAL", std::string(what) + " column out of range");
}

// Sorts each group's row range [off[g], off[g+1]) of `rows` by `better` and keeps its
// first k; returns the kept rows, group after group.
template <class Better>
std::vector<int64_t> KeepBest(std::vector<int64_t>& rows, const std::vector<int64_t>& off, int64_t k, const Better& better) {
  std::vector<int64_t> out;
  const size_t G = off.size() - 1;
  for (size_t g = 0; g < G; g++) {
    auto b = rows.begin() + off[g], e = rows.begin() + off[g + 1];
    const int64_t m = off[g + 1] - off[g];
    auto mid = m > k ? b + k : e;
    // Ties go to the earlier row: rows within a group are in row order, and the
    // comparison falls back to the row index.
    std::partial_sort(b, mid, e, [&](int64_t x, int64_t y) { return better(x, y) || (!better(y, x) && x < y); });
    out.insert(out.end(), b, mid);
  }
  return out;
}

// A fixed-width value's order key (flipped when descending: smaller is better) and row.
struct Ranked {
  uint64_t key;
  int64_t row;
  bool operator<(const Ranked& o) const { return key < o.key || (key == o.key && row < o.row); }
};

// Small k: one pass in row order keeping each group's best k in a sorted slot array;
// most rows lose to the group's current k-th and cost one comparison.
std::vector<int64_t> StreamTopK(const Column& c, const Grouping& gr, int64_t n, int64_t k, bool descending) {
  const size_t G = size_t(gr.groups), K = size_t(k);
  std::vector<Ranked> best(G * K);
  std::vector<uint32_t> cnt(G, 0);
  for (int64_t i = 0; i < n; i++) {
    if (!c.valid(i)) continue;
    const uint32_t g = gr.gid[size_t(i)];
    const uint64_t key = SortOrderKey(c, i);
    const Ranked r{descending ? ~key : key, i};
    Ranked* b = best.data() + size_t(g) * K;
    size_t m = cnt[g];
    if (m == K) {
      if (!(r < b[K - 1])) continue;
      m = K - 1;
    } else {
      cnt[g]++;
    }
    while (m > 0 && r < b[m - 1]) {
      b[m] = b[m - 1];
      m--;
    }
    b[m] = r;
  }
  std::vector<int64_t> keep;
  for (size_t g = 0; g < G; g++)
    for (size_t j = 0; j < cnt[g]; j++) keep.push_back(best[g * K + j].row);
  return keep;
}

}  // namespace

TablePtr DistinctRows(const Table& t, const std::vector<int>& keys) {
  Grouping gr = ComputeGrouping(t, keys);
  if (t.rows == 0) return TakeRows(t, {});
  return TakeRows(t, gr.firstRow);
}

TablePtr TopKRows(const Table& t, const std::vector<int>& keys, int column, int64_t k, bool descending) {
  CheckColumn(t, column, "top-k value");
  if (k < 1) throw BasinError("BASIN_INTERNAL", "top-k needs k >= 1");
  const Column& c = t.columns[size_t(column)];
  Grouping gr = ComputeGrouping(t, keys);
  const size_t G = size_t(gr.groups);
  if (c.type != DType::String && k <= 16 && double(G) * double(k) <= 2.0 * double(t.rows) + 1024)
    return TakeRows(t, StreamTopK(c, gr, t.rows, k, descending));
  // Bucket the rows with a value by group (a stable counting sort: row order kept).
  std::vector<int64_t> off(G + 1, 0);
  for (int64_t i = 0; i < t.rows; i++)
    if (c.valid(i)) off[gr.gid[size_t(i)] + 1]++;
  for (size_t g = 0; g < G; g++) off[g + 1] += off[g];
  std::vector<int64_t> rows(size_t(off[G]));
  {
    std::vector<int64_t> at(off.begin(), off.end() - 1);
    for (int64_t i = 0; i < t.rows; i++)
      if (c.valid(i)) rows[size_t(at[gr.gid[size_t(i)]]++)] = i;
  }
  std::vector<int64_t> keep;
  if (c.type == DType::String) {
    keep = KeepBest(rows, off, k, [&](int64_t x, int64_t y) {
      int cmp = c.str(x).compare(c.str(y));
      return descending ? cmp > 0 : cmp < 0;
    });
  } else {
    // Fixed-width values: rank (order key, row) pairs held together, so the sort
    // reads memory in sequence; descending flips the key, ties stay by row.
    std::vector<Ranked> ranked(rows.size());
    for (size_t i = 0; i < rows.size(); i++) {
      const uint64_t key = SortOrderKey(c, rows[i]);
      ranked[i] = Ranked{descending ? ~key : key, rows[i]};
    }
    for (size_t g = 0; g < G; g++) {
      auto b = ranked.begin() + off[g], e = ranked.begin() + off[g + 1];
      auto mid = off[g + 1] - off[g] > k ? b + k : e;
      std::partial_sort(b, mid, e);
      for (auto it = b; it != mid; ++it) keep.push_back(it->row);
    }
  }
  return TakeRows(t, keep);
}

TablePtr SampleKeys(const Table& t, uint64_t seed, int64_t part) {
  auto out = std::make_shared<Table>(t);
  const int64_t n = t.rows;
  Column key, pos;
  key.type = DType::Float64;
  pos.type = DType::Int64;
  key.length = pos.length = n;
  key.data = MakeBuffer(size_t(n) * 8);
  pos.data = MakeBuffer(size_t(n) * 8);
  double* kv = key.data->as<double>();
  int64_t* pv = pos.data->as<int64_t>();
  const uint64_t base = hash::Mix64(hash::Combine(hash::Mix64(seed), uint64_t(part)));
  for (int64_t i = 0; i < n; i++) {
    // 53 random bits → a double in [0, 1).
    kv[i] = double(hash::Mix64(base + uint64_t(i) * 0x9e3779b97f4a7c15ULL) >> 11) * 0x1.0p-53;
    pv[i] = (part << 40) + i;
  }
  out->names.push_back("__sample_key");
  out->columns.push_back(std::move(key));
  out->names.push_back("__sample_pos");
  out->columns.push_back(std::move(pos));
  return out;
}

}  // namespace basin
