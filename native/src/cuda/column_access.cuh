// Reading a row of a column view in device code: through its selection, its validity,
// and its values widened to int64 or double (the group-by and join kernels' common reads).
#pragma once
#include "cuda/device_table.cuh"

namespace basin {
namespace gpu {

__device__ inline int64_t Phys(const ColumnView& c, int64_t row) { return c.sel ? c.sel[row] : row; }

__device__ inline bool Valid(const ColumnView& c, int64_t row, int64_t& p) {
  p = Phys(c, row);
  return !c.validity || c.validity[p];
}

__device__ inline double AsDouble(const ColumnView& c, int64_t p) {
  switch (c.type) {
    case DType::Float64: return static_cast<const double*>(c.data)[p];
    case DType::Bool: return static_cast<const uint8_t*>(c.data)[p];
    case DType::Date: return static_cast<const int32_t*>(c.data)[p];
    default: return double(static_cast<const int64_t*>(c.data)[p]);
  }
}

__device__ inline int64_t AsInt(const ColumnView& c, int64_t p) {
  switch (c.type) {
    case DType::Bool: return static_cast<const uint8_t*>(c.data)[p];
    case DType::Date: return static_cast<const int32_t*>(c.data)[p];
    default: return static_cast<const int64_t*>(c.data)[p];
  }
}

// Values as unsigned keys in the CPU's sort order (ops/sort.cc NormAt): -0 as 0, NaN
// after every number, ints and dates sign-flipped, bools 0/1.
__device__ inline uint64_t DoubleOrderKey(double d) {
  constexpr uint64_t kSign = 1ULL << 63;
  if (d == 0.0) return kSign;
  if (isnan(d)) return 0xFFF8000000000000ULL;
  const uint64_t u = uint64_t(__double_as_longlong(d));
  return (u & kSign) ? ~u : (u | kSign);
}

// The double a DoubleOrderKey came from (0 for -0, one NaN for all).
__device__ inline double OrderKeyDouble(uint64_t k) {
  constexpr uint64_t kSign = 1ULL << 63;
  return __longlong_as_double((long long)((k & kSign) ? (k & ~kSign) : ~k));
}

__device__ inline uint64_t OrderKey(const ColumnView& c, int64_t p) {
  switch (c.type) {
    case DType::Float64: return DoubleOrderKey(static_cast<const double*>(c.data)[p]);
    case DType::Bool: return static_cast<const uint8_t*>(c.data)[p] != 0;
    default: return uint64_t(AsInt(c, p)) ^ (1ULL << 63);
  }
}

}  // namespace gpu
}  // namespace basin
