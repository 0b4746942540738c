// The process-wide store: tables addressed by integer handles with explicit
// reference counts, plus live-buffer accounting. Every worker thread loads the
// same addon and so shares this one store, passing handles instead of bytes.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "io/spill_file.h"
#include "store/device_tier.h"
#include "store/column.h"
#include "store/spill_policy.h"

namespace basin {

struct StoreStats {
  int64_t handles;
  int64_t buffers;
  int64_t bytes;
  int64_t peakBytes;
};

// Memory limits and where the disk tier lives (configureMemory from JS).
struct MemoryConfig {
  int64_t hostLimit = SpillPolicy::kUnlimited;  // bytes of live buffers before tables spill to disk
  int64_t diskLimit = SpillPolicy::kUnlimited;  // bytes of spill files before spilling fails
  double target = 0.8;                          // spill down to this fraction of the limit
  std::string directory;                        // this process's own spill directory
  SpillCodec codec = DefaultSpillCodec();      // how spill files are compressed
};

struct MemoryStats {
  int64_t hostBytes, hostLimit, hostTables, diskBytes, diskTables, deviceBytes;
  int64_t spilledCount, spilledBytes, unspilledCount, unspilledBytes;
  int64_t writtenBytes;  // bytes written to spill files (compressed)
  int64_t reusedCount;   // evictions that wrote nothing: the table kept its file from an earlier spill
  double spillSeconds, unspillSeconds;
  bool overLimit;
};

class Store {
 public:
  static Store& Instance();
  uint64_t put(TablePtr t);           // new handle with refcount 1, owned by this thread's owner
  // Ownership of new handles by the thread that made them (a worker thread's id;
  // 0 = none): if that thread dies before handing them over, they can be freed.
  static void SetThreadOwner(uint32_t owner);
  static uint32_t ThreadOwner();  // this thread's owner (0: none)
  void claim(uint64_t handle);              // handed over: no longer the thread's
  int64_t releaseOwnedBy(uint32_t owner);   // frees unclaimed handles; returns how many
  // Throws BASIN_HANDLE on an unknown handle; reads a spilled table back from disk.
  TablePtr get(uint64_t handle);

  // The device tier (store/device_tier.h). A table whose only copy is on GPU `device`
  // (a GPU task's output): the store holds its shape (names, types, rows; no buffers)
  // and `bytes`, and get() copies it to the host once (then it is an ordinary table).
  uint64_t putOnDevice(int device, TablePtr shape, int64_t bytes);
  // Its shape when the table's only copy is on GPU `device` now, else null (on the
  // host, on disk, on its way between them, or on another GPU).
  TablePtr onDevice(uint64_t handle, int device) const;
  // The GPU holding the table's only copy, or -1.
  int deviceOf(uint64_t handle) const;
  // The device tier spilled the table to the host (`table`, its columns copied down).
  void deviceSpilled(uint64_t handle, TablePtr table);
  // Registered once by the CUDA build (and swapped by the tests' stand-in); returns
  // the tier it replaces.
  DeviceTier* setDeviceTier(DeviceTier* tier);
  void retain(uint64_t handle);
  void release(uint64_t handle);      // frees the table when the count reaches 0
  StoreStats stats() const;
  void onAlloc(size_t bytes);
  void onFree(size_t bytes, bool wholeBuffer);

  // Spilling. Worker threads (owner != 0) spill synchronously when a new table or a
  // large allocation takes the host over its limit; the main JS thread never writes.
  void configure(const MemoryConfig& c);
  MemoryConfig config() const;
  // The host limit in bytes (SpillPolicy::kUnlimited: none), without taking the store's lock.
  int64_t hostLimit() const { return hostLimit_.load(); }
  MemoryStats memoryStats() const;
  void pin(uint64_t handle);    // handed to user code: never spilled until unpinned
  void unpin(uint64_t handle);
  // Before a Buffer of `bytes` is allocated: spills if that would cross the limit.
  void beforeAlloc(size_t bytes);
  // After an allocation failed: spills least recently used tables freeing `bytes`;
  // returns whether anything was spilled (then the allocation is retried once).
  bool spillToFree(size_t bytes);
  // Spills until the host is within its target (or `need` more bytes fit); throws BASIN_SPILL.
  void maybeSpill(int64_t need, bool force = false);
  // Whether the table is off the host now (on disk, or its only copy on a GPU), so that
  // reading it takes a read back (engine/memory/resident.ts does that off the JS thread).
  bool isSpilled(uint64_t handle) const;
  // Whether the handle names a table (not yet released; handles are never reused).
  bool has(uint64_t handle) const;
  // The table's row count and its bytes in memory, without reading a spilled table back.
  int64_t rows(uint64_t handle) const;
  int64_t bytes(uint64_t handle) const;

 private:
  // Device: the only copy is on a GPU (device_tier_); Loading is also a table coming
  // down from there.
  enum class State : uint8_t { Memory, Spilling, Disk, Loading, Device };
  struct Entry {
    TablePtr table;  // null while on disk or on a device
    int64_t refs;
    uint32_t owner;
    State state = State::Memory;
    // The spill file: the table while on disk; once read back, a copy kept until the
    // table is released (tables never change), so evicting it again writes nothing.
    std::string file;
    int64_t rows = 0, bytes = 0;
    int device = -1;  // the GPU holding the only copy (State::Device, or Loading from it)
    TablePtr shape;   // names, types and rows of a table on a device (no buffers)
  };
  const Entry& entry(uint64_t handle) const;  // under mu_; throws BASIN_HANDLE for an unknown one
  void carryOut(const SpillPlan& plan, std::unique_lock<std::mutex>& lock);
  // Removes the files kept by tables in memory (the disk tier is full); returns whether any went.
  bool dropCopies(std::unique_lock<std::mutex>& lock);
  // The entry's file, when the thread releasing the entry must remove it (one being
  // written or read back is removed by the thread doing that).
  static std::string FileToRemove(const Entry& e);
  std::string spillPath(uint64_t handle) const;
  // A table of the device tier is on the host now (e.table): counted as the host's.
  void arrived(uint64_t handle, Entry& e);
  // get() of a table on a device or on disk: reads it back (the lock is released
  // meanwhile); null when the device tier spilled it to the host meanwhile.
  TablePtr readBack(uint64_t handle, Entry& e, std::unique_lock<std::mutex>& lock);
  mutable std::mutex mu_;
  std::condition_variable loaded_;
  std::unordered_map<uint64_t, Entry> entries_;
  uint64_t next_ = 1;
  std::atomic<int64_t> buffers_{0}, bytes_{0}, peak_{0};
  std::atomic<int64_t> hostLimit_{SpillPolicy::kUnlimited};
  SpillPolicy policy_;
  DeviceTier* deviceTier_ = nullptr;
  MemoryConfig config_;
  int64_t spilledCount_ = 0, spilledBytes_ = 0, unspilledCount_ = 0, unspilledBytes_ = 0, writtenBytes_ = 0, reusedCount_ = 0;
  double spillSeconds_ = 0, unspillSeconds_ = 0;
};

}  // namespace basin
