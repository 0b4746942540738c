#include "cuda/host_staging.cuh"

#include <algorithm>
#include <cstring>
#include <system_error>
#include <thread>
#include <vector>

#include "cuda/cuda_check.cuh"

namespace basin {
namespace gpu {
namespace {

// memcpy on up to 8 threads, 4 MiB or more each: a chunk is copied at the memory's
// bandwidth, not one core's, and a fresh destination's page faults are taken in parallel.
void ParallelCopy(uint8_t* dst, const uint8_t* src, size_t bytes) {
  constexpr size_t kPiece = size_t(4) << 20;
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t threads = std::min<size_t>({bytes / kPiece, cores, 8});
  if (threads <= 1) {
    std::memcpy(dst, src, bytes);
    return;
  }
  const size_t per = (bytes + threads - 1) / threads;
  auto piece = [&](size_t t) {
    const size_t at = t * per;
    if (at < bytes) std::memcpy(dst + at, src + at, std::min(per, bytes - at));
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);  // a bad_alloc here comes before any thread exists
  size_t started = 1;
  try {
    for (; started < threads; started++) pool.emplace_back(piece, started);
  } catch (const std::system_error&) {
    // No thread to be had: this thread copies the pieces not started.
    for (size_t t = started; t < threads; t++) piece(t);
  }
  piece(0);
  for (std::thread& th : pool) th.join();
}

}  // namespace

bool HostStaging::ready() {
  if (buf_[0]) return true;
  if (failed_) return false;
  for (int i = 0; i < 2; i++) {
    void* p = nullptr;
    if (cudaHostAlloc(&p, kChunk, cudaHostAllocDefault) != cudaSuccess ||
        cudaEventCreateWithFlags(&done_[i], cudaEventDisableTiming) != cudaSuccess) {
      cudaGetLastError();  // not sticky: clear it, and copy directly from now on
      if (p) cudaFreeHost(p);
      release(true);
      failed_ = true;
      return false;
    }
    buf_[i] = static_cast<uint8_t*>(p);
  }
  return true;
}

bool HostStaging::upload(int device, cudaStream_t stream, void* dst, const void* src, size_t bytes) {
  if (!ready()) return false;
  auto* d = static_cast<uint8_t*>(dst);
  const auto* h = static_cast<const uint8_t*>(src);
  const size_t chunks = (bytes + kChunk - 1) / kChunk;
  for (size_t k = 0; k < chunks; k++) {
    const int slot = int(k % 2);
    const size_t at = k * kChunk, len = std::min(kChunk, bytes - at);
    // The DMA out of this buffer two chunks ago must be done before it is refilled;
    // meanwhile the other buffer's DMA runs.
    if (k >= 2) Check(device, "copy to device", cudaEventSynchronize(done_[slot]));
    ParallelCopy(buf_[slot], h + at, len);
    Check(device, "copy to device", cudaMemcpyAsync(d + at, buf_[slot], len, cudaMemcpyHostToDevice, stream));
    Check(device, "copy to device", cudaEventRecord(done_[slot], stream));
  }
  Check(device, "copy to device", cudaStreamSynchronize(stream));
  return true;
}

bool HostStaging::download(int device, cudaStream_t stream, void* dst, const void* src, size_t bytes) {
  if (!ready()) return false;
  auto* h = static_cast<uint8_t*>(dst);
  const auto* d = static_cast<const uint8_t*>(src);
  const size_t chunks = (bytes + kChunk - 1) / kChunk;
  auto drain = [&](size_t k) {  // chunk k, in its buffer, to the host destination
    const int slot = int(k % 2);
    const size_t at = k * kChunk;
    Check(device, "copy to host", cudaEventSynchronize(done_[slot]));
    ParallelCopy(h + at, buf_[slot], std::min(kChunk, bytes - at));
  };
  for (size_t k = 0; k < chunks; k++) {
    const int slot = int(k % 2);
    const size_t at = k * kChunk, len = std::min(kChunk, bytes - at);
    // This buffer's previous chunk (k - 2) was drained in the last iteration.
    Check(device, "copy to host", cudaMemcpyAsync(buf_[slot], d + at, len, cudaMemcpyDeviceToHost, stream));
    Check(device, "copy to host", cudaEventRecord(done_[slot], stream));
    if (k >= 1) drain(k - 1);  // while chunk k crosses the bus
  }
  if (chunks > 0) drain(chunks - 1);
  return true;
}

void HostStaging::release(bool usable) {
  for (int i = 0; i < 2; i++) {
    if (usable) {
      if (buf_[i]) cudaFreeHost(buf_[i]);
      if (done_[i]) cudaEventDestroy(done_[i]);
    }
    buf_[i] = nullptr;
    done_[i] = nullptr;
  }
  if (usable) {
    cudaGetLastError();
    failed_ = false;  // new settings: pinned memory is tried again
  }
}

}  // namespace gpu
}  // namespace basin
