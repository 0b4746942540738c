#include "store/block_pool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <new>
#include <vector>

#include "store/store.h"

namespace basin {

size_t BlockCapacity(size_t bytes) {
  // No machine has 2^48 bytes; a length past that comes from damaged data.
  if (bytes > (size_t(1) << 48)) throw std::bad_alloc();
  size_t p = BlockPool::kMinBytes;
  while (p * 2 <= bytes) p *= 2;
  const size_t step = p / 8;  // a multiple of the page size
  return (bytes + step - 1) / step * step;
}

BlockPool& BlockPool::Instance() {
  static BlockPool* pool = new BlockPool();  // never destroyed: buffers may outlive static teardown
  return *pool;
}

size_t BlockPool::Limit() {
  static const size_t physical = size_t(sysconf(_SC_PHYS_PAGES)) * size_t(sysconf(_SC_PAGESIZE));
  const int64_t host = Store::Instance().hostLimit();  // no lock: blocks come back while tables are freed under it
  // A quarter, not an eighth: at SF 10 in memory an eighth made Q13's concatenations
  // fault in 1.7 GB of fresh pages (2.8–3.1 s; 1.4–1.7 s with a quarter).
  return std::min(physical, host > 0 ? size_t(host) : physical) / 4;
}

Block BlockPool::take(size_t bytes, bool exact) {
  const size_t cap = BlockCapacity(bytes);
  uint8_t* got = nullptr;
  Kept tail{nullptr, 0};  // a cut-off end too small to keep
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = bySize_.lower_bound(cap);
    if (it != bySize_.end()) {
      const Kept k = *it->second;
      auto next = kept_.erase(it->second);
      bySize_.erase(it);
      held_ -= k.capacity;
      if (!exact && k.capacity <= cap + cap / 4) return Block{k.data, k.capacity, false};
      // A larger block is cut (any page-aligned range of a mapping is unmapped on its
      // own): its first `cap` bytes go, the rest stays kept in its place by age, or is
      // unmapped when too small to serve a request. Reused pages are cheap; fresh ones
      // fault, and on a VM whose freed memory goes back to the host, each 4 KiB fault
      // then faults on the host too (SF 10's 22 queries from Parquet: 27.8–32.4 s before
      // cutting, 22.4–24.5 s after; a shuffle's thousands of 200 KB parts took fresh pages).
      got = k.data;
      const Kept rest{k.data + cap, k.capacity - cap};
      if (rest.capacity >= kMinBytes) {
        bySize_.emplace(rest.capacity, kept_.insert(next, rest));
        held_ += rest.capacity;
      } else {
        tail = rest;
      }
    }
  }
  if (got != nullptr) {
    if (tail.capacity > 0) munmap(tail.data, tail.capacity);  // outside the lock
    return Block{got, cap, false};
  }
  void* p = mmap(nullptr, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return Block{static_cast<uint8_t*>(p), cap, true};
}

void BlockPool::give(uint8_t* data, size_t capacity) {
  std::vector<Kept> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const size_t limit = Limit();
    if (capacity > limit) {
      out.push_back(Kept{data, capacity});
    } else {
      while (held_ + capacity > limit) {
        const Kept k = kept_.front();
        auto range = bySize_.equal_range(k.capacity);
        for (auto it = range.first; it != range.second; ++it)
          if (it->second == kept_.begin()) {
            bySize_.erase(it);
            break;
          }
        kept_.pop_front();
        held_ -= k.capacity;
        out.push_back(k);
      }
      bySize_.emplace(capacity, kept_.insert(kept_.end(), Kept{data, capacity}));
      held_ += capacity;
    }
  }
  for (const Kept& k : out) munmap(k.data, k.capacity);  // outside the lock
}

size_t BlockPool::release() {
  std::list<Kept> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    out.swap(kept_);
    bySize_.clear();
    held_ = 0;
  }
  size_t bytes = 0;
  for (const Kept& k : out) {
    munmap(k.data, k.capacity);
    bytes += k.capacity;
  }
  return bytes;
}

size_t BlockPool::heldBytes() {
  std::lock_guard<std::mutex> lock(mu_);
  return held_;
}

}  // namespace basin
