// Large copies between pageable host memory (the store's columns) and one GPU, through
// two pinned staging buffers: the device's DMA of one chunk overlaps the CPU copying the
// other on several threads. A plain cudaMemcpy from pageable memory is staged by the
// driver on one CPU thread, chunk after chunk, and that thread also takes every page
// fault of a fresh destination; the PCIe link then idles most of the time.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace basin {
namespace gpu {

class HostStaging {
 public:
  // Copies of fewer bytes go directly (the staging's setup would outweigh its gain).
  static constexpr size_t kMinStaged = size_t(8) << 20;
  // Bytes per chunk (and per staging buffer; two of them, pinned, per GPU).
  static constexpr size_t kChunk = size_t(32) << 20;

  HostStaging() = default;
  HostStaging(const HostStaging&) = delete;
  HostStaging& operator=(const HostStaging&) = delete;

  // Host `src` to device `dst` on `stream`, complete on return. False, having copied
  // nothing, when no pinned memory could be had: the caller copies directly.
  // Errors of the copies themselves throw BASIN_CUDA naming GPU `device`.
  bool upload(int device, cudaStream_t stream, void* dst, const void* src, size_t bytes);
  // Device `src` to host `dst`, complete on return; false as for upload.
  bool download(int device, cudaStream_t stream, void* dst, const void* src, size_t bytes);
  // Frees the pinned buffers (the GPU's state is being reset); `usable`: whether CUDA
  // calls may still be made (not after a sticky error: then they are only forgotten).
  void release(bool usable);

 private:
  bool ready();  // the pinned buffers made on first use; false once refused
  uint8_t* buf_[2] = {nullptr, nullptr};
  cudaEvent_t done_[2] = {nullptr, nullptr};
  bool failed_ = false;  // pinned memory was refused once: copies go directly from then on
};

}  // namespace gpu
}  // namespace basin
