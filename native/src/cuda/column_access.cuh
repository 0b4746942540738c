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

}  // namespace gpu
}  // namespace basin
