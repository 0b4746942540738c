#include "ops/join.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "ops/hash.h"
#include "store/block_pool.h"
#include "store/store.h"

namespace basin {

JoinHow JoinHowFromName(const std::string& s) {
  if (s == "inner") return JoinHow::Inner;
  if (s == "left") return JoinHow::Left;
  if (s == "right") return JoinHow::Right;
  if (s == "outer") return JoinHow::Outer;
  if (s == "semi") return JoinHow::Semi;
  if (s == "anti") return JoinHow::Anti;
  throw BasinError("BASIN_INTERNAL", "unknown join type '" + s + "'");
}

namespace {

constexpr uint32_t kNone = kJoinNone;  // "no row": a null in the output
constexpr int64_t kBatch = 1024;
constexpr int64_t kPrefetch = 16;

// ---- key access, one per key kind ----
// Prepare fills, for rows [b, b+cnt): hb = row hash (hash.h), kv = the key stored in a
// slot (the canonical value for one fixed-width key, else the row hash), ok = no null key.

inline uint64_t Canon(int64_t v) { return uint64_t(v); }
inline uint64_t Canon(int32_t v) { return uint64_t(int64_t(v)); }
inline uint64_t Canon(uint8_t v) { return v; }
inline uint64_t Canon(double v) { return hash::CanonDouble(v); }

const uint8_t* ValidOf(const Column& c) { return c.validity ? c.validity->data() : nullptr; }

// One fixed-width key: equal slot keys are equal values, so no further comparison.
template <class T>
struct FixedKey {
  const T* v;
  const uint8_t* valid;
  explicit FixedKey(const Column& c) : v(c.data ? c.values<T>() : nullptr), valid(ValidOf(c)) {}
  void Prepare(int64_t b, int64_t cnt, uint64_t* hb, uint64_t* kv, uint8_t* ok) const {
    for (int64_t i = 0; i < cnt; i++) {
      uint64_t k = Canon(v[b + i]);
      kv[i] = k;
      hb[i] = hash::Mix64(k);  // = hash::HashColumn's value hash
      ok[i] = valid ? valid[b + i] : 1;
    }
  }
};
// Equality policies: eq(a, b) compares probe row a with right row b once their slot keys
// are equal; kVerify false means equal slot keys are equal keys. PrefetchRow/PrefetchData
// touch what eq will read of right row b (its offsets, then its bytes).
struct AlwaysEqual {
  static constexpr bool kVerify = false;
  bool operator()(int64_t, uint32_t) const { return true; }
  void PrefetchRow(uint32_t) const {}
  void PrefetchData(uint32_t) const {}
};

struct StringKey {
  const int64_t* off;
  const char* chars;
  const uint8_t* valid;
  explicit StringKey(const Column& c)
      : off(c.data ? c.values<int64_t>() : nullptr),
        chars(c.chars ? reinterpret_cast<const char*>(c.chars->data()) : nullptr),
        valid(ValidOf(c)) {}
  std::string_view str(int64_t r) const { return std::string_view(chars + off[r], size_t(off[r + 1] - off[r])); }
  void Prepare(int64_t b, int64_t cnt, uint64_t* hb, uint64_t* kv, uint8_t* ok) const {
    for (int64_t i = 0; i < cnt; i++) {
      const int64_t r = b + i;
      uint64_t h = hash::HashBytes(reinterpret_cast<const uint8_t*>(chars) + off[r], size_t(off[r + 1] - off[r]));
      hb[i] = kv[i] = h;
      ok[i] = valid ? valid[r] : 1;
    }
  }
};
struct StringEqual {
  const StringKey* a;
  const StringKey* b;
  static constexpr bool kVerify = true;
  bool operator()(int64_t ra, uint32_t rb) const { return a->str(ra) == b->str(rb); }
  void PrefetchRow(uint32_t rb) const { __builtin_prefetch(b->off + rb); }
  void PrefetchData(uint32_t rb) const { __builtin_prefetch(b->chars + b->off[rb]); }
};

struct MultiKey {
  const Table* t;
  const std::vector<int>* keys;
  std::vector<const uint8_t*> valids;
  MultiKey(const Table& table, const std::vector<int>& k) : t(&table), keys(&k) {
    for (int c : k)
      if (const uint8_t* v = ValidOf(table.columns[size_t(c)])) valids.push_back(v);
  }
  void Prepare(int64_t b, int64_t cnt, uint64_t* hb, uint64_t* kv, uint8_t* ok) const {
    hash::HashRows(*t, *keys, b, cnt, hb);
    std::copy(hb, hb + cnt, kv);
    std::fill(ok, ok + cnt, uint8_t(1));
    for (const uint8_t* v : valids)
      for (int64_t i = 0; i < cnt; i++) ok[i] &= v[b + i];
  }
};

// Equality of non-null multi-column keys across two tables.
struct MultiEqual {
  std::vector<std::pair<const Column*, const Column*>> cols;
  MultiEqual(const Table& ta, const std::vector<int>& ka, const Table& tb, const std::vector<int>& kb) {
    for (size_t i = 0; i < ka.size(); i++) cols.emplace_back(&ta.columns[size_t(ka[i])], &tb.columns[size_t(kb[i])]);
  }
  static constexpr bool kVerify = true;
  void PrefetchRow(uint32_t) const {}
  void PrefetchData(uint32_t) const {}
  bool operator()(int64_t ra, uint32_t rb) const {
    for (const auto& [a, b] : cols) {
      switch (a->type) {
        case DType::String:
          if (a->str(ra) != b->str(rb)) return false;
          break;
        case DType::Float64:
          if (hash::CanonDouble(a->values<double>()[ra]) != hash::CanonDouble(b->values<double>()[rb])) return false;
          break;
        case DType::Bool:
          if (a->values<uint8_t>()[ra] != b->values<uint8_t>()[rb]) return false;
          break;
        case DType::Date:
          if (a->values<int32_t>()[ra] != b->values<int32_t>()[rb]) return false;
          break;
        default:
          if (a->values<int64_t>()[ra] != b->values<int64_t>()[rb]) return false;
          break;
      }
    }
    return true;
  }
};

// ---- the hash table ----

// A scratch array of trivially copyable T; large ones are backed by transparent huge
// pages where the OS offers them (random probes into a big table then miss the TLB less).
template <class T>
class ScratchArray {
 public:
  void Assign(size_t n, const T& value) {
    constexpr size_t kHuge = size_t(2) << 20;
    size_t bytes = std::max<size_t>(n * sizeof(T), 1);
    void* p = nullptr;
    if (bytes >= 2 * kHuge) {
      bytes = (bytes + kHuge - 1) / kHuge * kHuge;
      p = std::aligned_alloc(kHuge, bytes);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
      if (p) madvise(p, bytes, MADV_HUGEPAGE);
#endif
    } else {
      p = std::malloc(bytes);
    }
    if (!p) throw std::bad_alloc();
    data_.reset(static_cast<T*>(p));
    size_ = n;
    std::fill(data_.get(), data_.get() + n, value);
  }
  size_t size() const { return size_; }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T* begin() { return data_.get(); }
  T* end() { return data_.get() + size_; }

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T[], Free> data_;
  size_t size_ = 0;
};

struct Slot {
  uint64_t key;
  uint32_t start;  // into rows_ (or the row itself while building / when every key is unique)
  uint32_t count;  // 0 = empty slot
};

class JoinTable {
 public:
  size_t capacity() const { return slots_.size(); }
  // Slot of each right row; kNone for rows with a null key.
  const PoolVector<uint32_t>& rowSlot() const { return rowSlot_; }
  // The right rows of a slot, in right input order (count of them).
  const uint32_t* RowsOf(const Slot& s) const { return unique_ ? &s.start : rows_.data() + s.start; }

  // eq(a, b): right rows a and b have equal keys (called only when slot keys are equal).
  template <class Side, class Eq>
  void Build(const Side& side, int64_t n, const Eq& eq) {
    size_t cap = 16;
    while (cap < size_t(n) + size_t(n) / 2) cap <<= 1;
    slots_.Assign(cap, Slot{0, 0, 0});
    mask_ = cap - 1;
    // ~16 filter bits per row, from the hash's top bits (slots use its low ones).
    size_t bits = 64;
    while (bits < 16 * size_t(n) && bits < (size_t(1) << 30)) bits <<= 1;
    filter_.assign(bits / 64, 0);
    filterShift_ = 64 - __builtin_ctzll(bits);
    rowSlot_.assign(size_t(n), kNone);
    uint64_t hb[kBatch], kv[kBatch];
    uint8_t ok[kBatch];
    for (int64_t b = 0; b < n; b += kBatch) {
      const int64_t cnt = std::min(kBatch, n - b);
      side.Prepare(b, cnt, hb, kv, ok);
      for (int64_t i = 0; i < cnt; i++) {
        if (i + kPrefetch < cnt) __builtin_prefetch(&slots_[hb[i + kPrefetch] & mask_], 1);
        if (!ok[i]) continue;
        const uint32_t r = uint32_t(b + i);
        const uint64_t bit = hb[i] >> filterShift_;
        filter_[bit >> 6] |= uint64_t(1) << (bit & 63);
        size_t j = hb[i] & mask_;
        for (;;) {
          Slot& s = slots_[j];
          if (s.count == 0) {
            s = Slot{kv[i], r, 1};
            break;
          }
          if (s.key == kv[i] && eq(r, s.start)) {
            s.count++;
            unique_ = false;
            break;
          }
          j = (j + 1) & mask_;
        }
        rowSlot_[r] = uint32_t(j);
      }
    }
    if (unique_) return;
    // CSR: ranges per slot, then rows in input order.
    uint32_t total = 0;
    for (Slot& s : slots_) {
      s.start = total;
      total += s.count;
    }
    rows_.resize(total);
    for (int64_t r = 0; r < n; r++) {
      uint32_t j = rowSlot_[size_t(r)];
      if (j != kNone) rows_[slots_[j].start++] = uint32_t(r);
    }
    for (Slot& s : slots_) s.start -= s.count;
  }

  // For each probe row l in order: onMatch(l, slotIndex, slot) or onMiss(l).
  // eq(l, r): probe row l and right row r have equal keys. Per batch: first the slot
  // whose stored key equals the probe's (prefetching slots ahead), then, when keys need
  // checking beyond that (Eq::kVerify), two prefetch passes over the right rows' key data
  // and the comparisons, so that the cache misses of a batch overlap.
  template <class Side, class Eq, class OnMatch, class OnMiss>
  void Probe(const Side& side, int64_t n, const Eq& eq, const OnMatch& onMatch, const OnMiss& onMiss) const {
    uint64_t hb[kBatch], kv[kBatch];
    uint8_t ok[kBatch];
    uint32_t cand[kBatch], live[kBatch];
    for (int64_t b = 0; b < n; b += kBatch) {
      const int64_t cnt = std::min(kBatch, n - b);
      side.Prepare(b, cnt, hb, kv, ok);
      // The rows whose filter bit is set (filter words prefetched ahead), then only their
      // slots: a slot prefetched for every row cost a DRAM line per probe in a large
      // table, most of them for rows the filter turns away (TPC-H Q5: 60M lineitem rows
      // against 2.3M orders, 6 in 7 missing).
      int64_t m = 0;
      for (int64_t i = 0; i < cnt; i++) {
        if (i + kPrefetch < cnt) PrefetchFilter(hb[i + kPrefetch]);
        live[m] = uint32_t(i);
        m += ok[i] && MayHold(hb[i]);
      }
      std::fill(cand, cand + cnt, kNone);
      for (int64_t k = 0; k < m; k++) {
        if (k + kPrefetch < m) __builtin_prefetch(&slots_[hb[live[k + kPrefetch]] & mask_]);
        const uint32_t i = live[k];
        cand[i] = Find(hb[i] & mask_, kv[i]);
        if (Eq::kVerify && cand[i] != kNone) eq.PrefetchRow(Rep(slots_[cand[i]]));
      }
      if (Eq::kVerify) {
        for (int64_t i = 0; i < cnt; i++)
          if (cand[i] != kNone) eq.PrefetchData(Rep(slots_[cand[i]]));
      }
      for (int64_t i = 0; i < cnt; i++) {
        const int64_t l = b + i;
        uint32_t j = cand[i];
        // A hash collision (rare): go on probing, comparing keys as we go.
        while (Eq::kVerify && j != kNone && !eq(l, Rep(slots_[j]))) j = Find((j + 1) & mask_, kv[i]);
        if (j == kNone) onMiss(l);
        else onMatch(l, size_t(j), slots_[j]);
      }
    }
  }

 private:
  uint32_t Rep(const Slot& s) const { return unique_ ? s.start : rows_[s.start]; }
  // False when no right row has this hash's filter bit: most misses end here, with a
  // well-predicted branch, instead of walking slots to an empty one (TPC-H Q17 probes
  // 6M lineitem rows against 200 parts).
  bool MayHold(uint64_t h) const {
    const uint64_t bit = h >> filterShift_;
    return (filter_[bit >> 6] >> (bit & 63)) & 1;
  }
  void PrefetchFilter(uint64_t h) const { __builtin_prefetch(&filter_[(h >> filterShift_) >> 6]); }
  // From slot j on, the first slot holding `key`, or kNone at an empty slot.
  uint32_t Find(size_t j, uint64_t key) const {
    for (;;) {
      const Slot& s = slots_[j];
      if (s.count == 0) return kNone;
      if (s.key == key) return uint32_t(j);
      j = (j + 1) & mask_;
    }
  }

  ScratchArray<Slot> slots_;
  std::vector<uint64_t> filter_;
  int filterShift_ = 58;
  PoolVector<uint32_t> rows_;
  PoolVector<uint32_t> rowSlot_;
  size_t mask_ = 0;
  bool unique_ = true;
};

// Output rows as (left row, right row) pairs; kNone = null side. Rows [0, split) all have
// a left row; rows [split, n) are unmatched right rows (right/outer joins).
using Pairs = JoinPairs;

// What a join's output may take: one task's output is made whole in memory and cannot
// be spilled while it is being made, so a join that multiplies rows past the memory
// limit fails with BASIN_OOM as soon as its pairs show it, not after the machine is full.
// A join that does not multiply (its output no longer than its two inputs together) never
// fails here, however large: its inputs were already held whole, and one key repeated in
// millions of rows on one side (skew) lands in a single task.
struct OutputBudget {
  int64_t limit = -1;      // bytes; -1: no limit
  double bytesPerRow = 0;  // the output row's estimated size, plus its pair of row numbers
  size_t inputRows = 0;    // left rows plus right rows: no join without multiplying makes more
  size_t nextCheck = size_t(1) << 20;

  void check(size_t rows) {
    if (rows < nextCheck) return;
    nextCheck = rows + (size_t(1) << 20);
    const double bytes = double(rows) * bytesPerRow;
    if (limit < 0 || bytes <= double(limit) || rows <= inputRows) return;
    throw BasinError("BASIN_OOM", "this join's output passed " + std::to_string(rows) + " rows (about " +
                                      std::to_string(int64_t(bytes / 1e6)) + " MB), more than the memory limit of " +
                                      std::to_string(limit / 1000000) +
                                      " MB allows: many rows share a key on both sides, so the join multiplies them; "
                                      "check the join keys, filter or aggregate before joining, or raise --memory-limit");
  }
};

// The hash table over `nr` right rows.
template <class RSide, class EqRR>
std::shared_ptr<const JoinTable> BuildTable(const RSide& rs, int64_t nr, const EqRR& eqRR) {
  auto jt = std::make_shared<JoinTable>();
  jt->Build(rs, nr, eqRR);
  return jt;
}

// ---- broadcast builds, shared ----
// A broadcast join sends the same right side to every left partition, and building
// its hash table is most of such a join's work: the table is built once per process
// (the workers are threads) and reused while the right tables live. An entry knows
// its tables by weak pointers, so it lapses when the store lets them go; purged
// entries free their memory (Purge, after each run and at each lookup).
class BuildCache {
 public:
  static BuildCache& Instance() {
    static BuildCache cache;
    return cache;
  }

  // One right side (its parts, keyed on `keys`): the parts concatenated and the hash
  // table, each made once; a second caller waits for the first one's.
  class Entry {
   public:
    // The right side: the one part, or the parts concatenated (kept while they live).
    TablePtr Whole(const std::vector<TablePtr>& parts) {
      if (parts.size() == 1) return parts[0];
      std::lock_guard<std::mutex> g(mu_);
      if (!whole_) whole_ = ConcatTables(parts);
      return whole_;
    }
    template <class Build>
    std::shared_ptr<const JoinTable> Table(const basin::Table& whole, const Build& build) {
      std::lock_guard<std::mutex> g(mu_);
      if (!table_) table_ = build(whole);
      return table_;
    }

   private:
    friend class BuildCache;
    std::vector<std::weak_ptr<const basin::Table>> parts_;
    std::vector<const basin::Table*> ptrs_;
    std::vector<int> keys_;
    std::mutex mu_;
    TablePtr whole_;
    std::shared_ptr<const JoinTable> table_;
  };

  std::shared_ptr<Entry> Find(const std::vector<TablePtr>& parts, const std::vector<int>& keys) {
    std::lock_guard<std::mutex> g(mu_);
    PurgeLocked();
    for (auto& e : entries_)
      if (e->keys_ == keys && Same(*e, parts)) return e;
    auto e = std::make_shared<Entry>();
    e->keys_ = keys;
    for (const TablePtr& t : parts) e->parts_.emplace_back(t), e->ptrs_.push_back(t.get());
    if (entries_.size() >= kMaxEntries) entries_.erase(entries_.begin());
    entries_.push_back(e);
    return e;
  }

  size_t Purge() {
    std::lock_guard<std::mutex> g(mu_);
    PurgeLocked();
    return entries_.size();
  }

 private:
  static constexpr size_t kMaxEntries = 16;

  static bool Same(const Entry& e, const std::vector<TablePtr>& parts) {
    if (e.ptrs_.size() != parts.size()) return false;
    for (size_t i = 0; i < parts.size(); i++)
      if (e.ptrs_[i] != parts[i].get()) return false;
    return true;
  }

  // While an entry's weak pointer lives, its table's memory is not reused, so a live
  // entry's pointers name the same tables; one lapsed part lapses the entry.
  void PurgeLocked() {
    entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                  [](const std::shared_ptr<Entry>& e) {
                                    for (const auto& w : e->parts_)
                                      if (w.expired()) return true;
                                    return false;
                                  }),
                   entries_.end());
  }

  std::mutex mu_;
  std::vector<std::shared_ptr<Entry>> entries_;
};

template <class LSide, class EqLR>
void RunJoin(const JoinTable& jt, const LSide& ls, int64_t nl, int64_t nr, const EqLR& eqLR, JoinHow how, Pairs& out,
             OutputBudget& budget) {
  out.l.reserve(size_t(nl));
  if (how == JoinHow::Semi || how == JoinHow::Anti) {
    const bool semi = how == JoinHow::Semi;
    jt.Probe(
        ls, nl, eqLR, [&](int64_t l, size_t, const Slot&) { if (semi) out.l.push_back(uint32_t(l)); },
        [&](int64_t l) { if (!semi) out.l.push_back(uint32_t(l)); });
    out.split = out.l.size();
    return;
  }
  const bool keepMiss = how == JoinHow::Left || how == JoinHow::Outer;
  const bool markHits = how == JoinHow::Right || how == JoinHow::Outer;
  std::vector<uint8_t> hit(markHits ? jt.capacity() : 0);
  out.r.reserve(size_t(nl));
  jt.Probe(
      ls, nl, eqLR,
      [&](int64_t l, size_t j, const Slot& s) {
        if (markHits) hit[j] = 1;
        const uint32_t* rows = jt.RowsOf(s);
        if (s.count == 1) {
          out.l.push_back(uint32_t(l));
          out.r.push_back(rows[0]);
        } else {
          budget.check(out.l.size() + s.count);
          out.l.insert(out.l.end(), s.count, uint32_t(l));
          out.r.insert(out.r.end(), rows, rows + s.count);
        }
      },
      [&](int64_t l) {
        if (keepMiss) {
          out.l.push_back(uint32_t(l));
          out.r.push_back(kNone);
        }
      });
  out.split = out.l.size();
  if (markHits) {
    const PoolVector<uint32_t>& rowSlot = jt.rowSlot();
    for (int64_t r = 0; r < nr; r++) {
      uint32_t j = rowSlot[size_t(r)];
      if (j == kNone || !hit[j]) {
        out.l.push_back(kNone);
        out.r.push_back(uint32_t(r));
      }
    }
  }
}

// ---- gathering output columns ----

template <class T, bool Missing>
void GatherValues(const uint8_t* src, const uint32_t* idx, int64_t n, uint8_t* dst) {
  const T* s = reinterpret_cast<const T*>(src);
  T* d = reinterpret_cast<T*>(dst);
  for (int64_t i = 0; i < n; i++) {
    if (Missing) {
      uint32_t j = idx[i];
      d[i] = j == kNone ? T() : s[j];
    } else {
      d[i] = s[idx[i]];
    }
  }
}

template <bool Missing>
void GatherFixed(const Column& src, const uint32_t* idx, int64_t n, uint8_t* d) {
  const uint8_t* s = src.data->data();
  switch (ElementSize(src.type)) {
    case 8: return GatherValues<int64_t, Missing>(s, idx, n, d);
    case 4: return GatherValues<int32_t, Missing>(s, idx, n, d);
    default: return GatherValues<uint8_t, Missing>(s, idx, n, d);
  }
}

// Rows idx[0..n) of src; kNone gives a null (only when maybeMissing). Shares src when
// idx is every row in order. Every output byte is written, so buffers start uninitialised.
Column GatherOrNull(const Column& src, const uint32_t* idx, int64_t n, bool maybeMissing) {
  if (n == src.length && !maybeMissing) {
    int64_t i = 0;
    while (i < n && idx[i] == uint32_t(i)) i++;
    if (i == n) return src;
  }
  Column c;
  c.type = src.type;
  c.length = n;
  if (src.type == DType::String) {
    const int64_t* off = src.values<int64_t>();
    c.data = MakeBufferNoInit(size_t(n + 1) * 8);
    int64_t* o = c.data->as<int64_t>();
    o[0] = 0;
    for (int64_t i = 0; i < n; i++) {
      uint32_t j = idx[i];
      o[i + 1] = o[i] + (j == kNone ? 0 : off[j + 1] - off[j]);
    }
    c.chars = MakeBufferNoInit(size_t(o[n]));
    uint8_t* ch = c.chars->data();
    const uint8_t* sc = src.chars ? src.chars->data() : nullptr;
    for (int64_t i = 0; i < n; i++) {
      uint32_t j = idx[i];
      if (j != kNone) std::memcpy(ch + o[i], sc + off[j], size_t(o[i + 1] - o[i]));
    }
  } else {
    c.data = MakeBufferNoInit(size_t(n) * ElementSize(src.type));
    if (maybeMissing) GatherFixed<true>(src, idx, n, c.data->data());
    else GatherFixed<false>(src, idx, n, c.data->data());
  }
  if (src.validity || maybeMissing) {
    BufferPtr v = MakeBufferNoInit(size_t(n));
    uint8_t* out = v->data();
    const uint8_t* sv = ValidOf(src);
    int64_t nulls = 0;
    for (int64_t i = 0; i < n; i++) {
      uint32_t j = idx[i];
      uint8_t x = j == kNone ? 0 : (sv ? sv[j] : 1);
      out[i] = x;
      nulls += x == 0;
    }
    if (nulls) c.validity = std::move(v);
  }
  return c;
}

void CheckColumn(const Table& t, int c, const char* what) {
  if (c < 0 || size_t(c) >= t.columns.size()) throw BasinError("BASIN_INTERNAL", std::string(what) + " column out of range");
}

}  // namespace

void CheckJoin(const Table& left, const Table& right, const JoinSpec& spec) {
  const size_t K = spec.leftKeys.size();
  if (K == 0 || spec.rightKeys.size() != K) throw BasinError("BASIN_INTERNAL", "a join needs the same number (>= 1) of left and right keys");
  for (size_t k = 0; k < K; k++) {
    CheckColumn(left, spec.leftKeys[k], "left key");
    CheckColumn(right, spec.rightKeys[k], "right key");
    DType lt = left.columns[size_t(spec.leftKeys[k])].type, rt = right.columns[size_t(spec.rightKeys[k])].type;
    if (lt != rt)
      throw BasinError("BASIN_TYPE", std::string("cannot join a ") + DTypeName(lt) + " key with a " + DTypeName(rt) + " key");
  }
  const bool leftOnly = spec.how == JoinHow::Semi || spec.how == JoinHow::Anti;
  for (const JoinOutput& o : spec.output) {
    switch (o.side) {
      case JoinOutput::Side::Left: CheckColumn(left, o.column, "left output"); break;
      case JoinOutput::Side::Right: CheckColumn(right, o.column, "right output"); break;
      case JoinOutput::Side::Key:
        if (o.column < 0 || size_t(o.column) >= K) throw BasinError("BASIN_INTERNAL", "output key out of range");
        break;
    }
    if (leftOnly && o.side != JoinOutput::Side::Left)
      throw BasinError("BASIN_INTERNAL", "semi and anti joins output only left columns");
  }
  // Row numbers and slot indices are 32-bit (kNone excluded).
  if (left.rows >= int64_t(kNone) || right.rows > (int64_t(1) << 30))
    throw BasinError("BASIN_INTERNAL", "a join side has too many rows");
}

// Bytes an output row of `spec` takes (strings at their sides' average length), plus its pair.
double OutputRowBytes(const Table& left, const Table& right, const JoinSpec& spec) {
  double bytes = 2 * sizeof(uint32_t);
  for (const JoinOutput& o : spec.output) {
    const Table& t = o.side == JoinOutput::Side::Right ? right : left;
    const int col = o.side == JoinOutput::Side::Key ? spec.leftKeys[size_t(o.column)] : o.column;
    const Column& c = t.columns[size_t(col)];
    bytes += double(ElementSize(c.type)) + 1;  // value and validity
    if (c.type == DType::String && c.chars && t.rows > 0) bytes += double(c.chars->size()) / double(t.rows);
  }
  return bytes;
}

namespace {

// The join of `left` with `right`; `table(build)` gives the hash table over the right
// rows, made by `build(right)` (or taken from the broadcast cache).
template <class TableOf>
TablePtr JoinWith(const Table& left, const Table& right, const JoinSpec& spec, const TableOf& table) {
  CheckJoin(left, right, spec);
  const size_t K = spec.leftKeys.size();
  Pairs p;
  const int64_t nl = left.rows, nr = right.rows;
  OutputBudget budget{Store::Instance().memoryStats().hostLimit, OutputRowBytes(left, right, spec), size_t(nl + nr)};
  if (K == 1) {
    const Column& lc = left.columns[size_t(spec.leftKeys[0])];
    const int rk = spec.rightKeys[0];
    auto fixed = [&](auto tag) {
      using T = decltype(tag);
      auto jt = table([&](const Table& r) { return BuildTable(FixedKey<T>(r.columns[size_t(rk)]), r.rows, AlwaysEqual()); });
      RunJoin(*jt, FixedKey<T>(lc), nl, nr, AlwaysEqual(), spec.how, p, budget);
    };
    switch (lc.type) {
      case DType::Int64:
      case DType::Timestamp: fixed(int64_t()); break;
      case DType::Float64: fixed(double()); break;
      case DType::Date: fixed(int32_t()); break;
      case DType::Bool: fixed(uint8_t()); break;
      case DType::String: {
        auto jt = table([&](const Table& r) {
          StringKey rs(r.columns[size_t(rk)]);
          return BuildTable(rs, r.rows, StringEqual{&rs, &rs});
        });
        StringKey ls(lc), rs(right.columns[size_t(rk)]);
        RunJoin(*jt, ls, nl, nr, StringEqual{&ls, &rs}, spec.how, p, budget);
        break;
      }
    }
  } else {
    auto jt = table([&](const Table& r) {
      return BuildTable(MultiKey(r, spec.rightKeys), r.rows, MultiEqual(r, spec.rightKeys, r, spec.rightKeys));
    });
    RunJoin(*jt, MultiKey(left, spec.leftKeys), nl, nr, MultiEqual(left, spec.leftKeys, right, spec.rightKeys), spec.how,
            p, budget);
  }
  return AssembleJoin(left, right, spec, p);
}

}  // namespace

TablePtr HashJoin(const Table& left, const Table& right, const JoinSpec& spec) {
  return JoinWith(left, right, spec, [&](const auto& build) { return build(right); });
}

TablePtr BroadcastJoin(const Table& left, const std::vector<TablePtr>& rights, const JoinSpec& spec) {
  if (rights.empty()) throw BasinError("BASIN_INTERNAL", "a broadcast join has no right side");
  CheckJoin(left, *rights[0], spec);  // before anything is built for a bad call
  auto entry = BuildCache::Instance().Find(rights, spec.rightKeys);
  TablePtr right = entry->Whole(rights);
  return JoinWith(left, *right, spec, [&](const auto& build) { return entry->Table(*right, build); });
}

size_t PurgeBroadcastBuilds() { return BuildCache::Instance().Purge(); }

TablePtr AssembleJoin(const Table& left, const Table& right, const JoinSpec& spec, const JoinPairs& p) {
  return AssembleJoin(spec, int64_t(p.l.size()), int64_t(p.split),
                      [&](bool isLeft, int column, int64_t start, int64_t n, bool maybeMissing) {
                        const Table& t = isLeft ? left : right;
                        const uint32_t* idx = (isLeft ? p.l.data() : p.r.data()) + start;
                        return GatherOrNull(t.columns[size_t(column)], idx, n, maybeMissing);
                      });
}

std::vector<std::vector<JoinPiece>> JoinColumnPieces(const JoinSpec& spec, int64_t n, int64_t split) {
  const bool leftMissing = split < n;  // unmatched right rows have no left row
  const bool rightMissing = spec.how == JoinHow::Left || spec.how == JoinHow::Outer;
  std::vector<std::vector<JoinPiece>> out;
  for (const JoinOutput& o : spec.output) {
    switch (o.side) {
      case JoinOutput::Side::Left:
        out.push_back({JoinPiece{true, o.column, 0, n, leftMissing}});
        break;
      case JoinOutput::Side::Right:
        out.push_back({JoinPiece{false, o.column, 0, n, rightMissing}});
        break;
      case JoinOutput::Side::Key: {
        const int lk = spec.leftKeys[size_t(o.column)], rk = spec.rightKeys[size_t(o.column)];
        // Rows before `split` have a left row whose key is the coalesced one (a matched
        // pair's keys are equal, an unmatched left row has no right key); after it, the
        // right row's key.
        if (!leftMissing) out.push_back({JoinPiece{true, lk, 0, n, false}});
        else out.push_back({JoinPiece{true, lk, 0, split, false}, JoinPiece{false, rk, split, n - split, false}});
        break;
      }
    }
  }
  return out;
}

TablePtr AssembleJoin(const JoinSpec& spec, int64_t n, int64_t split, const JoinGather& gather) {
  auto out = std::make_shared<Table>();
  out->rows = n;
  const auto pieces = JoinColumnPieces(spec, n, split);
  for (size_t i = 0; i < pieces.size(); i++) {
    out->names.push_back(spec.output[i].name);
    std::vector<Column> parts;
    for (const JoinPiece& p : pieces[i]) parts.push_back(gather(p.left, p.column, p.start, p.n, p.maybeMissing));
    if (parts.size() == 1) {
      out->columns.push_back(std::move(parts[0]));
    } else {
      std::vector<const Column*> ptrs;
      for (const Column& c : parts) ptrs.push_back(&c);
      out->columns.push_back(Concat(ptrs));
    }
  }
  return out;
}

}  // namespace basin
