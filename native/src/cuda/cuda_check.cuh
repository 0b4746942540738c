// CUDA errors as BasinError("BASIN_CUDA") naming the GPU and the operation.
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "store/column.h"

namespace basin {
namespace gpu {

// "GPU 0 (NVIDIA H100 80GB HBM3)": how messages name a device.
std::string DeviceLabel(int device);

[[noreturn]] void ThrowCuda(int device, const std::string& op, cudaError_t err);

inline void Check(int device, const char* op, cudaError_t err) {
  if (err != cudaSuccess) ThrowCuda(device, op, err);
}

// Whether err leaves the CUDA context unusable (then the GPU's state is reset).
bool IsSticky(cudaError_t err);

}  // namespace gpu
}  // namespace basin
