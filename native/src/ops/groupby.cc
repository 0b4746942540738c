#include "ops/groupby.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "ops/float_order.h"
#include "ops/quantile.h"
#include "ops/hash.h"
#include "ops/packed_keys.h"

namespace basin {

AggOp AggOpFromName(const std::string& s) {
  if (s == "sum") return AggOp::Sum;
  if (s == "mean") return AggOp::Mean;
  if (s == "min") return AggOp::Min;
  if (s == "max") return AggOp::Max;
  if (s == "count") return AggOp::Count;
  if (s == "std") return AggOp::Std;
  if (s == "var") return AggOp::Var;
  if (s == "median") return AggOp::Median;
  if (s == "nunique") return AggOp::NUnique;
  if (s == "first") return AggOp::First;
  if (s == "last") return AggOp::Last;
  if (s == "quantile") return AggOp::Quantile;
  if (s == "corr") return AggOp::Corr;
  throw BasinError("BASIN_INTERNAL", "unknown aggregation '" + s + "'");
}

AggMode AggModeFromName(const std::string& s) {
  if (s == "full") return AggMode::Full;
  if (s == "partial") return AggMode::Partial;
  if (s == "merge") return AggMode::Merge;
  if (s == "final") return AggMode::Final;
  throw BasinError("BASIN_INTERNAL", "unknown aggregation mode '" + s + "'");
}

namespace {

constexpr int64_t kBatch = 2048;
// The suffixes of corr's state columns: count, then the co-moments.
const char* const kCorrParts[] = {"#count", "#meanx", "#meany", "#m2x", "#m2y", "#cxy"};
constexpr int64_t kPrefetch = 16;
constexpr uint32_t kMaxGroups = 0xFFFFFFF0u;

// Open addressing (linear probing) over dense ids. A slot holds id+1 (0 = empty) and
// the whole hash, so most mismatches never touch the keys; where the hash is a
// bijection of the key (kHashIsKey: one fixed-width column without nulls, hashed by
// Mix64) equal hashes are equal keys and the keys are never read at all.
class IdTable {
 public:
  IdTable() { Resize(1024); }
  uint32_t size() const { return size_; }
  // Starts loading the slot a later FindOrInsert(h) begins at.
  void Prefetch(uint64_t h) const { __builtin_prefetch(&slots_[size_t(h) & mask_]); }

  // The id whose key matches (eq(id)), or a new id (= size()) with `inserted` set.
  template <bool kHashIsKey = false, class Eq>
  inline uint32_t FindOrInsert(uint64_t h, const Eq& eq, bool& inserted) {
    size_t i = size_t(h) & mask_;
    for (;;) {
      Slot& s = slots_[i];
      if (s.id1 == 0) {
        if (size_ >= kMaxGroups) throw BasinError("BASIN_INTERNAL", "too many groups");
        uint32_t id = size_++;
        s = Slot{h, id + 1};
        inserted = true;
        if (size_t(size_) * 2 > slots_.size()) Resize(slots_.size() * 2);
        return id;
      }
      if (s.hash == h && (kHashIsKey || eq(s.id1 - 1))) {
        inserted = false;
        return s.id1 - 1;
      }
      i = (i + 1) & mask_;
    }
  }

 private:
  struct Slot {
    uint64_t hash;
    uint32_t id1;
  };
  void Resize(size_t cap) {
    PoolVector<Slot> old(cap, Slot{0, 0});
    old.swap(slots_);
    mask_ = cap - 1;
    for (const Slot& o : old) {
      if (o.id1 == 0) continue;
      size_t i = size_t(o.hash) & mask_;
      while (slots_[i].id1 != 0) i = (i + 1) & mask_;
      slots_[i] = o;
    }
  }
  PoolVector<Slot> slots_;
  size_t mask_ = 0;
  uint32_t size_ = 0;
};

// Assigns group ids to the rows `keep` keeps (all rows when it is null; the others are
// left for AddDroppedGroup): row hashes per batch, then probes. eq(g, row) compares
// row's key with group g's; onNew(row) records the key of a new group.
template <bool kHashIsKey = false, class Eq, class OnNew>
void AssignIds(const Table& t, const std::vector<int>& keys, const uint8_t* keep, Grouping& out, const Eq& eq,
               const OnNew& onNew) {
  const int64_t n = t.rows;
  out.gid.resize(size_t(n));
  std::vector<uint64_t> hb(static_cast<size_t>(kBatch));
  IdTable table;
  for (int64_t b = 0; b < n; b += kBatch) {
    const int64_t cnt = std::min(kBatch, n - b);
    hash::HashRows(t, keys, b, cnt, hb.data());
    for (int64_t i = 0; i < cnt; i++) {
      // Many groups make each probe a cache miss: start the one kPrefetch rows on now.
      if (i + kPrefetch < cnt) table.Prefetch(hb[size_t(i + kPrefetch)]);
      const int64_t r = b + i;
      if (keep && !keep[r]) continue;
      bool inserted;
      uint32_t g = table.FindOrInsert<kHashIsKey>(hb[size_t(i)], [&](uint32_t id) { return eq(id, r); }, inserted);
      if (inserted) {
        out.firstRow.push_back(r);
        onNew(r);
      }
      out.gid[size_t(r)] = g;
    }
  }
  out.groups = table.size();
}

inline uint64_t Canon(int64_t v) { return uint64_t(v); }
inline uint64_t Canon(int32_t v) { return uint64_t(int64_t(v)); }
inline uint64_t Canon(uint8_t v) { return v; }
inline uint64_t Canon(double v) { return hash::CanonDouble(v); }

// Keys in non-decreasing order (a table read in its sort order, as lineitem by
// l_orderkey, and a shuffle of it, whose parts keep that order): each run of equal
// keys is a group, numbered in order of first appearance as the hash table numbers
// them, in one pass with no table. False (after a few rows, for unsorted keys) when
// they are not in order.
template <class T>
bool GroupSortedRuns(const T* v, int64_t n, Grouping& out) {
  for (int64_t i = 1; i < n; i++)
    if (v[i] < v[i - 1]) return false;
  out.gid.resize(size_t(n));
  out.firstRow.clear();
  uint32_t g = 0;
  for (int64_t i = 0; i < n; i++) {
    if (i == 0 || v[i] != v[i - 1]) {
      if (out.firstRow.size() >= kMaxGroups) throw BasinError("BASIN_INTERNAL", "too many groups");
      g = uint32_t(out.firstRow.size());
      out.firstRow.push_back(i);
    }
    out.gid[size_t(i)] = g;
  }
  out.groups = int64_t(out.firstRow.size());
  return true;
}

template <class T>
void GroupFixedKey(const Table& t, const std::vector<int>& keys, const uint8_t* keep, Grouping& out) {
  const Column& c = t.columns[size_t(keys[0])];
  const T* v = c.values<T>();
  // Integers only: doubles have NaN and -0.0, which order and compare apart from their groups.
  if constexpr (std::is_integral_v<T>)
    if (!c.validity && !keep && GroupSortedRuns(v, t.rows, out)) return;
  if (c.validity) {
    const uint8_t* valid = c.validity->data();
    std::vector<uint64_t> gk;
    std::vector<uint8_t> gnull;
    AssignIds(
        t, keys, keep, out,
        [&](uint32_t g, int64_t r) { return valid[r] ? (!gnull[g] && gk[g] == Canon(v[r])) : gnull[g] != 0; },
        [&](int64_t r) {
          gk.push_back(valid[r] ? Canon(v[r]) : 0);
          gnull.push_back(valid[r] ? 0 : 1);
        });
  } else {
    // hash::HashColumn hashes Mix64(Canon(v)), a bijection: equal hashes are equal keys.
    AssignIds<true>(
        t, keys, keep, out, [](uint32_t, int64_t) { return true; }, [](int64_t) {});
  }
}

// Packed keys spanning fewer values than this (and than a few times the rows: a small
// table does not fill a large array) group by an array of group ids indexed by them
// (it stays in cache), with no hashing.
constexpr uint64_t kDirectSpan = uint64_t(1) << 16;

// Groups rows by their packed keys (ops/packed_keys.h), numbered in order of first
// appearance as the hash table numbers them.
void GroupPacked(const Table& t, const BufferPtr& packed, uint64_t span, const uint8_t* keep, Grouping& out) {
  const int64_t n = t.rows;
  if (span < kDirectSpan && span <= 4 * uint64_t(n) + 1024) {
    const uint64_t* p = packed->as<uint64_t>();
    std::vector<uint32_t> slot(size_t(span) + 1, UINT32_MAX);
    out.gid.resize(size_t(n));
    for (int64_t r = 0; r < n; r++) {
      if (keep && !keep[r]) continue;
      uint32_t& g = slot[size_t(p[r])];
      if (g == UINT32_MAX) {
        g = uint32_t(out.firstRow.size());
        out.firstRow.push_back(r);
      }
      out.gid[size_t(r)] = g;
    }
    out.groups = int64_t(out.firstRow.size());
    return;
  }
  Column c;
  c.type = DType::Int64;
  c.length = n;
  c.data = packed;
  Table one;
  one.rows = n;
  one.names = {"packed"};
  one.columns = {c};
  GroupFixedKey<int64_t>(one, {0}, keep, out);
}

void GroupStringKey(const Table& t, const std::vector<int>& keys, const uint8_t* keep, Grouping& out) {
  const Column& c = t.columns[size_t(keys[0])];
  std::vector<std::string_view> gs;
  if (c.validity) {
    const uint8_t* valid = c.validity->data();
    std::vector<uint8_t> gnull;
    AssignIds(
        t, keys, keep, out,
        [&](uint32_t g, int64_t r) { return valid[r] ? (!gnull[g] && gs[g] == c.str(r)) : gnull[g] != 0; },
        [&](int64_t r) {
          gs.push_back(valid[r] ? c.str(r) : std::string_view());
          gnull.push_back(valid[r] ? 0 : 1);
        });
  } else {
    AssignIds(
        t, keys, keep, out, [&](uint32_t g, int64_t r) { return gs[g] == c.str(r); },
        [&](int64_t r) { gs.push_back(c.str(r)); });
  }
}

// Row equality over several columns (null equals null).
struct KeyCol {
  const Column* col;
  const uint8_t* valid;
};

bool RowsEqual(const std::vector<KeyCol>& ks, int64_t a, int64_t b) {
  for (const KeyCol& k : ks) {
    if (k.valid) {
      bool va = k.valid[a] != 0, vb = k.valid[b] != 0;
      if (va != vb) return false;
      if (!va) continue;
    }
    const Column& c = *k.col;
    switch (c.type) {
      case DType::String:
        if (c.str(a) != c.str(b)) return false;
        break;
      case DType::Float64:
        if (hash::CanonDouble(c.values<double>()[a]) != hash::CanonDouble(c.values<double>()[b])) return false;
        break;
      case DType::Bool:
        if (c.values<uint8_t>()[a] != c.values<uint8_t>()[b]) return false;
        break;
      case DType::Date:
        if (c.values<int32_t>()[a] != c.values<int32_t>()[b]) return false;
        break;
      default:
        if (c.values<int64_t>()[a] != c.values<int64_t>()[b]) return false;
        break;
    }
  }
  return true;
}

std::vector<KeyCol> KeyCols(const Table& t, const std::vector<int>& keys) {
  std::vector<KeyCol> ks;
  for (int k : keys) {
    const Column& c = t.columns[size_t(k)];
    ks.push_back(KeyCol{&c, c.validity ? c.validity->data() : nullptr});
  }
  return ks;
}

void CheckKeys(const Table& t, const std::vector<int>& keys) {
  for (int k : keys)
    if (k < 0 || size_t(k) >= t.columns.size()) throw BasinError("BASIN_INTERNAL", "key column out of range");
}

// ---- aggregation kernels: tight loops over (group id, value) ----

struct Ctx {
  const uint32_t* gid;
  int64_t n;
  int64_t groups;
  const std::vector<int64_t>* groupRows;
};

template <class F>
inline void ForValid(const Column& c, int64_t n, const F& f) {
  if (c.validity) {
    const uint8_t* v = c.validity->data();
    for (int64_t i = 0; i < n; i++)
      if (v[i]) f(i);
  } else {
    for (int64_t i = 0; i < n; i++) f(i);
  }
}

// Groups up to this many are summed in kLanes copies of their accumulators.
constexpr int64_t kLaneGroups = 256;
constexpr int64_t kLanes = 4;

// Per-group sums of value(i) over the rows `valid` keeps (all when null). With few
// groups consecutive rows mostly add into one accumulator, each add waiting for the
// last one's store; row i then adds into copy i % kLanes, four independent chains,
// and the copies are summed in a fixed order at the end (TPC-H Q1: 4 groups).
template <class A, class Value>
std::vector<A> SumByGroup(const uint8_t* valid, const Ctx& x, const Value& value) {
  const size_t G = size_t(x.groups);
  const uint32_t* gid = x.gid;
  const int64_t n = x.n;
  if (x.groups > kLaneGroups) {
    std::vector<A> acc(G, A(0));
    A* a = acc.data();
    if (valid) {
      for (int64_t i = 0; i < n; i++)
        if (valid[i]) a[gid[i]] += value(i);
    } else {
      for (int64_t i = 0; i < n; i++) a[gid[i]] += value(i);
    }
    return acc;
  }
  std::vector<A> lanes(G * kLanes, A(0));
  A* l = lanes.data();
  if (valid) {
    for (int64_t i = 0; i < n; i++)
      if (valid[i]) l[size_t(i % kLanes) * G + gid[i]] += value(i);
  } else {
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
      l[gid[i]] += value(i);
      l[G + gid[i + 1]] += value(i + 1);
      l[2 * G + gid[i + 2]] += value(i + 2);
      l[3 * G + gid[i + 3]] += value(i + 3);
    }
    for (; i < n; i++) l[size_t(i % kLanes) * G + gid[i]] += value(i);
  }
  std::vector<A> acc(G);
  for (size_t g = 0; g < G; g++) acc[g] = (l[g] + l[G + g]) + (l[2 * G + g] + l[3 * G + g]);
  return acc;
}

// Calls f(const T* values) for the numeric types (bool as 0/1).
template <class F>
void DispatchNumeric(const Column& c, const char* what, const F& f) {
  switch (c.type) {
    case DType::Int64: return f(c.values<int64_t>());
    case DType::Float64: return f(c.values<double>());
    case DType::Bool: return f(c.values<uint8_t>());
    default:
      throw BasinError("BASIN_TYPE", std::string(what) + " of a " + DTypeName(c.type) + " column is not supported");
  }
}

// Non-null values per group.
std::vector<int64_t> NonNullCounts(const Column& c, const Ctx& x) {
  if (!c.validity) return *x.groupRows;
  const uint8_t* v = c.validity->data();
  return SumByGroup<int64_t>(nullptr, x, [v](int64_t i) { return int64_t(v[i]); });
}

Column SumAgg(const Column& c, const Ctx& x) {
  std::vector<int64_t> cnt = NonNullCounts(c, x);
  const uint8_t* valid = c.validity ? c.validity->data() : nullptr;
  if (c.type == DType::Float64) {
    const double* v = c.values<double>();
    return FixedColumn(DType::Float64, SumByGroup<double>(valid, x, [v](int64_t i) { return v[i]; }), &cnt);
  }
  // Unsigned adds: wraparound without undefined behaviour.
  std::vector<uint64_t> acc;
  if (c.type == DType::Int64) {
    const int64_t* v = c.values<int64_t>();
    acc = SumByGroup<uint64_t>(valid, x, [v](int64_t i) { return uint64_t(v[i]); });
  } else if (c.type == DType::Bool) {
    const uint8_t* v = c.values<uint8_t>();
    acc = SumByGroup<uint64_t>(valid, x, [v](int64_t i) { return uint64_t(v[i]); });
  } else {
    throw BasinError("BASIN_TYPE", std::string("sum of a ") + DTypeName(c.type) + " column is not supported");
  }
  return FixedColumn(DType::Int64, std::vector<int64_t>(acc.begin(), acc.end()), &cnt);
}

// Sums of an int64 count column (nulls skipped) per group.
std::vector<int64_t> SumCounts(const Column& c, const Ctx& x) {
  if (c.type != DType::Int64) throw BasinError("BASIN_INTERNAL", "count state is not int64");
  const int64_t* v = c.values<int64_t>();
  return SumByGroup<int64_t>(c.validity ? c.validity->data() : nullptr, x, [v](int64_t i) { return v[i]; });
}

std::vector<double> SumDoubles(const Column& c, const Ctx& x) {
  std::vector<double> acc;
  const uint8_t* valid = c.validity ? c.validity->data() : nullptr;
  DispatchNumeric(c, "sum", [&](auto* v) { acc = SumByGroup<double>(valid, x, [v](int64_t i) { return double(v[i]); }); });
  return acc;
}

template <class T, bool IsMax>
Column MinMaxFixed(const Column& c, const Ctx& x) {
  std::vector<int64_t> cnt = NonNullCounts(c, x);
  const T init = IsMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
  const T* v = c.values<T>();
  if constexpr (std::is_floating_point<T>::value) {
    // DuckDB's order (ops/float_order.h): a NaN is the largest value.
    std::vector<T> acc(size_t(x.groups), IsMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::quiet_NaN());
    ForValid(c, x.n, [&](int64_t i) {
      T& a = acc[x.gid[i]];
      if (ReplacesExtreme(v[i], a, IsMax)) a = v[i];
    });
    return FixedColumn(c.type, acc, &cnt);
  }
  std::vector<T> acc(size_t(x.groups), init);
  ForValid(c, x.n, [&](int64_t i) {
    T& a = acc[x.gid[i]];
    if (IsMax ? (v[i] > a) : (v[i] < a)) a = v[i];
  });
  return FixedColumn(c.type, acc, &cnt);
}

// Gathers row idx[g] of c per group; idx < 0 → null.
Column TakeOrNull(const Column& c, const std::vector<int64_t>& idx) {
  if (std::find_if(idx.begin(), idx.end(), [](int64_t i) { return i < 0; }) == idx.end())
    return Take(c, idx.data(), int64_t(idx.size()));
  ColumnBuilder b(c.type, int64_t(idx.size()));
  for (int64_t i : idx) {
    if (i < 0) b.appendNull();
    else b.appendFrom(c, i);
  }
  return b.finish();
}

Column MinMaxAgg(const Column& c, const Ctx& x, bool isMax) {
  switch (c.type) {
    case DType::Int64:
    case DType::Timestamp: return isMax ? MinMaxFixed<int64_t, true>(c, x) : MinMaxFixed<int64_t, false>(c, x);
    case DType::Float64: return isMax ? MinMaxFixed<double, true>(c, x) : MinMaxFixed<double, false>(c, x);
    case DType::Date: return isMax ? MinMaxFixed<int32_t, true>(c, x) : MinMaxFixed<int32_t, false>(c, x);
    case DType::Bool: return isMax ? MinMaxFixed<uint8_t, true>(c, x) : MinMaxFixed<uint8_t, false>(c, x);
    case DType::String: {
      std::vector<int64_t> best(size_t(x.groups), -1);
      ForValid(c, x.n, [&](int64_t i) {
        int64_t& b = best[x.gid[i]];
        if (b < 0) {
          b = i;
        } else {
          int cmp = c.str(i).compare(c.str(b));  // byte-wise (char_traits<char> compares as unsigned)
          if (isMax ? cmp > 0 : cmp < 0) b = i;
        }
      });
      return TakeOrNull(c, best);
    }
  }
  throw BasinError("BASIN_INTERNAL", "bad type");
}

Column FirstLastAgg(const Column& c, const Ctx& x, bool last) {
  std::vector<int64_t> pick(size_t(x.groups), -1);
  if (last) {
    ForValid(c, x.n, [&](int64_t i) { pick[x.gid[i]] = i; });
  } else {
    ForValid(c, x.n, [&](int64_t i) {
      int64_t& p = pick[x.gid[i]];
      if (p < 0) p = i;
    });
  }
  return TakeOrNull(c, pick);
}


// Corrected two-pass algorithm: a rough mean, then sums of deviations d from it and of
// d²; m2 = Σd² − (Σd)²/n cancels the rough mean's rounding error. Division-free per row.
Moments ComputeMoments(const Column& c, const Ctx& x, const char* what) {
  Moments m;
  const size_t G = size_t(x.groups);
  m.n = NonNullCounts(c, x);
  m.mean.assign(G, 0.0);
  m.m2.assign(G, 0.0);
  std::vector<double> s1(G, 0.0);
  DispatchNumeric(c, what, [&](auto* v) {
    ForValid(c, x.n, [&](int64_t i) { m.mean[x.gid[i]] += double(v[i]); });
    for (size_t g = 0; g < G; g++) m.mean[g] = m.n[g] ? m.mean[g] / double(m.n[g]) : 0.0;
    ForValid(c, x.n, [&](int64_t i) {
      uint32_t g = x.gid[i];
      double d = double(v[i]) - m.mean[g];
      s1[g] += d;
      m.m2[g] += d * d;
    });
  });
  for (size_t g = 0; g < G; g++) {
    if (!m.n[g]) continue;
    double n = double(m.n[g]);
    m.mean[g] += s1[g] / n;
    m.m2[g] = NonNegative(m.m2[g] - s1[g] * s1[g] / n);
  }
  return m;
}

// Chan et al.'s parallel combination of (count, mean, M2) states, in row order.
Moments MergeMoments(const Column& cn, const Column& cm, const Column& cm2, const Ctx& x) {
  if (cn.type != DType::Int64 || cm.type != DType::Float64 || cm2.type != DType::Float64)
    throw BasinError("BASIN_INTERNAL", "bad variance state types");
  Moments m;
  const size_t G = size_t(x.groups);
  m.n.assign(G, 0);
  m.mean.assign(G, 0.0);
  m.m2.assign(G, 0.0);
  const int64_t* vn = cn.values<int64_t>();
  const double* vm = cm.values<double>();
  const double* vm2 = cm2.values<double>();
  for (int64_t i = 0; i < x.n; i++) {
    if (!cn.valid(i) || vn[i] == 0) continue;
    uint32_t g = x.gid[i];
    int64_t nb = vn[i];
    int64_t na = m.n[g];
    if (na == 0) {
      m.n[g] = nb;
      m.mean[g] = vm[i];
      m.m2[g] = vm2[i];
      continue;
    }
    double nt = double(na + nb);
    double d = vm[i] - m.mean[g];
    m.mean[g] += d * double(nb) / nt;
    m.m2[g] += vm2[i] + d * d * double(na) * double(nb) / nt;
    m.n[g] = na + nb;
  }
  return m;
}

// The q-quantile per group with linear interpolation between the two nearest ranks
// (DuckDB's quantile_cont): position q * (n - 1); the median is q = 0.5.
Column QuantileAgg(const Column& c, const Ctx& x, double q, const char* what) {
  const size_t G = size_t(x.groups);
  std::vector<int64_t> cnt = NonNullCounts(c, x);
  std::vector<int64_t> off(G + 1, 0);
  for (size_t g = 0; g < G; g++) off[g + 1] = off[g] + cnt[g];
  std::vector<double> vals(size_t(off[G]));
  std::vector<int64_t> pos(off.begin(), off.end() - 1);
  DispatchNumeric(c, what, [&](auto* v) {
    ForValid(c, x.n, [&](int64_t i) { vals[size_t(pos[x.gid[i]]++)] = double(v[i]); });
  });
  std::vector<double> out(G, 0.0);
  for (size_t g = 0; g < G; g++) {
    int64_t n = cnt[g];
    if (n == 0) continue;
    double* b = vals.data() + off[g];
    double* e = b + n;
    const double rank = q * double(n - 1);
    const int64_t lo = int64_t(std::floor(rank));
    double* at = b + lo;
    // NaNs rank above every number (ops/float_order.h): moved to the end, the ranks
    // among the numbers are found with <, and a rank past them is NaN.
    double* nans = std::partition(b, e, [](double d) { return d == d; });
    const double nan = std::numeric_limits<double>::quiet_NaN();
    double v = nan;
    if (at < nans) {
      std::nth_element(b, at, nans);
      v = *at;
    }
    if (double(lo) != rank) {
      // The next rank: the smallest value above.
      const double hi = at + 1 < nans ? *std::min_element(at + 1, nans) : nan;
      v = Interpolate(v, hi, rank - double(lo));
    }
    out[g] = v;
  }
  return FixedColumn(DType::Float64, out, &cnt);
}

Column MedianAgg(const Column& c, const Ctx& x) { return QuantileAgg(c, x, 0.5, "median"); }

// Shifted sums in one pass: deviations from the group's first pair (a sample value,
// so close to the mean), corrected by the mean deviation (FinishCoMoments). A
// constant column gets exactly zero spread, as DuckDB's Welford updates do.
CoMoments ComputeCoMoments(const Column& cx, const Column& cy, const Ctx& x) {
  const size_t G = size_t(x.groups);
  ShiftedSums m{std::vector<int64_t>(G, 0), std::vector<double>(G, 0.0), std::vector<double>(G, 0.0),
                std::vector<double>(G, 0.0), std::vector<double>(G, 0.0), std::vector<double>(G, 0.0),
                std::vector<double>(G, 0.0), std::vector<double>(G, 0.0)};
  DispatchNumeric(cx, "corr", [&](auto* vx) {
    DispatchNumeric(cy, "corr", [&](auto* vy) {
      for (int64_t i = 0; i < x.n; i++) {
        if (!cx.valid(i) || !cy.valid(i)) continue;
        const uint32_t g = x.gid[i];
        if (m.n[g]++ == 0) {
          m.kx[g] = double(vx[i]);
          m.ky[g] = double(vy[i]);
        }
        const double dx = double(vx[i]) - m.kx[g], dy = double(vy[i]) - m.ky[g];
        m.sx[g] += dx;
        m.sy[g] += dy;
        m.m2x[g] += dx * dx;
        m.m2y[g] += dy * dy;
        m.cxy[g] += dx * dy;
      }
    });
  });
  return FinishCoMoments(std::move(m));
}

// Chan et al.'s pairwise combination of co-moment states, in row order.
CoMoments MergeCoMoments(const std::vector<const Column*>& s, const Ctx& x) {
  if (s[0]->type != DType::Int64) throw BasinError("BASIN_INTERNAL", "bad corr state types");
  for (size_t k = 1; k < 6; k++)
    if (s[k]->type != DType::Float64) throw BasinError("BASIN_INTERNAL", "bad corr state types");
  CoMoments m(size_t(x.groups));
  const int64_t* vn = s[0]->values<int64_t>();
  const double *vmx = s[1]->values<double>(), *vmy = s[2]->values<double>(), *vm2x = s[3]->values<double>(),
               *vm2y = s[4]->values<double>(), *vc = s[5]->values<double>();
  for (int64_t i = 0; i < x.n; i++) {
    if (!s[0]->valid(i) || vn[i] == 0) continue;
    const uint32_t g = x.gid[i];
    const int64_t na = m.n[g], nb = vn[i];
    if (na == 0) {
      m.n[g] = nb;
      m.mx[g] = vmx[i];
      m.my[g] = vmy[i];
      m.m2x[g] = vm2x[i];
      m.m2y[g] = vm2y[i];
      m.cxy[g] = vc[i];
      continue;
    }
    const double nt = double(na + nb), w = double(na) * double(nb) / nt;
    const double dx = vmx[i] - m.mx[g], dy = vmy[i] - m.my[g];
    m.mx[g] += dx * double(nb) / nt;
    m.my[g] += dy * double(nb) / nt;
    m.m2x[g] += vm2x[i] + dx * dx * w;
    m.m2y[g] += vm2y[i] + dy * dy * w;
    m.cxy[g] += vc[i] + dx * dy * w;
    m.n[g] = na + nb;
  }
  return m;
}

// Pearson's r as DuckDB's corr: covar_pop / (stddev_pop x * stddev_pop y); null with
// no pairs, NaN (0 / 0) when either side has no spread (one pair, or a constant).
Column CorrFinal(const CoMoments& m) {
  const size_t G = m.n.size();
  std::vector<double> r(G, 0.0);
  std::vector<int64_t> ok(G, 0);
  for (size_t g = 0; g < G; g++) {
    if (m.n[g] == 0) continue;
    const double n = double(m.n[g]);
    const double sx = m.n[g] > 1 ? std::sqrt(m.m2x[g] / n) : 0.0, sy = m.n[g] > 1 ? std::sqrt(m.m2y[g] / n) : 0.0;
    ok[g] = 1;
    r[g] = (m.cxy[g] / n) / (sx * sy);
  }
  return FixedColumn(DType::Float64, r, &ok);
}

// Distinct non-null values per group: a set over (group, value). Fixed-width values
// are stored in the set's entries (no trip back to the rows); strings by a row index.
Column NUniqueAgg(const Column& c, const Ctx& x) {
  std::vector<int64_t> cnt(size_t(x.groups), 0);
  IdTable table;
  std::vector<uint64_t> hb(static_cast<size_t>(kBatch));
  const uint8_t* valid = c.validity ? c.validity->data() : nullptr;
  auto run = [&](const auto& eq, const auto& onNew) {
    for (int64_t b = 0; b < x.n; b += kBatch) {
      const int64_t n = std::min(kBatch, x.n - b);
      hash::HashColumn(c, b, n, hb.data(), false);
      for (int64_t i = 0; i < n; i++) hb[size_t(i)] = hash::Combine(hb[size_t(i)], x.gid[b + i]);
      for (int64_t i = 0; i < n; i++) {
        if (i + kPrefetch < n) table.Prefetch(hb[size_t(i + kPrefetch)]);
        const int64_t r = b + i;
        if (valid && !valid[r]) continue;
        const uint32_t g = x.gid[r];
        bool inserted;
        table.FindOrInsert(hb[size_t(i)], [&](uint32_t id) { return eq(id, g, r); }, inserted);
        if (inserted) {
          onNew(g, r);
          cnt[g]++;
        }
      }
    }
  };
  if (c.type == DType::String) {
    struct Ent {
      uint32_t g;
      std::string_view s;
    };
    std::vector<Ent> ents;
    run([&](uint32_t id, uint32_t g, int64_t r) { return ents[id].g == g && ents[id].s == c.str(r); },
        [&](uint32_t g, int64_t r) { ents.push_back(Ent{g, c.str(r)}); });
  } else {
    struct Ent {
      uint64_t v;
      uint32_t g;
    };
    std::vector<Ent> ents;
    run([&](uint32_t id, uint32_t g, int64_t r) { return ents[id].g == g && ents[id].v == hash::CanonFixed(c, r); },
        [&](uint32_t g, int64_t r) { ents.push_back(Ent{hash::CanonFixed(c, r), g}); });
  }
  return FixedColumn(DType::Int64, cnt, nullptr);
}

Column DoubleColumn(const std::vector<double>& v, const std::vector<int64_t>* cnt) {
  return FixedColumn(DType::Float64, v, cnt);
}
Column IntColumn(const std::vector<int64_t>& v) { return FixedColumn(DType::Int64, v, nullptr); }

// Scatters column c into parts by pid (row order kept within each part); one
// sequential pass over the rows per column.
template <class T>
void ScatterFixed(const T* src, const uint32_t* pid, int64_t n, std::vector<T*>& dst) {
  std::vector<T*> at(dst);
  for (int64_t i = 0; i < n; i++) *at[pid[i]]++ = src[i];
}

std::vector<Column> ScatterColumn(const Column& c, const uint32_t* pid, int64_t n, const std::vector<int64_t>& rows) {
  const size_t P = rows.size();
  std::vector<Column> out(P);
  for (size_t p = 0; p < P; p++) {
    out[p].type = c.type;
    out[p].length = rows[p];
  }
  if (c.type == DType::String) {
    const int64_t* off = c.values<int64_t>();
    const uint8_t* chars = c.chars->data();
    std::vector<int64_t> bytes(P, 0);
    for (int64_t i = 0; i < n; i++) bytes[pid[i]] += off[i + 1] - off[i];
    std::vector<int64_t*> o(P);
    std::vector<uint8_t*> ch(P);
    std::vector<int64_t> row(P, 0);
    for (size_t p = 0; p < P; p++) {
      out[p].data = MakeBuffer(size_t(rows[p] + 1) * 8);
      out[p].chars = MakeBuffer(size_t(bytes[p]));
      o[p] = out[p].data->as<int64_t>();
      ch[p] = out[p].chars->data();
    }
    for (int64_t i = 0; i < n; i++) {
      const uint32_t p = pid[i];
      const int64_t len = off[i + 1] - off[i];
      int64_t* po = o[p] + row[p]++;
      if (len) std::memcpy(ch[p] + po[0], chars + off[i], size_t(len));
      po[1] = po[0] + len;
    }
  } else {
    const size_t w = ElementSize(c.type);
    std::vector<uint8_t*> d(P);
    for (size_t p = 0; p < P; p++) {
      out[p].data = MakeBuffer(size_t(rows[p]) * w);
      d[p] = out[p].data->data();
    }
    if (w == 8) {
      std::vector<uint64_t*> t(P);
      for (size_t p = 0; p < P; p++) t[p] = reinterpret_cast<uint64_t*>(d[p]);
      ScatterFixed(c.values<uint64_t>(), pid, n, t);
    } else if (w == 4) {
      std::vector<uint32_t*> t(P);
      for (size_t p = 0; p < P; p++) t[p] = reinterpret_cast<uint32_t*>(d[p]);
      ScatterFixed(c.values<uint32_t>(), pid, n, t);
    } else {
      ScatterFixed(c.values<uint8_t>(), pid, n, d);
    }
  }
  if (c.validity) {
    std::vector<uint8_t*> v(P);
    for (size_t p = 0; p < P; p++) {
      out[p].validity = MakeBuffer(size_t(rows[p]));
      v[p] = out[p].validity->data();
    }
    ScatterFixed(c.validity->data(), pid, n, v);
    for (size_t p = 0; p < P; p++)
      if (!std::memchr(out[p].validity->data(), 0, size_t(rows[p]))) out[p].validity.reset();
  }
  return out;
}

}  // namespace

namespace {

// The rows `keep` leaves out, as one more group after the others (its first row is the
// first such row, or row 0 when there is none: its key columns are never shown).
void AddDroppedGroup(Grouping& g, const uint8_t* keep, int64_t rows) {
  const uint32_t dropped = uint32_t(g.groups);
  int64_t first = -1;
  for (int64_t r = 0; r < rows; r++)
    if (!keep[r]) {
      g.gid[size_t(r)] = dropped;
      if (first < 0) first = r;
    }
  g.firstRow.push_back(first < 0 ? 0 : first);
  g.groups++;
}

void GroupKept(const Table& t, const std::vector<int>& keys, const uint8_t* keep, Grouping& out) {
  if (keys.empty()) {
    out.groups = 1;
    out.gid.assign(size_t(t.rows), 0);
    out.firstRow.push_back(t.rows > 0 ? 0 : -1);
    return;
  }
  if (keys.size() > 1 || t.columns[size_t(keys[0])].type == DType::String) {
    BufferPtr packed;
    uint64_t span;
    if (PackKeys(t, keys, &packed, &span)) return GroupPacked(t, packed, span, keep, out);
  }
  if (keys.size() == 1) {
    switch (t.columns[size_t(keys[0])].type) {
      case DType::String: return GroupStringKey(t, keys, keep, out);
      case DType::Float64: return GroupFixedKey<double>(t, keys, keep, out);
      case DType::Bool: return GroupFixedKey<uint8_t>(t, keys, keep, out);
      case DType::Date: return GroupFixedKey<int32_t>(t, keys, keep, out);
      default: return GroupFixedKey<int64_t>(t, keys, keep, out);
    }
  }
  std::vector<KeyCol> ks = KeyCols(t, keys);
  AssignIds(
      t, keys, keep, out, [&](uint32_t g, int64_t r) { return RowsEqual(ks, out.firstRow[g], r); }, [](int64_t) {});
}

}  // namespace

Grouping ComputeGrouping(const Table& t, const std::vector<int>& keys, const uint8_t* keep) {
  CheckKeys(t, keys);
  Grouping out;
  GroupKept(t, keys, t.rows > 0 ? keep : nullptr, out);
  if (keep && t.rows > 0) AddDroppedGroup(out, keep, t.rows);
  return out;
}

std::vector<int64_t> GroupRows(const Grouping& gr, int64_t rows) {
  const Ctx x{gr.gid.data(), rows, gr.groups, nullptr};
  return SumByGroup<int64_t>(nullptr, x, [](int64_t) { return int64_t(1); });
}

void AppendMean(Table& out, const std::string& name, std::vector<double> sum, const std::vector<int64_t>& cnt, bool emitState) {
  if (emitState) {
    out.names.push_back(name + "#sum");
    out.columns.push_back(DoubleColumn(sum, nullptr));
    out.names.push_back(name + "#count");
    out.columns.push_back(IntColumn(cnt));
    return;
  }
  for (size_t g = 0; g < sum.size(); g++) sum[g] = cnt[g] ? sum[g] / double(cnt[g]) : 0.0;
  out.names.push_back(name);
  out.columns.push_back(DoubleColumn(sum, &cnt));
}

void AppendMoments(Table& out, const AggSpec& a, const Moments& m, bool emitState) {
  auto add = [&](std::string name, Column c) {
    out.names.push_back(std::move(name));
    out.columns.push_back(std::move(c));
  };
  if (emitState) {
    add(a.name + "#count", IntColumn(m.n));
    add(a.name + "#mean", DoubleColumn(m.mean, nullptr));
    add(a.name + "#m2", DoubleColumn(m.m2, nullptr));
    return;
  }
  const size_t G = m.n.size();
  std::vector<double> v(G, 0.0);
  std::vector<int64_t> ok(G, 0);
  for (size_t g = 0; g < G; g++) {
    if (m.n[g] < 2) continue;
    ok[g] = 1;
    double var = NonNegative(m.m2[g]) / double(m.n[g] - 1);
    v[g] = a.op == AggOp::Var ? var : std::sqrt(var);
  }
  add(a.name, DoubleColumn(v, &ok));
}

CoMoments FinishCoMoments(ShiftedSums s) {
  const size_t G = s.n.size();
  CoMoments m(G);
  m.n = std::move(s.n);
  for (size_t g = 0; g < G; g++) {
    if (!m.n[g]) continue;
    const double n = double(m.n[g]);
    m.mx[g] = s.kx[g] + s.sx[g] / n;
    m.my[g] = s.ky[g] + s.sy[g] / n;
    m.m2x[g] = NonNegative(s.m2x[g] - s.sx[g] * s.sx[g] / n);
    m.m2y[g] = NonNegative(s.m2y[g] - s.sy[g] * s.sy[g] / n);
    m.cxy[g] = s.cxy[g] - s.sx[g] * s.sy[g] / n;
  }
  return m;
}

void AppendCorr(Table& out, const AggSpec& a, const CoMoments& m, bool emitState) {
  if (!emitState) {
    out.names.push_back(a.name);
    out.columns.push_back(CorrFinal(m));
    return;
  }
  out.names.push_back(a.name + kCorrParts[0]);
  out.columns.push_back(IntColumn(m.n));
  const std::vector<double>* fs[] = {&m.mx, &m.my, &m.m2x, &m.m2y, &m.cxy};
  for (size_t k = 0; k < 5; k++) {
    out.names.push_back(a.name + kCorrParts[k + 1]);
    out.columns.push_back(DoubleColumn(*fs[k], nullptr));
  }
}

void CheckAggs(const Table& t, const std::vector<AggSpec>& aggs, AggMode mode) {
  const bool raw = mode == AggMode::Full || mode == AggMode::Partial;
  for (const AggSpec& a : aggs) {
    if (mode != AggMode::Full && (a.op == AggOp::Median || a.op == AggOp::NUnique || a.op == AggOp::Quantile))
      throw BasinError("BASIN_INTERNAL", "aggregation '" + a.name + "' (median/quantile/nunique) is not decomposable: use mode 'full'");
    if (raw && a.op == AggOp::Corr && (a.column2 < 0 || size_t(a.column2) >= t.columns.size()))
      throw BasinError("BASIN_INTERNAL", "aggregation second column out of range");
    if (raw && !(a.op == AggOp::Count && a.column == -1) && (a.column < 0 || size_t(a.column) >= t.columns.size()))
      throw BasinError("BASIN_INTERNAL", "aggregation column out of range");
  }
}

void AppendAgg(Table& out, const Table& t, const Grouping& gr, const std::vector<int64_t>& groupRows, const AggSpec& a, AggMode mode) {
  const bool raw = mode == AggMode::Full || mode == AggMode::Partial;
  const bool emitState = mode == AggMode::Partial || mode == AggMode::Merge;
  Ctx x{gr.gid.data(), t.rows, gr.groups, &groupRows};
  auto add = [&](std::string name, Column c) {
    out.names.push_back(std::move(name));
    out.columns.push_back(std::move(c));
  };
  auto input = [&]() -> const Column& { return t.columns[size_t(a.column)]; };
  auto state = [&](const char* suffix) -> const Column& {
    int i = t.columnIndex(a.name + suffix);
    if (i < 0) throw BasinError("BASIN_INTERNAL", "missing aggregation state column '" + a.name + suffix + "'");
    return t.columns[size_t(i)];
  };
  switch (a.op) {
    case AggOp::Sum:
      add(a.name, SumAgg(raw ? input() : state(""), x));
      break;
    case AggOp::Min:
    case AggOp::Max:
      add(a.name, MinMaxAgg(raw ? input() : state(""), x, a.op == AggOp::Max));
      break;
    case AggOp::First:
    case AggOp::Last:
      add(a.name, FirstLastAgg(raw ? input() : state(""), x, a.op == AggOp::Last));
      break;
    case AggOp::Count:
      if (raw) add(a.name, IntColumn(a.column < 0 ? groupRows : NonNullCounts(input(), x)));
      else add(a.name, IntColumn(SumCounts(state(""), x)));
      break;
    case AggOp::Mean:
      if (raw) AppendMean(out, a.name, SumDoubles(input(), x), NonNullCounts(input(), x), emitState);
      else AppendMean(out, a.name, SumDoubles(state("#sum"), x), SumCounts(state("#count"), x), emitState);
      break;
    case AggOp::Var:
    case AggOp::Std: {
      const char* what = a.op == AggOp::Var ? "var" : "std";
      Moments m = raw ? ComputeMoments(input(), x, what) : MergeMoments(state("#count"), state("#mean"), state("#m2"), x);
      AppendMoments(out, a, m, emitState);
      break;
    }
    case AggOp::Median:
      add(a.name, MedianAgg(input(), x));
      break;
    case AggOp::NUnique:
      add(a.name, NUniqueAgg(input(), x));
      break;
    case AggOp::Quantile:
      add(a.name, QuantileAgg(input(), x, a.param, "quantile"));
      break;
    case AggOp::Corr: {
      CoMoments m(0);
      if (raw) {
        m = ComputeCoMoments(input(), t.columns[size_t(a.column2)], x);
      } else {
        std::vector<const Column*> s;
        for (const char* p : kCorrParts) s.push_back(&state(p));
        m = MergeCoMoments(s, x);
      }
      AppendCorr(out, a, m, emitState);
      break;
    }
  }
}

std::shared_ptr<Table> KeyColumns(const Table& t, const std::vector<int>& keys, const Grouping& gr) {
  auto out = std::make_shared<Table>();
  out->rows = gr.groups;
  for (int k : keys) {
    out->names.push_back(t.names[size_t(k)]);
    out->columns.push_back(Take(t.columns[size_t(k)], gr.firstRow.data(), gr.groups));
  }
  return out;
}

namespace {

// Whether grouping t by `keys` would leave nearly as many groups as rows, judged from
// the groups d among its first s rows: for n equally likely groups, d = n(1 − e^(−s/n)),
// solved for n; then the whole table's expected groups n(1 − e^(−rows/n)).
bool ShrinksLittle(const Table& t, const std::vector<int>& keys) {
  constexpr int64_t kSample = 32768;
  if (keys.empty() || t.rows < 4 * kSample) return false;
  Table keyed;
  keyed.rows = t.rows;
  for (int k : keys) {
    keyed.names.push_back(t.names[size_t(k)]);
    keyed.columns.push_back(t.columns[size_t(k)]);
  }
  std::vector<int> all(keys.size());
  for (size_t i = 0; i < all.size(); i++) all[i] = int(i);
  const double s = double(kSample), d = double(ComputeGrouping(*SliceTable(keyed, 0, kSample), all).groups);
  if (d >= s) return true;
  double lo = 1e-9, hi = 64;  // x = s/n; (1 − e^(−x))/x falls from 1 to 0 as x grows
  for (int i = 0; i < 60; i++) {
    const double x = (lo + hi) / 2;
    ((1 - std::exp(-x)) / x > d / s ? lo : hi) = x;
  }
  const double n = s / lo, rows = double(t.rows);
  return rows / (n * (1 - std::exp(-rows / n))) < 1.5;
}

// Each row its own group: the partial states of a table whose keys are nearly unique,
// so the final aggregation does the only grouping (its key columns are shared, not copied).
TablePtr PerRowStates(const Table& t, const std::vector<int>& keys, const std::vector<AggSpec>& aggs) {
  Grouping gr;
  gr.groups = t.rows;
  gr.gid.resize(size_t(t.rows));
  gr.firstRow.resize(size_t(t.rows));
  for (int64_t i = 0; i < t.rows; i++) gr.gid[size_t(i)] = uint32_t(i), gr.firstRow[size_t(i)] = i;
  const std::vector<int64_t> groupRows(size_t(t.rows), 1);
  auto out = std::make_shared<Table>();
  out->rows = t.rows;
  for (int k : keys) {
    out->names.push_back(t.names[size_t(k)]);
    out->columns.push_back(t.columns[size_t(k)]);
  }
  for (const AggSpec& a : aggs) AppendAgg(*out, t, gr, groupRows, a, AggMode::Partial);
  return out;
}

}  // namespace

TablePtr GroupByAgg(const Table& t, const std::vector<int>& keys, const std::vector<AggSpec>& aggs, AggMode mode,
                    const uint8_t* keep) {
  CheckAggs(t, aggs, mode);
  if (t.rows == 0) keep = nullptr;  // nothing to leave out
  // A partial aggregation that would not shrink its input is skipped (its hash pass
  // would be repeated by the final one for no gain): rows pass on as states.
  if (!keep && mode == AggMode::Partial && t.rows < int64_t(UINT32_MAX) && ShrinksLittle(t, keys))
    return PerRowStates(t, keys, aggs);
  Grouping gr = ComputeGrouping(t, keys, keep);
  std::vector<int64_t> groupRows = GroupRows(gr, t.rows);
  auto out = KeyColumns(t, keys, gr);
  for (const AggSpec& a : aggs) AppendAgg(*out, t, gr, groupRows, a, mode);
  return keep ? SliceTable(*out, 0, gr.groups - 1) : out;  // without the left-out rows' group
}

std::vector<TablePtr> HashPartition(const Table& t, const std::vector<int>& keys, int parts) {
  if (parts < 1) throw BasinError("BASIN_INTERNAL", "hashPartition needs at least one part");
  CheckKeys(t, keys);
  const int64_t n = t.rows;
  const uint32_t P = uint32_t(parts);
  PoolVector<uint32_t> pid(static_cast<size_t>(n));
  std::vector<int64_t> count(P + 1, 0);
  std::vector<uint64_t> hb(static_cast<size_t>(kBatch));
  for (int64_t b = 0; b < n; b += kBatch) {
    const int64_t cnt = std::min(kBatch, n - b);
    hash::HashRows(t, keys, b, cnt, hb.data());
    for (int64_t i = 0; i < cnt; i++) {
      uint32_t p = hash::PartitionOf(hb[size_t(i)], P);
      pid[size_t(b + i)] = p;
      count[p + 1]++;
    }
  }
  std::vector<int64_t> rows(count.begin() + 1, count.end());
  std::vector<std::shared_ptr<Table>> tables(P);
  for (uint32_t p = 0; p < P; p++) {
    tables[p] = std::make_shared<Table>();
    tables[p]->names = t.names;
    tables[p]->rows = rows[p];
  }
  for (const Column& c : t.columns) {
    std::vector<Column> cols = ScatterColumn(c, pid.data(), n, rows);
    for (uint32_t p = 0; p < P; p++) tables[p]->columns.push_back(std::move(cols[p]));
  }
  std::vector<TablePtr> out(tables.begin(), tables.end());
  return out;
}

}  // namespace basin
