// Large buffers' memory, kept for reuse. A buffer on fresh pages costs a page fault
// per 4 KiB (the kernel zeroes and maps each page, and unmaps them when it is freed):
// in TPC-H at SF 10, Q1's filter, gather and expression outputs (6 GB a run) made the
// kernel's time as large as the engine's own. Freed blocks of 128 KiB and more wait
// here (up to Limit()) for the next buffer of about their size, or are cut for a
// smaller one; release() gives them all back, when the engine goes idle or large data
// is let go.
#pragma once
#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <mutex>
#include <new>
#include <vector>

namespace basin {

struct Block {
  uint8_t* data = nullptr;
  size_t capacity = 0;
  bool zero = false;  // its bytes are all zero (fresh from the system)
};

class BlockPool {
 public:
  static constexpr size_t kMinBytes = size_t(128) << 10;
  static BlockPool& Instance();

  // A block of at least `bytes` (>= kMinBytes): a kept one of about that size (with
  // `exact`, of exactly BlockCapacity(bytes)), the front of a larger kept one, or new
  // pages from the system. Throws std::bad_alloc when the system has none.
  Block take(size_t bytes, bool exact = false);
  // A block from take(), freed: kept, unmapping the longest-kept blocks when the pool
  // would hold more than Limit() (the sizes a run frees now are the ones it takes next).
  void give(uint8_t* data, size_t capacity);
  // Unmaps every kept block; returns their bytes.
  size_t release();
  size_t heldBytes();
  // What the pool may keep: a quarter of the host memory limit (a fifth of the
  // machine's memory by default), and never more than a quarter of the machine's.
  static size_t Limit();

 private:
  struct Kept {
    uint8_t* data;
    size_t capacity;
  };
  std::mutex mu_;
  std::list<Kept> kept_;                                        // oldest first
  std::multimap<size_t, std::list<Kept>::iterator> bySize_;  // by capacity
  size_t held_ = 0;
};

// The capacity take() gives a request of `bytes`: rounded up to an eighth of its power
// of two, so buffers of nearby sizes share blocks.
size_t BlockCapacity(size_t bytes);

// An allocator for kernels' scratch vectors (group ids, hash slots, partition numbers):
// those of kMinBytes and more are BlockPool blocks, whose pages the next task reuses
// instead of faulting in fresh ones; smaller ones come from operator new.
template <class T>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() = default;
  template <class U>
  PoolAllocator(const PoolAllocator<U>&) noexcept {}
  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < BlockPool::kMinBytes) return static_cast<T*>(::operator new(bytes));
    return reinterpret_cast<T*>(BlockPool::Instance().take(bytes, true).data);
  }
  void deallocate(T* p, size_t n) noexcept {
    const size_t bytes = n * sizeof(T);
    if (bytes < BlockPool::kMinBytes) ::operator delete(p);
    else BlockPool::Instance().give(reinterpret_cast<uint8_t*>(p), BlockCapacity(bytes));
  }
  template <class U>
  bool operator==(const PoolAllocator<U>&) const noexcept {
    return true;
  }
  template <class U>
  bool operator!=(const PoolAllocator<U>&) const noexcept {
    return false;
  }
};
template <class T>
using PoolVector = std::vector<T, PoolAllocator<T>>;

}  // namespace basin
