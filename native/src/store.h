// The process-wide store: tables addressed by integer handles with explicit
// reference counts, plus live-buffer accounting. Every worker thread loads the
// same addon and so shares this one store, passing handles instead of bytes.
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "column.h"

namespace basin {

struct StoreStats {
  int64_t handles;
  int64_t buffers;
  int64_t bytes;
  int64_t peakBytes;
};

class Store {
 public:
  static Store& Instance();
  uint64_t put(TablePtr t);           // new handle with refcount 1, owned by this thread's owner
  // Ownership of new handles by the thread that made them (a worker thread's id;
  // 0 = none): if that thread dies before handing them over, they can be freed.
  static void SetThreadOwner(uint32_t owner);
  void claim(uint64_t handle);              // handed over: no longer the thread's
  int64_t releaseOwnedBy(uint32_t owner);   // frees unclaimed handles; returns how many
  TablePtr get(uint64_t handle) const; // throws BASIN_HANDLE on an unknown handle
  void retain(uint64_t handle);
  void release(uint64_t handle);      // frees the table when the count reaches 0
  StoreStats stats() const;
  void onAlloc(size_t bytes);
  void onFree(size_t bytes, bool wholeBuffer);

 private:
  struct Entry {
    TablePtr table;
    int64_t refs;
    uint32_t owner;
  };
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, Entry> entries_;
  uint64_t next_ = 1;
  std::atomic<int64_t> buffers_{0}, bytes_{0}, peak_{0};
};

}  // namespace basin
