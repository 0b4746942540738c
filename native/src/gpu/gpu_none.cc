// The GPU interface in a build without CUDA (nvcc was not found): no devices, and
// running anything on a GPU is a clear error. cuda/*.cu replace this where nvcc is found.
#ifndef BASIN_WITH_CUDA
#include "gpu/gpu.h"

namespace basin {
namespace gpu {

namespace {
[[noreturn]] void NoCuda() {
  throw BasinError("BASIN_CUDA", "this Basin was built without CUDA (nvcc was not found at install time); install the CUDA toolkit and run npm install again, or leave out --gpus");
}
}  // namespace

RuntimeInfo Runtime() {
  RuntimeInfo r;
  r.note = "built without CUDA";
  return r;
}
void Configure(int, const DeviceConfig&) { NoCuda(); }
void Warm(int) { NoCuda(); }
std::string Unsupported(const Step&, const Table&) { return "a build without CUDA"; }
Output Run(int, uint64_t, const std::vector<Step>&) { NoCuda(); }
void Keep(int, uint64_t, const TablePtr&) { NoCuda(); }
std::vector<MemoryStats> Stats() { return {}; }
std::string SortUnsupported(const Table&, const std::vector<SortKey>&) { return "a build without CUDA"; }
Output Sort(int, uint64_t, const std::vector<SortKey>&) { NoCuda(); }
std::string JoinUnsupported(const Table&, const Table&, const JoinSpec&) { return "a build without CUDA"; }
Output Join(int, uint64_t, uint64_t, const JoinSpec&) { NoCuda(); }
std::string Broken(int) { return ""; }  // Run() says why nothing runs
void Fault(int, const std::string&) { NoCuda(); }

}  // namespace gpu
}  // namespace basin
#endif
