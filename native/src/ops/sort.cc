// Sorting: the permutation is sorted one key column at a time. Level k sorts each run
// of rows that tie on keys 0..k-1 by key k alone (nulls split off first), then finds the
// runs that tie on key k for the next level. Every run enters a level in ascending row
// order, so sorting (key, row) pairs by the whole pair gives a stable sort.
//
// A fixed-width key becomes an order-preserving unsigned 64-bit form (sign bit flipped
// for integers, the usual bit trick for floats; descending inverts every bit), so one
// LSD radix sort of (key, row) pairs serves every fixed type. A string key is radix-
// sorted by its first 8 bytes, then runs with equal prefixes are compared in full.
#include "ops/sort.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>

namespace basin {
namespace {

constexpr uint64_t kSign = 1ULL << 63;
constexpr int64_t kSmallSort = 256;  // below this, std::sort beats radix

// Order-preserving form of a double: -0.0 == 0.0, every NaN one value above +inf.
inline uint64_t NormDouble(double d) {
  if (d == 0.0) return kSign;
  if (std::isnan(d)) return 0xFFF8000000000000ULL;
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return (u & kSign) ? ~u : (u | kSign);
}

struct I64Key {
  const int64_t* v;
  uint64_t operator()(int64_t i) const { return uint64_t(v[i]) ^ kSign; }
};
struct I32Key {
  const int32_t* v;
  uint64_t operator()(int64_t i) const { return uint64_t(int64_t(v[i])) ^ kSign; }
};
struct BoolKey {
  const uint8_t* v;
  uint64_t operator()(int64_t i) const { return v[i] != 0; }
};
struct F64Key {
  const double* v;
  uint64_t operator()(int64_t i) const { return NormDouble(v[i]); }
};

// Calls f with the key functor of a fixed-width column (not strings).
template <class F>
void WithFixedKey(const Column& c, F&& f) {
  switch (c.type) {
    case DType::Float64: f(F64Key{c.values<double>()}); break;
    case DType::Bool: f(BoolKey{c.values<uint8_t>()}); break;
    case DType::Date: f(I32Key{c.values<int32_t>()}); break;
    case DType::Int64:
    case DType::Timestamp: f(I64Key{c.values<int64_t>()}); break;
    case DType::String: throw BasinError("BASIN_INTERNAL", "WithFixedKey on a string column");
  }
}

inline uint64_t NormAt(const Column& c, int64_t i) {
  switch (c.type) {
    case DType::Float64: return NormDouble(c.values<double>()[i]);
    case DType::Bool: return c.values<uint8_t>()[i] != 0;
    case DType::Date: return uint64_t(int64_t(c.values<int32_t>()[i])) ^ kSign;
    default: return uint64_t(c.values<int64_t>()[i]) ^ kSign;
  }
}

// Ascending comparison of two non-null values of the same type: -1, 0, 1.
inline int CompareValues(const Column& a, int64_t i, const Column& b, int64_t j) {
  if (a.type == DType::String) {
    int c = a.str(i).compare(b.str(j));
    return (c > 0) - (c < 0);
  }
  uint64_t x = NormAt(a, i), y = NormAt(b, j);
  return (x > y) - (x < y);
}

// Row i of a against row j of b on one key, in the key's sort order.
inline int CompareKey(const Column& a, int64_t i, const Column& b, int64_t j, const SortKey& k) {
  bool an = !a.valid(i), bn = !b.valid(j);
  if (an || bn) {
    if (an && bn) return 0;
    return an == k.nullsFirst ? -1 : 1;
  }
  int c = CompareValues(a, i, b, j);
  return k.descending ? -c : c;
}

// Big-endian first 8 bytes of a string, zero padded: compares like the bytes do.
inline uint64_t StringPrefix(const uint8_t* p, int64_t len) {
  uint64_t v = 0;
  if (len >= 8) {
    std::memcpy(&v, p, 8);
    return __builtin_bswap64(v);
  }
  for (int64_t j = 0; j < len; j++) v |= uint64_t(p[j]) << (56 - 8 * j);
  return v;
}

struct KeyRow {
  KeyRow() {}  // left uninitialised: scratch arrays of these are overwritten before use
  KeyRow(uint64_t k, int64_t r) : key(k), row(r) {}
  uint64_t key;
  int64_t row;
};

inline bool PairLess(const KeyRow& a, const KeyRow& b) { return a.key < b.key || (a.key == b.key && a.row < b.row); }

// Stable LSD radix sort of (key, row) pairs by key, 8 bits a pass, skipping bytes that
// are the same in every key. Returns the buffer that holds the result (a or tmp).
KeyRow* RadixSort(KeyRow* a, KeyRow* tmp, int64_t n) {
  std::vector<int64_t> hist(8 * 256, 0);
  for (int64_t i = 0; i < n; i++) {
    uint64_t k = a[i].key;
    for (int b = 0; b < 8; b++) hist[size_t(b * 256 + ((k >> (8 * b)) & 255))]++;
  }
  KeyRow* src = a;
  KeyRow* dst = tmp;
  for (int b = 0; b < 8; b++) {
    int64_t* h = hist.data() + b * 256;
    if (h[(src[0].key >> (8 * b)) & 255] == n) continue;  // one bucket: nothing moves
    int64_t sum = 0;
    for (int d = 0; d < 256; d++) {
      int64_t c = h[d];
      h[d] = sum;
      sum += c;
    }
    const int shift = 8 * b;
    for (int64_t i = 0; i < n; i++) dst[h[(src[i].key >> shift) & 255]++] = src[i];
    std::swap(src, dst);
  }
  return src;
}

struct Run {
  int64_t begin, end;
};

class Sorter {
 public:
  explicit Sorter(int64_t n) : perm_(size_t(n)) {
    std::iota(perm_.begin(), perm_.end(), int64_t(0));
    if (n > 1) runs_.push_back(Run{0, n});
  }

  // Sorts every current run by column c; keeps the runs that tie on c when needRuns.
  void level(const Column& c, const SortKey& k, bool needRuns) {
    next_.clear();
    needRuns_ = needRuns;
    for (const Run& r : runs_) {
      int64_t b = r.begin, e = r.end;
      if (c.validity) {
        int64_t nulls = splitNulls(c, k.nullsFirst, b, e);
        if (nulls == e - b) {
          if (needRuns) next_.push_back(r);
          continue;
        }
        if (nulls > 0) {
          Run nr = k.nullsFirst ? Run{b, b + nulls} : Run{e - nulls, e};
          if (needRuns && nulls > 1) next_.push_back(nr);
          if (k.nullsFirst) b += nulls;
          else e -= nulls;
        }
      }
      if (e - b < 2) continue;
      if (c.type == DType::String) sortStrings(c, k.descending, b, e);
      else WithFixedKey(c, [&](auto key) { sortFixed(key, k.descending, b, e); });
    }
    runs_.swap(next_);
  }

  bool done() const { return runs_.empty(); }
  std::vector<int64_t> take() { return std::move(perm_); }

 private:
  // Moves the null rows of [b, e) to its front or back, keeping order; returns how many.
  int64_t splitNulls(const Column& c, bool nullsFirst, int64_t b, int64_t e) {
    const uint8_t* v = c.validity->data();
    int64_t* p = perm_.data();
    int64_t nulls = 0;
    for (int64_t i = b; i < e; i++) nulls += v[p[i]] == 0;
    if (nulls == 0 || nulls == e - b) return nulls;
    scratch_.clear();
    const uint8_t front = nullsFirst ? 0 : 1;  // validity of the rows that stay in front
    int64_t w = b;
    for (int64_t i = b; i < e; i++) {
      if ((v[p[i]] != 0) == (front != 0)) p[w++] = p[i];
      else scratch_.push_back(p[i]);
    }
    std::copy(scratch_.begin(), scratch_.end(), p + w);
    return nulls;
  }

  KeyRow* pairs(int64_t n) {
    if (int64_t(a_.size()) < n) {
      a_.resize(size_t(n));
      tmp_.resize(size_t(n));
    }
    return a_.data();
  }

  // Sorts x[0, n) by (key, row); returns where the result is.
  KeyRow* sortPairs(KeyRow* x, int64_t n) {
    bool sorted = true;
    for (int64_t i = 1; i < n && sorted; i++) sorted = x[i - 1].key <= x[i].key;
    if (sorted) return x;
    if (n < kSmallSort) {
      std::sort(x, x + n, PairLess);
      return x;
    }
    return RadixSort(x, tmp_.data(), n);
  }

  template <class Key>
  void sortFixed(Key key, bool desc, int64_t b, int64_t e) {
    const int64_t n = e - b;
    KeyRow* x = pairs(n);
    int64_t* p = perm_.data() + b;
    const uint64_t flip = desc ? ~uint64_t(0) : 0;
    for (int64_t i = 0; i < n; i++) x[i] = KeyRow{key(p[i]) ^ flip, p[i]};
    KeyRow* s = sortPairs(x, n);
    for (int64_t i = 0; i < n; i++) p[i] = s[i].row;
    if (!needRuns_) return;
    int64_t start = 0;
    for (int64_t i = 1; i <= n; i++) {
      if (i == n || s[i].key != s[start].key) {
        if (i - start > 1) next_.push_back(Run{b + start, b + i});
        start = i;
      }
    }
  }

  // Strings sort 8 bytes at a time (MSD): rows are radix-sorted by bytes [8d, 8d+8)
  // (zero padded), and each run that ties there goes one chunk deeper while some of its
  // strings are longer than 8(d+1); otherwise its strings differ only in length (every
  // remaining byte is zero or padding), so the shorter one sorts first.
  void sortStrings(const Column& c, bool desc, int64_t b0, int64_t e0) {
    const int64_t* off = c.values<int64_t>();
    const uint8_t* chars = c.chars->data();
    const uint64_t flip = desc ? ~uint64_t(0) : 0;
    struct Work {
      int64_t begin, end, depth;
    };
    std::vector<Work> stack{Work{b0, e0, 0}};
    while (!stack.empty()) {
      const Work w = stack.back();
      stack.pop_back();
      const int64_t b = w.begin, n = w.end - w.begin, at = 8 * w.depth;
      KeyRow* x = pairs(n);
      int64_t* p = perm_.data() + b;
      // The longest and shortest strings here, from the offsets this loop reads anyway:
      // when none goes past this chunk, or all are as long, the tie runs below need no
      // second look at each row's offsets (a cache miss per row, rows being in sorted
      // order by now: a fifth of a sort by short string keys).
      int64_t minLen = INT64_MAX, maxLen = 0;
      for (int64_t i = 0; i < n; i++) {
        const int64_t r = p[i], whole = off[r + 1] - off[r], len = whole - at;
        minLen = std::min(minLen, whole);
        maxLen = std::max(maxLen, whole);
        x[i] = KeyRow{(len > 0 ? StringPrefix(chars + off[r] + at, len) : 0) ^ flip, r};
      }
      KeyRow* s = sortPairs(x, n);
      for (int64_t i = 0; i < n; i++) p[i] = s[i].row;
      const bool deeper = maxLen > at + 8;  // some tie run may differ past this chunk
      const bool sameLength = minLen == maxLen;
      int64_t start = 0;
      int64_t longest = 0;  // bytes after this chunk, the most in the current tie run
      for (int64_t i = 0; i <= n; i++) {
        if (i == n || s[i].key != s[start].key) {
          if (i - start > 1) {
            // Equal but for their lengths: shorter first. (sortFixed reuses the scratch
            // pairs, but only their first i - start entries, which this loop has read.)
            if (longest > 0) stack.push_back(Work{b + start, b + i, w.depth + 1});
            else if (!sameLength) sortFixed([off](int64_t r) { return uint64_t(off[r + 1] - off[r]); }, desc, b + start, b + i);
            else if (needRuns_) next_.push_back(Run{b + start, b + i});  // equal strings: the next key decides
          }
          start = i;
          longest = 0;
        }
        if (i < n && deeper) longest = std::max(longest, off[s[i].row + 1] - off[s[i].row] - at - 8);
      }
    }
  }

  std::vector<int64_t> perm_;
  std::vector<Run> runs_, next_;
  std::vector<KeyRow> a_, tmp_;
  std::vector<int64_t> scratch_;
  bool needRuns_ = false;
};

void CheckKeys(const Table& t, const std::vector<SortKey>& keys) {
  for (const SortKey& k : keys)
    if (k.column < 0 || size_t(k.column) >= t.columns.size())
      throw BasinError("BASIN_INTERNAL", "sort key column " + std::to_string(k.column) + " out of range");
}

// Take, with prefetching: a sort's gather reads rows in random order.
Column GatherColumn(const Column& src, const int64_t* idx, int64_t n) {
  constexpr int64_t kAhead = 16;
  Column c;
  c.type = src.type;
  c.length = n;
  if (src.type == DType::String) {
    const int64_t* off = src.values<int64_t>();
    const uint8_t* chars = src.chars->data();
    c.data = MakeBuffer(size_t(n + 1) * 8);
    int64_t* o = c.data->as<int64_t>();
    std::vector<int64_t> from(static_cast<size_t>(n));
    o[0] = 0;
    for (int64_t i = 0; i < n; i++) {
      if (i + kAhead < n) __builtin_prefetch(off + idx[i + kAhead]);
      const int64_t r = idx[i];
      from[size_t(i)] = off[r];
      o[i + 1] = o[i] + (off[r + 1] - off[r]);
    }
    c.chars = MakeBuffer(size_t(o[n]));
    uint8_t* ch = c.chars->data();
    for (int64_t i = 0; i < n; i++) {
      if (i + kAhead < n) __builtin_prefetch(chars + from[size_t(i + kAhead)]);
      std::memcpy(ch + o[i], chars + from[size_t(i)], size_t(o[i + 1] - o[i]));
    }
  } else {
    const size_t w = ElementSize(src.type);
    c.data = MakeBuffer(size_t(n) * w);
    auto gather = [&](auto* d, const auto* s) {
      for (int64_t i = 0; i < n; i++) {
        if (i + kAhead < n) __builtin_prefetch(s + idx[i + kAhead]);
        d[i] = s[idx[i]];
      }
    };
    if (w == 8) gather(c.data->as<uint64_t>(), src.values<uint64_t>());
    else if (w == 4) gather(c.data->as<uint32_t>(), src.values<uint32_t>());
    else gather(c.data->as<uint8_t>(), src.values<uint8_t>());
  }
  if (src.validity) {
    const uint8_t* v = src.validity->data();
    std::vector<uint8_t> out(static_cast<size_t>(n));
    bool any = false;
    for (int64_t i = 0; i < n; i++) {
      if (i + kAhead < n) __builtin_prefetch(v + idx[i + kAhead]);
      out[size_t(i)] = v[idx[i]];
      any |= out[size_t(i)] == 0;
    }
    if (any) {
      c.validity = MakeBuffer(size_t(n));
      std::memcpy(c.validity->data(), out.data(), size_t(n));
    }
  }
  return c;
}

}  // namespace

uint64_t SortOrderKey(const Column& c, int64_t i) { return NormAt(c, i); }

std::vector<int64_t> SortIndices(const Table& t, const std::vector<SortKey>& keys) {
  CheckKeys(t, keys);
  Sorter s(t.rows);
  for (size_t k = 0; k < keys.size() && !s.done(); k++)
    s.level(t.columns[size_t(keys[k].column)], keys[k], k + 1 < keys.size());
  return s.take();
}

TablePtr GatherRows(const Table& t, const int64_t* idx, int64_t n) {
  auto out = std::make_shared<Table>();
  out->names = t.names;
  out->rows = n;
  out->columns.reserve(t.columns.size());
  for (const Column& c : t.columns) out->columns.push_back(GatherColumn(c, idx, n));
  return out;
}

TablePtr SortTable(const Table& t, const std::vector<SortKey>& keys) {
  std::vector<int64_t> perm = SortIndices(t, keys);
  return GatherRows(t, perm.data(), t.rows);
}

TablePtr SortBoundaries(const Table& t, const std::vector<SortKey>& keys, int parts) {
  if (parts < 1) throw BasinError("BASIN_INTERNAL", "sortBoundaries needs at least one part");
  std::vector<int64_t> perm = SortIndices(t, keys);
  const int64_t n = t.rows;
  auto same = [&](int64_t a, int64_t b) {
    for (const SortKey& k : keys) {
      const Column& c = t.columns[size_t(k.column)];
      if (CompareKey(c, a, c, b, k) != 0) return false;
    }
    return true;
  };
  std::vector<int64_t> pos;
  for (int64_t i = 1; i < parts && n > 0; i++) {
    // The last row of part i in an even split of the sorted rows.
    int64_t q = int64_t((__int128(i) * n) / parts) - 1;
    if (q < 0) continue;
    int64_t row = perm[size_t(q)];
    if (!pos.empty() && same(row, pos.back())) continue;
    if (same(row, perm[size_t(n - 1)])) break;  // the last part would be empty
    pos.push_back(row);
  }
  auto out = std::make_shared<Table>();
  out->rows = int64_t(pos.size());
  for (const SortKey& k : keys) {
    out->names.push_back(t.names[size_t(k.column)]);
    out->columns.push_back(Take(t.columns[size_t(k.column)], pos.data(), out->rows));
  }
  return out;
}

std::vector<TablePtr> RangePartition(const Table& t, const std::vector<SortKey>& keys, const Table& bounds) {
  CheckKeys(t, keys);
  if (bounds.columns.size() != keys.size())
    throw BasinError("BASIN_INTERNAL", "rangePartition: bounds need one column per key");
  for (size_t k = 0; k < keys.size(); k++)
    if (bounds.columns[k].type != t.columns[size_t(keys[k].column)].type)
      throw BasinError("BASIN_INTERNAL", "rangePartition: bound column " + std::to_string(k) + " has another type than its key");
  const int64_t n = t.rows, B = bounds.rows;
  const size_t P = size_t(B + 1);
  std::vector<uint32_t> pid(size_t(n), 0);
  std::vector<int64_t> start(P + 1, 0);
  if (B > 0) {
    // Part of row r: the first bound with r <= bound (binary search), B when none.
    auto cmp = [&](int64_t r, int64_t j) {
      for (size_t k = 0; k < keys.size(); k++) {
        int c = CompareKey(t.columns[size_t(keys[k].column)], r, bounds.columns[k], j, keys[k]);
        if (c != 0) return c;
      }
      return 0;
    };
    // One fixed-width key: compare (null class, order-preserving key) pairs directly.
    const bool fastOne = keys.size() == 1 && t.columns[size_t(keys[0].column)].type != DType::String;
    std::vector<uint64_t> bk;
    std::vector<uint8_t> bnull;
    if (fastOne) {
      const Column& bc = bounds.columns[0];
      const uint64_t flip = keys[0].descending ? ~uint64_t(0) : 0;
      for (int64_t j = 0; j < B; j++) {
        bool isNull = !bc.valid(j);
        bnull.push_back(isNull ? (keys[0].nullsFirst ? 0 : 2) : 1);
        bk.push_back(isNull ? 0 : NormAt(bc, j) ^ flip);
      }
    }
    for (int64_t r = 0; r < n; r++) {
      int64_t lo = 0, hi = B;
      if (fastOne) {
        const Column& c = t.columns[size_t(keys[0].column)];
        const bool isNull = !c.valid(r);
        const uint8_t cls = isNull ? (keys[0].nullsFirst ? 0 : 2) : 1;
        const uint64_t key = isNull ? 0 : NormAt(c, r) ^ (keys[0].descending ? ~uint64_t(0) : 0);
        while (lo < hi) {
          int64_t mid = (lo + hi) / 2;
          bool le = cls < bnull[size_t(mid)] || (cls == bnull[size_t(mid)] && key <= bk[size_t(mid)]);
          if (le) hi = mid;
          else lo = mid + 1;
        }
      } else {
        while (lo < hi) {
          int64_t mid = (lo + hi) / 2;
          if (cmp(r, mid) <= 0) hi = mid;
          else lo = mid + 1;
        }
      }
      pid[size_t(r)] = uint32_t(lo);
      start[size_t(lo) + 1]++;
    }
  } else {
    start[1] = n;
  }
  for (size_t p = 0; p < P; p++) start[p + 1] += start[p];
  std::vector<int64_t> idx(static_cast<size_t>(n));
  {
    std::vector<int64_t> at(start.begin(), start.end() - 1);
    for (int64_t r = 0; r < n; r++) idx[size_t(at[pid[size_t(r)]]++)] = r;
  }
  std::vector<TablePtr> out;
  out.reserve(P);
  for (size_t p = 0; p < P; p++) out.push_back(GatherRows(t, idx.data() + start[p], start[p + 1] - start[p]));
  return out;
}

}  // namespace basin
