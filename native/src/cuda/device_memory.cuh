// Device memory of one GPU: a pool (one cudaMalloc, sub-allocated first-fit with
// coalescing, like RMM's pool) or CUDA's stream-ordered allocator, a byte limit, and
// the cache of uploaded host columns that is spilled (dropped: the host copy stays)
// least recently used first when an allocation would cross the limit or fails.
// Beside the copies, the cache holds the store's device tier: tables whose only copy
// is here (GPU tasks' outputs). Their columns are never just dropped: under pressure,
// once no copy is left to drop, the least recently used such table is copied to the
// host first (SpillOwnedTable), and from then on its columns are copies like the others.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuda/host_staging.cuh"
#include "gpu/gpu.h"

namespace basin {
namespace gpu {

class DeviceState;

// Copies the store's table `handle`, whose only copy is on `dev`, to the host and
// hands it to the store (device_table.cu); under the GPU's run lock.
void SpillOwnedTable(DeviceState& dev, uint64_t handle);

// Owned device bytes, returned to their GPU's allocator when the last owner lets go.
class DeviceBuffer {
 public:
  DeviceBuffer(DeviceState* owner, void* ptr, size_t bytes, uint64_t generation)
      : owner_(owner), ptr_(ptr), bytes_(bytes), generation_(generation) {}
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* data() const { return ptr_; }
  size_t size() const { return bytes_; }
  template <typename T> T* as() const { return static_cast<T*>(ptr_); }

 private:
  DeviceState* owner_;
  void* ptr_;
  size_t bytes_;
  uint64_t generation_;  // a buffer from before a reset is not returned to the new pool
};
using DBuf = std::shared_ptr<DeviceBuffer>;

// A cached upload: the device copy of one column of one stored table (or a column of
// the device tier's tables).
struct CachedColumn {
  DBuf data, validity, chars;
  size_t bytes = 0;
};
// The device bytes of a column's buffers.
inline size_t DeviceBytes(const CachedColumn& c) {
  return (c.data ? c.data->size() : 0) + (c.validity ? c.validity->size() : 0) + (c.chars ? c.chars->size() : 0);
}

class DeviceState {
 public:
  // The state of GPU `device` (made on first use; never freed: lives as long as the process).
  static DeviceState& Of(int device);

  int device() const { return device_; }
  cudaStream_t stream();
  // Device bytes for `what` (named in errors). Spills cached columns to fit the limit,
  // and again when the allocator fails, then retries once; throws BASIN_CUDA out of memory.
  DBuf alloc(size_t bytes, const char* what);
  void configure(const DeviceConfig& c);

  // The cache of uploads, keyed by (store handle, column); `alive` tells whether the
  // host table still exists (a released handle's entries are dropped at the next lookup).
  std::shared_ptr<CachedColumn> cached(uint64_t handle, int column, const std::weak_ptr<const Table>& alive);
  void cache(uint64_t handle, int column, std::weak_ptr<const Table> alive, std::shared_ptr<CachedColumn> c);

  // The device tier. Takes the columns of the store's table `handle` (put there with
  // Store::putOnDevice and `shape`) as its only copy.
  void adopt(uint64_t handle, TablePtr shape, std::vector<std::shared_ptr<CachedColumn>> cols);
  // The columns of a table whose only copy is here, and its shape; no shape when
  // `handle` is not one.
  std::vector<std::shared_ptr<CachedColumn>> owned(uint64_t handle, TablePtr& shape);
  // The table is on the host now (`host`): its columns become cached copies of it.
  void disown(uint64_t handle, const TablePtr& host);
  // The table was released: its columns go (once no running chain reads them).
  void dropOwned(uint64_t handle);
  // Whether the outputs of GPU operations stay here when every column is (DeviceConfig).
  bool keepResults();

  MemoryStats stats();
  void countUpload(size_t bytes, int64_t micros);
  void countDownload(size_t bytes, int64_t micros);
  void countChain();
  void countChainTime(int64_t micros);
  void countResultSpill(int64_t bytes);
  // Where a chain's GPU time goes: names the stream's work from here to the next mark
  // (or the chain's end) `phase`; a static string. Under the run lock.
  void mark(const char* phase);
  // At a chain's end (its work done): the marked spans' times add to the statistics'
  // phases; after a failure (`ok` false) they are dropped.
  void endPhases(bool ok) noexcept;
  // Frees everything held on the GPU (new settings apply from the next use).
  void reset();
  // After a sticky CUDA error the process cannot use the GPU again (CUDA's rule): it is
  // marked unusable, and its work goes to the CPU from then on. "" while usable.
  void markBroken(const std::string& why);
  std::string broken();
  // Serializes chains on this GPU (one stream; a worker thread per GPU normally).
  std::mutex& runLock() { return run_; }
  // The pinned buffers large copies go through, when the settings ask for them (else
  // null); used under runLock only.
  HostStaging* staging() { return config_.stagedCopies ? &staging_ : nullptr; }

 private:
  friend class DeviceBuffer;
  explicit DeviceState(int device) : device_(device) {}
  void release(void* ptr, size_t bytes, uint64_t generation);
  void* tryAllocate(size_t bytes);  // nullptr when the allocator has no room
  void ensureReady();               // pool/stream made lazily, under mu_
  // Unlinks least recently used cache entries until `need` bytes fit under the limit;
  // the entries are returned so they are freed outside the lock.
  std::list<std::shared_ptr<CachedColumn>> evict(size_t need, bool all);
  // The least recently used table whose only copy is here and that no chain reads
  // now (0: none), to copy to the host when nothing else can be freed.
  uint64_t ownedVictim() const;
  // Copies every table whose only copy is here to the host (before the pool is reset).
  void spillAllOwned();
  // Ends table `handle`'s ownership (under mu_), calling each(index_ iterator) for its columns.
  template <class F>
  void endOwned(uint64_t handle, const F& each);

  struct Entry {
    uint64_t handle;
    int column;
    std::weak_ptr<const Table> alive;
    std::shared_ptr<CachedColumn> col;
    bool owned = false;  // the only copy of a device-tier table's column
  };
  struct OwnedTable {
    TablePtr shape;
    int64_t bytes;
  };
  const int device_;
  std::mutex mu_, run_;
  DeviceConfig config_;
  bool ready_ = false;
  cudaStream_t stream_ = nullptr;
  void* pool_ = nullptr;
  size_t poolSize_ = 0;
  std::map<size_t, size_t> free_;  // pool offset → bytes
  int64_t limit_ = 0, used_ = 0;
  std::list<Entry> lru_;           // front = most recently used
  std::map<std::pair<uint64_t, int>, std::list<Entry>::iterator> index_;
  int64_t cachedBytes_ = 0;
  std::map<uint64_t, OwnedTable> owned_;  // the device tier's tables, by store handle
  std::list<std::shared_ptr<CachedColumn>> stale_;  // dropped entries, freed at the next cache()
  uint64_t generation_ = 1;
  std::string broken_;
  MemoryStats stats_;
  HostStaging staging_;
  struct Mark {
    const char* phase;
    cudaEvent_t event;
  };
  std::vector<Mark> marks_;             // this chain's, in stream order (run lock)
  std::vector<cudaEvent_t> events_;     // made once, reused
  std::map<std::string, int64_t> phaseMicros_;
};

}  // namespace gpu
}  // namespace basin
