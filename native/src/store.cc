#include "store.h"

namespace basin {

Store& Store::Instance() {
  static Store* store = new Store();  // never destroyed: buffers may outlive static teardown
  return *store;
}

namespace {
thread_local uint32_t t_owner = 0;
}

void Store::SetThreadOwner(uint32_t owner) { t_owner = owner; }

uint64_t Store::put(TablePtr t) {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t h = next_++;
  entries_.emplace(h, Entry{std::move(t), 1, t_owner});
  return h;
}

void Store::claim(uint64_t handle) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(handle);
  if (it == entries_.end()) throw BasinError("BASIN_HANDLE", "claim of unknown handle " + std::to_string(handle));
  it->second.owner = 0;
}

int64_t Store::releaseOwnedBy(uint32_t owner) {
  std::vector<TablePtr> doomed;  // destroyed outside the lock
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (owner != 0 && it->second.owner == owner) {
      doomed.push_back(std::move(it->second.table));
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  return int64_t(doomed.size());
}

TablePtr Store::get(uint64_t handle) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(handle);
  if (it == entries_.end()) throw BasinError("BASIN_HANDLE", "unknown or released table handle " + std::to_string(handle));
  return it->second.table;
}

void Store::retain(uint64_t handle) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(handle);
  if (it == entries_.end()) throw BasinError("BASIN_HANDLE", "retain of unknown handle " + std::to_string(handle));
  it->second.refs++;
}

void Store::release(uint64_t handle) {
  TablePtr doomed;  // destroyed outside the lock
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(handle);
    if (it == entries_.end()) throw BasinError("BASIN_HANDLE", "release of unknown handle " + std::to_string(handle));
    if (--it->second.refs > 0) return;
    doomed = std::move(it->second.table);
    entries_.erase(it);
  }
}

StoreStats Store::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return StoreStats{int64_t(entries_.size()), buffers_.load(), bytes_.load(), peak_.load()};
}

void Store::onAlloc(size_t bytes) {
  buffers_++;
  int64_t now = bytes_ += int64_t(bytes);
  int64_t peak = peak_.load();
  while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
  }
}

void Store::onFree(size_t bytes, bool wholeBuffer) {
  if (wholeBuffer) buffers_--;
  bytes_ -= int64_t(bytes);
}

}  // namespace basin
