// Hashing and comparing key rows (1..kMaxKeys columns read through their views) in
// device code, and the slot a row claims in an open-addressing table of them: the
// group-by's hash table (rows of one table) and the join's (right rows, probed by left
// rows) agree on what equal keys are. As ops/hash.h: ints and dates
// sign-extended, bools 0/1, floats canonical (-0.0 is 0.0, all NaNs one key), strings
// by their bytes, null equal to null. The hash is the device's own (strings: FNV-1a,
// mixed); it never leaves the device, so it need not be the host's.
#pragma once
#include <vector>

#include "cuda/column_access.cuh"
#include "ops/hash.h"

namespace basin {
namespace gpu {

constexpr int kMaxKeys = 8;

// The key columns of one table, passed to kernels by value.
struct Keys {
  ColumnView cols[kMaxKeys];
  int count;
};

// The views of key columns `keys` of t (uploaded on first use); at most kMaxKeys.
inline Keys KeysOf(DTable& t, const std::vector<int>& keys) {
  Keys k{};
  k.count = int(keys.size());
  for (size_t i = 0; i < keys.size(); i++) k.cols[i] = t.view(keys[i]);
  return k;
}

__device__ inline uint64_t CanonDouble(double d) {
  if (d == 0.0) return 0;
  if (isnan(d)) return 0x7ff8000000000000ULL;
  return uint64_t(__double_as_longlong(d));
}

// The canonical 64-bit form of a fixed-width key (as ops/hash.h: ints sign-extended, floats canonical).
__device__ inline uint64_t Canon(const ColumnView& c, int64_t p) {
  switch (c.type) {
    case DType::Float64: return CanonDouble(static_cast<const double*>(c.data)[p]);
    case DType::Bool: return static_cast<const uint8_t*>(c.data)[p];
    case DType::Date: return uint64_t(int64_t(static_cast<const int32_t*>(c.data)[p]));
    default: return uint64_t(static_cast<const int64_t*>(c.data)[p]);
  }
}

__device__ inline uint64_t KeyHash(const ColumnView& c, int64_t row) {
  const int64_t p = Phys(c, row);
  if (c.validity && !c.validity[p]) return hash::kNullHash;
  if (c.type != DType::String) return hash::Mix64(Canon(c, p));
  const int64_t* off = static_cast<const int64_t*>(c.data);
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a, then mixed
  for (int64_t i = off[p]; i < off[p + 1]; i++) h = (h ^ c.chars[i]) * 0x100000001b3ULL;
  return hash::Mix64(h ^ uint64_t(off[p + 1] - off[p]));
}

// Whether row a of column view x and row b of column view y (of the same type) hold equal keys.
__device__ inline bool KeyEq(const ColumnView& x, int64_t a, const ColumnView& y, int64_t b) {
  const int64_t pa = Phys(x, a), pb = Phys(y, b);
  const bool va = !x.validity || x.validity[pa], vb = !y.validity || y.validity[pb];
  if (va != vb) return false;
  if (!va) return true;
  if (x.type != DType::String) return Canon(x, pa) == Canon(y, pb);
  const int64_t* xo = static_cast<const int64_t*>(x.data);
  const int64_t* yo = static_cast<const int64_t*>(y.data);
  const int64_t len = xo[pa + 1] - xo[pa];
  if (len != yo[pb + 1] - yo[pb]) return false;
  const uint8_t* s = x.chars + xo[pa];
  const uint8_t* t = y.chars + yo[pb];
  for (int64_t i = 0; i < len; i++)
    if (s[i] != t[i]) return false;
  return true;
}

// The hash of a key row: the first column's, then Combine with each next one's.
__device__ inline uint64_t RowHash(const Keys& k, int64_t row) {
  uint64_t h = KeyHash(k.cols[0], row);
  for (int i = 1; i < k.count; i++) h = hash::Combine(h, KeyHash(k.cols[i], row));
  return h;
}

// Whether row a of keys x and row b of keys y (the same count and types) are equal keys.
__device__ inline bool RowsEq(const Keys& x, int64_t a, const Keys& y, int64_t b) {
  for (int i = 0; i < x.count; i++)
    if (!KeyEq(x.cols[i], a, y.cols[i], b)) return false;
  return true;
}

// No slot: FindOrInsert's claim budget was spent before the row found its key.
constexpr uint64_t kNoSlot = ~0ULL;

// The slot of row `row` of keys k in an open-addressing table with linear probing
// (slotRow: a representative row per slot, -1 empty): the slot holding an equal key,
// claimed with an atomic when none does. A claimed slot never changes, so a plain read
// that sees a row is final. Without a budget (limit ~0) the table must have more slots
// than rows. With one, `claimed` counts the slots claimed, and once it passes `limit`
// the table is given up: the claiming row and every row still probing get kNoSlot (so
// probing stops even if the table fills), and the caller sees the count past the limit.
// A table of 2 × limit slots that is not given up was never more than half full.
__device__ inline uint64_t FindOrInsert(const Keys& k, int64_t row, int32_t* slotRow, uint64_t mask,
                                        unsigned long long* claimed = nullptr, unsigned long long limit = ~0ULL) {
  const bool budget = limit != ~0ULL;
  uint64_t s = RowHash(k, row) & mask;
  for (;;) {
    int32_t r = slotRow[s];
    if (r == -1) {
      const int32_t old = atomicCAS(&slotRow[s], -1, int32_t(row));
      if (old == -1) return budget && atomicAdd(claimed, 1ULL) >= limit ? kNoSlot : s;
      r = old;
    }
    if (r == row || RowsEq(k, r, k, row)) return s;
    if (budget && *(volatile unsigned long long*)claimed > limit) return kNoSlot;
    s = (s + 1) & mask;
  }
}

// Whether no key column of the row is null (joins: only such rows can match).
__device__ inline bool RowValid(const Keys& k, int64_t row) {
  for (int i = 0; i < k.count; i++) {
    int64_t p;
    if (!Valid(k.cols[i], row, p)) return false;
  }
  return true;
}

}  // namespace gpu
}  // namespace basin
