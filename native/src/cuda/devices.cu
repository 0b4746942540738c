// GPU discovery. With nvcc but no driver, cudaGetDeviceCount fails: report zero GPUs.
#include <cuda_runtime.h>

namespace basin {
int GpuCount() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error
    return 0;
  }
  return n;
}
bool BuiltWithCuda() { return true; }
}  // namespace basin
