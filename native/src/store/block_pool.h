// Large buffers' memory, kept for reuse. A buffer on fresh pages costs a page fault
// per 4 KiB (the kernel zeroes and maps each page, and unmaps them when it is freed):
// in TPC-H at SF 10, Q1's filter, gather and expression outputs (6 GB a run) made the
// kernel's time as large as the engine's own. Freed blocks of 128 KiB and more wait
// here (up to Limit()) for the next buffer of about their size; release() gives them
// all back, when the engine goes idle or large data is let go.
#pragma once
#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <mutex>

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

  // A block of at least `bytes` (>= kMinBytes): a kept one of about that size, or new
  // pages from the system. Throws std::bad_alloc when the system has none.
  Block take(size_t bytes);
  // A block from take(), freed: kept, unmapping the longest-kept blocks when the pool
  // would hold more than Limit() (the sizes a run frees now are the ones it takes next).
  void give(uint8_t* data, size_t capacity);
  // Unmaps every kept block; returns their bytes.
  size_t release();
  size_t heldBytes();
  // What the pool may keep: an eighth of the machine's memory, or a quarter of the
  // host memory limit when that is lower.
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

}  // namespace basin
