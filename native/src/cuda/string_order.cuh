// The CPU's order of strings in device code (ops/sort.cc CompareKey): unsigned bytes, a
// prefix before its extensions. A key carries the first 8 bytes so that most
// comparisons read no characters (the GPU sort and the group-by's string aggregates).
#pragma once
#include "cuda/column_access.cuh"

namespace basin {
namespace gpu {

// A string as a merge sort moves it: the first 8 bytes big-endian, zero padded (two
// strings whose prefixes differ compare as the prefixes do), the logical row, and the
// length capped at 9 (-1: null).
struct StrKey {
  uint64_t prefix;
  int32_t row;
  int32_t len;
};

__device__ inline StrKey StrKeyOf(const ColumnView& c, int32_t row) {
  int64_t p;
  if (!Valid(c, row, p)) return StrKey{0, row, -1};
  const int64_t* off = static_cast<const int64_t*>(c.data);
  const int64_t b = off[p], len = off[p + 1] - b;
  uint64_t prefix = 0;
  for (int64_t j = 0; j < len && j < 8; j++) prefix |= uint64_t(c.chars[b + j]) << (56 - 8 * j);
  return StrKey{prefix, row, int32_t(len < 9 ? len : 9)};
}

// -1, 0 or 1 as the strings of two non-null keys of column c compare.
__device__ inline int CompareStr(const ColumnView& c, const StrKey& a, const StrKey& b) {
  if (a.prefix != b.prefix) return a.prefix < b.prefix ? -1 : 1;
  // Equal first 8 bytes (padding included): the bytes after them, then the lengths.
  if (a.len <= 8 && b.len <= 8) return (a.len > b.len) - (a.len < b.len);
  const int64_t* off = static_cast<const int64_t*>(c.data);
  const int64_t pa = Phys(c, a.row), pb = Phys(c, b.row);
  const int64_t la = off[pa + 1] - off[pa], lb = off[pb + 1] - off[pb], m = la < lb ? la : lb;
  const uint8_t *x = c.chars + off[pa], *y = c.chars + off[pb];
  for (int64_t j = 8; j < m; j++)
    if (x[j] != y[j]) return x[j] < y[j] ? -1 : 1;
  return (la > lb) - (la < lb);
}

}  // namespace gpu
}  // namespace basin
