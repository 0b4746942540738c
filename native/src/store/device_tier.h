// The store's device tier as the store sees it. A GPU task's output may stay on its
// GPU (cuda/device_memory.cuh holds its columns there): the store then keeps only
// its shape (names, types, rows) and asks the tier for the bytes when someone reads
// the table on the host, and to free them when the table is released. The CUDA build
// registers the tier; without it no table ever lives on a device.
#pragma once
#include <cstdint>

#include "store/column.h"

namespace basin {

class DeviceTier {
 public:
  virtual ~DeviceTier() = default;
  // The table's columns copied to the host; from then on the device holds only a
  // cached copy. Null when they are not the only copy there any more (spilled to
  // the host meanwhile: the store has the table then). Throws BASIN_CUDA when the GPU
  // cannot give them back (unusable after a sticky error: the table is lost).
  virtual TablePtr download(int device, uint64_t handle) = 0;
  // The table was released: its device bytes go.
  virtual void drop(int device, uint64_t handle) = 0;
};

}  // namespace basin
