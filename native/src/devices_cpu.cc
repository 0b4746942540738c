// GPU discovery for a CPU-only build; cuda/devices.cu replaces it where nvcc is found.
#ifndef BASIN_WITH_CUDA
namespace basin {
int GpuCount() { return 0; }
bool BuiltWithCuda() { return false; }
}  // namespace basin
#endif
