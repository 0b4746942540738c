// Case mapping of code points for str.lower / str.upper: ASCII, Latin-1, Latin
// Extended-A, Greek and Cyrillic by a fixed table (no locale). Shared by the CPU kernels
// (expr_string.cc) and the GPU's (cuda/expr_kernel.cu), so both map exactly the same letters.
#pragma once
#include <cstdint>

#include "ops/host_device.h"

namespace basin {

// Latin Extended-A pairs: [lo, hi] ranges where the upper-case letter has parity `upperParity`.
struct PairRange {
  uint32_t lo, hi, upperParity;
};
#define BASIN_CASE_PAIRS {{0x100, 0x12F, 0}, {0x132, 0x137, 0}, {0x139, 0x148, 1}, {0x14A, 0x177, 0}, {0x179, 0x17E, 1}}

BASIN_HD inline uint32_t ToLower(uint32_t c) {
  if (c < 0x80) return c >= 'A' && c <= 'Z' ? c + 32 : c;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 0x20;
  const PairRange kPairs[] = BASIN_CASE_PAIRS;  // a local: device code reads no host globals
  for (const auto& r : kPairs)
    if (c >= r.lo && c <= r.hi) return c % 2 == r.upperParity ? c + 1 : c;
  if (c == 0x130) return 'i';
  if (c == 0x178) return 0xFF;
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 0x20;
  if (c >= 0x410 && c <= 0x42F) return c + 0x20;
  if (c >= 0x400 && c <= 0x40F) return c + 0x50;
  if (c == 0x1E9E) return 0xDF;
  return c;
}

BASIN_HD inline uint32_t ToUpper(uint32_t c) {
  if (c < 0x80) return c >= 'a' && c <= 'z' ? c - 32 : c;
  if (c >= 0xE0 && c <= 0xFE && c != 0xF7) return c - 0x20;
  if (c == 0xFF) return 0x178;
  if (c == 0xDF) return 0x1E9E;  // ß → ẞ, as DuckDB
  if (c == 0xB5) return 0x39C;   // micro sign → Greek capital mu
  const PairRange kPairs[] = BASIN_CASE_PAIRS;
  for (const auto& r : kPairs)
    if (c >= r.lo && c <= r.hi) return c % 2 != r.upperParity ? c - 1 : c;
  if (c == 0x131) return 'I';
  if (c == 0x17F) return 'S';
  if (c == 0x3C2) return 0x3A3;  // final sigma
  if (c >= 0x3B1 && c <= 0x3C9) return c - 0x20;
  if (c >= 0x430 && c <= 0x44F) return c - 0x20;
  if (c >= 0x450 && c <= 0x45F) return c - 0x50;
  return c;
}

#undef BASIN_CASE_PAIRS

}  // namespace basin
