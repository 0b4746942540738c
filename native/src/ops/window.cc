#include "ops/window.h"

#include <algorithm>
#include <vector>
#include <cmath>
#include <deque>
#include <limits>

#include "ops/groupby.h"

namespace basin {
namespace {

// Where a kernel reads and writes. Position k stands for input row idx[k] (row k when
// idx is null); segments [bounds[s], bounds[s + 1]) of positions are independent (the
// groups); only input rows [outBegin, outBegin + outCount) are output, the others are
// carried rows of neighbouring partitions.
struct Layout {
  const int64_t* idx = nullptr;
  std::vector<int64_t> bounds;
  int64_t outBegin = 0, outCount = 0;
  int64_t row(int64_t k) const { return idx ? idx[k] : k; }
  int64_t slot(int64_t r) const {
    r -= outBegin;
    return r >= 0 && r < outCount ? r : -1;
  }
  template <typename F> void segments(F f) const {
    for (size_t s = 0; s + 1 < bounds.size(); s++) f(bounds[s], bounds[s + 1]);
  }
};

// A typed result column, every row null until set.
template <typename T> struct Out {
  std::vector<T> v;
  std::vector<uint8_t> ok;
  explicit Out(int64_t n) : v(size_t(n)), ok(size_t(n), 0) {}
  void set(int64_t i, T x) {
    v[size_t(i)] = x;
    ok[size_t(i)] = 1;
  }
  Column finish(DType type) {
    Column c;
    c.type = type;
    c.length = int64_t(v.size());
    c.data = MakeBuffer(v.size() * sizeof(T));
    if (!v.empty()) std::memcpy(c.data->data(), v.data(), v.size() * sizeof(T));
    if (std::find(ok.begin(), ok.end(), 0) != ok.end()) {
      c.validity = MakeBuffer(ok.size());
      std::memcpy(c.validity->data(), ok.data(), ok.size());
    }
    return c;
  }
};

// Whether a orders before b; NaN after every number (sort.h).
template <typename T> bool Before(T a, T b) { return a < b; }
template <> bool Before<double>(double a, double b) { return !std::isnan(a) && (std::isnan(b) || a < b); }

// Sums wrap on int64 overflow instead of being undefined.
inline int64_t Add(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }
inline double Add(double a, double b) { return a + b; }
inline int32_t Add(int32_t a, int32_t b) { return a + b; }
inline int64_t Sub(int64_t a, int64_t b) { return int64_t(uint64_t(a) - uint64_t(b)); }
inline double Sub(double a, double b) { return a - b; }
inline int32_t Sub(int32_t a, int32_t b) { return a - b; }

// Calls f with a value of the C type that stores `t` (the caller picks which types it allows).
template <typename F> Column ByType(DType t, bool dates, F f) {
  switch (t) {
    case DType::Int64: return f(int64_t{});
    case DType::Float64: return f(double{});
    case DType::Timestamp:
      if (dates) return f(int64_t{});
      break;
    case DType::Date:
      if (dates) return f(int32_t{});
      break;
    default: break;
  }
  throw BasinError("BASIN_INTERNAL", std::string("window function on a ") + DTypeName(t) + " column");
}

template <typename T> Column Cumulative(const Column& c, const Layout& L, WindowOp op) {
  const T* x = c.values<T>();
  const uint8_t* vd = c.validity ? c.validity->data() : nullptr;
  Out<T> out(L.outCount);
  L.segments([&](int64_t s, int64_t e) {
    bool has = false;
    T acc{};
    for (int64_t k = s; k < e; k++) {
      int64_t r = L.row(k);
      if (!vd || vd[r]) {
        T v = x[r];
        if (!has) acc = v, has = true;
        else if (op == WindowOp::CumSum) acc = Add(acc, v);
        else if (op == WindowOp::CumMax ? Before(acc, v) : Before(v, acc)) acc = v;
      }
      int64_t o = L.slot(r);
      if (o >= 0 && has) out.set(o, acc);
    }
  });
  return out.finish(c.type);
}

// For each output row, the input row `n` positions earlier in its segment, or -1.
std::vector<int64_t> SourceRows(const Layout& L, int64_t n) {
  std::vector<int64_t> src(size_t(L.outCount), -1);
  L.segments([&](int64_t s, int64_t e) {
    for (int64_t k = s; k < e; k++) {
      int64_t o = L.slot(L.row(k));
      int64_t j = k - n;
      if (o >= 0 && j >= s && j < e) src[size_t(o)] = L.row(j);
    }
  });
  return src;
}

// Rows src of c (any type); null where src is -1.
Column TakeOrNull(const Column& c, const std::vector<int64_t>& src) {
  std::vector<int64_t> idx(src);
  bool missing = false;
  for (auto& i : idx)
    if (i < 0) i = 0, missing = true;
  Column out = Take(c, idx.data(), int64_t(idx.size()));
  if (missing) {
    auto v = MakeBuffer(idx.size());
    const uint8_t* had = out.validity ? out.validity->data() : nullptr;
    for (size_t i = 0; i < idx.size(); i++) v->data()[i] = src[i] >= 0 && (!had || had[i]);
    out.validity = v;
  }
  return out;
}

template <typename T> Column Diff(const Column& c, const Layout& L, const std::vector<int64_t>& src) {
  const T* x = c.values<T>();
  const uint8_t* vd = c.validity ? c.validity->data() : nullptr;
  Out<T> out(L.outCount);
  for (int64_t o = 0; o < L.outCount; o++) {
    int64_t r = L.outBegin + o, j = src[size_t(o)];
    if (j >= 0 && (!vd || (vd[r] && vd[j]))) out.set(o, Sub(x[r], x[j]));
  }
  return out.finish(c.type);
}

// A sum over a sliding window: values enter at its end (sign 1) and the oldest leaves
// (sign -1). Exact for ints (wrapping). Doubles are never subtracted, which loses a
// small value beside a huge one that then leaves (1e40, 0.1: 0.1 came back as 0) and
// turns a window that held 1e308 + 1e308 = inf into inf - inf = NaN for good: the
// window is a queue of two stacks, the older values kept as sums of each one and all
// older than it in the window, the newer ones as a running sum, so the window's sum
// adds at most two sums of values that are all in it (amortised O(1) a value).
template <typename T> struct WindowSum {
  T sum{};
  void add(T v, int sign) { sum = sign > 0 ? Add(sum, v) : Sub(sum, v); }
  T value() const { return sum; }
  void reset() { sum = T{}; }
};
template <> struct WindowSum<double> {
  std::vector<double> older;  // older.back(): the sum of the older values, the oldest included
  std::vector<double> newer;  // values in order of arrival
  double newerSum = 0;
  void add(double v, int sign) {
    if (sign > 0) {
      newer.push_back(v);
      newerSum += v;
      return;
    }
    if (older.empty()) {
      // The newer values become the older ones: sums from the newest down to the oldest.
      double sum = 0;
      for (size_t i = newer.size(); i-- > 0;) older.push_back(sum += newer[i]);
      newer.clear();
      newerSum = 0;
    }
    if (!older.empty()) older.pop_back();
  }
  double value() const { return (older.empty() ? 0.0 : older.back()) + newerSum; }
  void reset() {
    older.clear();
    newer.clear();
    newerSum = 0;
  }
};

// Rolling sum or mean in O(rows): values enter at the window's end and leave at its start.
template <typename T, typename R> Column RollingSum(const Column& c, const Layout& L, const WindowSpec& sp, DType type) {
  const T* x = c.values<T>();
  const uint8_t* vd = c.validity ? c.validity->data() : nullptr;
  const bool mean = sp.op == WindowOp::RollingMean;
  Out<R> out(L.outCount);
  L.segments([&](int64_t s, int64_t e) {
    WindowSum<T> acc;
    int64_t count = 0;
    for (int64_t k = s; k < e; k++) {
      int64_t r = L.row(k);
      if (!vd || vd[r]) acc.add(x[r], 1), count++;
      if (k - sp.n >= s) {
        int64_t gone = L.row(k - sp.n);
        if (!vd || vd[gone]) acc.add(x[gone], -1), count--;
        if (count == 0) acc.reset();  // drop rounding left by values that came and went
      }
      int64_t o = L.slot(r);
      if (o >= 0 && count >= sp.minPeriods && count > 0) out.set(o, mean ? R(double(acc.value()) / double(count)) : R(acc.value()));
    }
  });
  return out.finish(type);
}

// Rolling min or max in O(rows) with a monotonic deque of positions whose values are
// candidates, best first.
template <typename T> Column RollingExtreme(const Column& c, const Layout& L, const WindowSpec& sp) {
  const T* x = c.values<T>();
  const uint8_t* vd = c.validity ? c.validity->data() : nullptr;
  const bool max = sp.op == WindowOp::RollingMax;
  Out<T> out(L.outCount);
  std::deque<int64_t> dq;
  L.segments([&](int64_t s, int64_t e) {
    dq.clear();
    int64_t count = 0;
    for (int64_t k = s; k < e; k++) {
      int64_t r = L.row(k);
      if (!vd || vd[r]) {
        T v = x[r];
        // A candidate that is no better than the newer v can never be the answer again.
        while (!dq.empty() && (max ? !Before(v, x[L.row(dq.back())]) : !Before(x[L.row(dq.back())], v))) dq.pop_back();
        dq.push_back(k);
        count++;
      }
      if (k - sp.n >= s && (!vd || vd[L.row(k - sp.n)])) count--;
      while (!dq.empty() && dq.front() <= k - sp.n) dq.pop_front();
      int64_t o = L.slot(r);
      if (o >= 0 && count >= sp.minPeriods && !dq.empty()) out.set(o, x[L.row(dq.front())]);
    }
  });
  return out.finish(c.type);
}

Column RunSpec(const Column& c, const Layout& L, const WindowSpec& sp) {
  switch (sp.op) {
    case WindowOp::Shift: return TakeOrNull(c, SourceRows(L, sp.n));
    case WindowOp::Diff: {
      std::vector<int64_t> src = SourceRows(L, sp.n);
      return ByType(c.type, false, [&](auto t) { return Diff<decltype(t)>(c, L, src); });
    }
    case WindowOp::CumSum: return ByType(c.type, false, [&](auto t) { return Cumulative<decltype(t)>(c, L, sp.op); });
    case WindowOp::CumMin:
    case WindowOp::CumMax: return ByType(c.type, true, [&](auto t) { return Cumulative<decltype(t)>(c, L, sp.op); });
    case WindowOp::RollingSum:
      return ByType(c.type, false, [&](auto t) { return RollingSum<decltype(t), decltype(t)>(c, L, sp, c.type); });
    case WindowOp::RollingMean:
      return ByType(c.type, false, [&](auto t) { return RollingSum<decltype(t), double>(c, L, sp, DType::Float64); });
    case WindowOp::RollingMin:
    case WindowOp::RollingMax: return ByType(c.type, true, [&](auto t) { return RollingExtreme<decltype(t)>(c, L, sp); });
  }
  throw BasinError("BASIN_INTERNAL", "unknown window function");
}

// Positions grouped by key (a stable counting sort of rows by group id) and the groups' bounds.
void GroupLayout(const Table& t, const std::vector<int>& keys, std::vector<int64_t>& perm, Layout& L) {
  Grouping g = ComputeGrouping(t, keys);
  std::vector<int64_t> start(size_t(g.groups) + 1, 0);
  for (uint32_t id : g.gid) start[id + 1]++;
  for (size_t i = 1; i < start.size(); i++) start[i] += start[i - 1];
  L.bounds = start;
  perm.resize(size_t(t.rows));
  for (int64_t r = 0; r < t.rows; r++) perm[size_t(start[g.gid[size_t(r)]]++)] = r;
  L.idx = perm.data();
}

}  // namespace

WindowOp WindowOpFromName(const std::string& s) {
  if (s == "cumSum") return WindowOp::CumSum;
  if (s == "cumMin") return WindowOp::CumMin;
  if (s == "cumMax") return WindowOp::CumMax;
  if (s == "shift") return WindowOp::Shift;
  if (s == "diff") return WindowOp::Diff;
  if (s == "rollingSum") return WindowOp::RollingSum;
  if (s == "rollingMean") return WindowOp::RollingMean;
  if (s == "rollingMin") return WindowOp::RollingMin;
  if (s == "rollingMax") return WindowOp::RollingMax;
  throw BasinError("BASIN_INTERNAL", "unknown window function '" + s + "'");
}

bool IsCumulative(WindowOp op) { return op == WindowOp::CumSum || op == WindowOp::CumMin || op == WindowOp::CumMax; }

TablePtr WindowEval(const Table& t, const std::vector<WindowSpec>& specs, const std::vector<int>& keys, const Table* before,
                    const Table* after) {
  const int64_t B = before ? before->rows : 0, A = after ? after->rows : 0;
  if (!keys.empty() && (B > 0 || A > 0)) throw BasinError("BASIN_INTERNAL", "grouped windows take no carries");
  Layout L;
  std::vector<int64_t> perm;
  if (keys.empty()) L.bounds = {0, B + t.rows + A};
  else GroupLayout(t, keys, perm, L);
  L.outBegin = B;
  L.outCount = t.rows;
  auto out = std::make_shared<Table>(t);
  for (size_t i = 0; i < specs.size(); i++) {
    const Column& src = t.columns[size_t(specs[i].column)];
    std::vector<const Column*> parts;
    if (B > 0) parts.push_back(&before->columns[i]);
    parts.push_back(&src);
    if (A > 0) parts.push_back(&after->columns[i]);
    out->columns.push_back(parts.size() == 1 ? RunSpec(src, L, specs[i]) : RunSpec(Concat(parts), L, specs[i]));
    out->names.push_back(specs[i].name);
  }
  return out;
}

TablePtr WindowCarry(const Table& t, const std::vector<WindowSpec>& specs, int64_t rows, bool fromEnd) {
  const int64_t take = std::min(rows, t.rows), begin = fromEnd ? t.rows - take : 0;
  std::vector<int64_t> idx(static_cast<size_t>(take));
  for (int64_t i = 0; i < take; i++) idx[size_t(i)] = begin + i;
  auto out = std::make_shared<Table>();
  out->rows = take;
  for (size_t i = 0; i < specs.size(); i++) {
    const Column& c = t.columns[size_t(specs[i].column)];
    if (fromEnd && take > 0 && IsCumulative(specs[i].op)) {
      // The running aggregate at the last `take` rows; only the last one is kept.
      Layout L;
      L.bounds = {0, t.rows};
      L.outBegin = begin;
      L.outCount = take;
      Column agg = RunSpec(c, L, specs[i]);
      auto v = MakeBuffer(size_t(take));
      v->data()[take - 1] = agg.valid(take - 1);
      agg.validity = v;
      out->columns.push_back(std::move(agg));
    } else {
      out->columns.push_back(Take(c, idx.data(), take));
    }
    out->names.push_back("c" + std::to_string(i));
  }
  return out;
}

std::vector<TablePtr> WindowScan(const std::vector<TablePtr>& carries, const std::vector<WindowSpec>& specs, int64_t rows,
                                 bool fromEnd) {
  if (carries.empty()) return {};
  // Carry column i belongs to spec i.
  std::vector<WindowSpec> own(specs);
  for (size_t i = 0; i < own.size(); i++) own[i].column = int(i);
  std::vector<TablePtr> out(carries.size());
  TablePtr state = SliceTable(*carries[0], 0, 0);
  const size_t P = carries.size();
  for (size_t step = 0; step < P; step++) {
    size_t p = fromEnd ? step : P - 1 - step;
    out[p] = state;
    TablePtr both = fromEnd ? ConcatTables({state, carries[p]}) : ConcatTables({carries[p], state});
    state = WindowCarry(*both, own, rows, fromEnd);
  }
  return out;
}

TablePtr WithRowIndex(const Table& t, int64_t start, const std::string& name) {
  auto out = std::make_shared<Table>(t);
  Out<int64_t> index(t.rows);
  for (int64_t i = 0; i < t.rows; i++) index.set(i, start + i);
  out->columns.push_back(index.finish(DType::Int64));
  out->names.push_back(name);
  return out;
}

}  // namespace basin
