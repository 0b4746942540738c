// Bytes of strings in device code: comparing, searching and counting code points the
// way the CPU's string functions do (ops/expr_string.cc), for the expression kernel and
// the string builder.
#pragma once
#include <cstdint>

#include "cuda/device_table.cuh"

namespace basin {
namespace gpu {

// Row `row` of a string column view: its bytes and length; false for a null.
__device__ inline bool StringAt(const ColumnView& c, int64_t row, const uint8_t*& s, int64_t& n) {
  const int64_t p = c.sel ? c.sel[row] : row;
  const int64_t* off = static_cast<const int64_t*>(c.data);
  s = c.chars + off[p];
  n = off[p + 1] - off[p];
  return !c.validity || c.validity[p];
}

// Bytewise three-way comparison (unsigned bytes, then length), as string_view::compare.
__device__ inline int CompareBytes(const uint8_t* a, int64_t na, const uint8_t* b, int64_t nb) {
  const int64_t n = na < nb ? na : nb;
  for (int64_t k = 0; k < n; k++)
    if (a[k] != b[k]) return a[k] < b[k] ? -1 : 1;
  return na < nb ? -1 : na > nb;
}

__device__ inline bool SameBytes(const uint8_t* a, const uint8_t* b, int64_t n) {
  for (int64_t k = 0; k < n; k++)
    if (a[k] != b[k]) return false;
  return true;
}

// Where pattern p (m bytes) first occurs in s (n bytes) at or after `from`; -1 if nowhere.
// Plain search: row strings are short, and each thread has its own.
__device__ inline int64_t FindBytes(const uint8_t* s, int64_t n, const uint8_t* p, int64_t m, int64_t from) {
  for (int64_t at = from; at + m <= n; at++)
    if (SameBytes(s + at, p, m)) return at;
  return -1;
}

// Code points, counted as expr_string.cc's CharCount: the bytes that are not UTF-8 continuations.
__device__ inline int64_t CharCount(const uint8_t* s, int64_t n) {
  int64_t c = 0;
  for (int64_t k = 0; k < n; k++) c += (s[k] & 0xC0) != 0x80;
  return c;
}

}  // namespace gpu
}  // namespace basin
