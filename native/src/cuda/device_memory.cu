#include "cuda/device_memory.cuh"

#include <algorithm>
#include <vector>

#include "cuda/cuda_check.cuh"

namespace basin {
namespace gpu {

namespace {
constexpr size_t kAlign = 256;
size_t Round(size_t n) { return (std::max<size_t>(n, 1) + kAlign - 1) / kAlign * kAlign; }
std::string Mb(int64_t bytes) { return std::to_string((bytes + 999999) / 1000000) + " MB"; }
}  // namespace

DeviceBuffer::~DeviceBuffer() { owner_->release(ptr_, bytes_, generation_); }

DeviceState& DeviceState::Of(int device) {
  static std::mutex mu;
  static std::map<int, std::unique_ptr<DeviceState>> states;
  std::lock_guard<std::mutex> lock(mu);
  auto& s = states[device];
  if (!s) s.reset(new DeviceState(device));
  return *s;
}

void DeviceState::ensureReady() {
  if (ready_) return;
  Check(device_, "select device", cudaSetDevice(device_));
  size_t freeBytes = 0, total = 0;
  Check(device_, "read memory size", cudaMemGetInfo(&freeBytes, &total));
  limit_ = config_.memoryLimit > 0 ? config_.memoryLimit : int64_t(double(total) * 0.8);
  Check(device_, "create stream", cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  if (config_.asyncAllocator) {
    cudaMemPool_t mp;
    Check(device_, "get memory pool", cudaDeviceGetDefaultMemPool(&mp, device_));
    uint64_t keep = uint64_t(limit_);  // keep freed memory for reuse instead of returning it
    Check(device_, "set memory pool threshold", cudaMemPoolSetAttribute(mp, cudaMemPoolAttrReleaseThreshold, &keep));
  } else {
    poolSize_ = Round(size_t(config_.poolSize > 0 ? config_.poolSize : limit_));
    cudaError_t err = cudaMalloc(&pool_, poolSize_);
    if (err != cudaSuccess) {
      cudaGetLastError();
      throw BasinError("BASIN_CUDA", DeviceLabel(device_) + ": cannot reserve a device memory pool of " + Mb(int64_t(poolSize_)) +
                                         " (" + cudaGetErrorString(err) + "); set a smaller --device-pool-size or --device-memory-limit");
    }
    free_.clear();
    free_[0] = poolSize_;
  }
  stats_.device = device_;
  stats_.limit = limit_;
  stats_.poolSize = int64_t(poolSize_);
  ready_ = true;
}

cudaStream_t DeviceState::stream() {
  std::lock_guard<std::mutex> lock(mu_);
  ensureReady();
  return stream_;
}

void* DeviceState::tryAllocate(size_t bytes) {
  if (config_.asyncAllocator) {
    void* p = nullptr;
    if (cudaMallocAsync(&p, bytes, stream_) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    return p;
  }
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < bytes) continue;
    size_t off = it->first, rest = it->second - bytes;
    free_.erase(it);
    if (rest) free_[off + bytes] = rest;
    return static_cast<uint8_t*>(pool_) + off;
  }
  return nullptr;
}

void DeviceState::release(void* ptr, size_t bytes, uint64_t generation) {
  std::lock_guard<std::mutex> lock(mu_);
  if (generation != generation_ || !ready_) return;  // its pool is gone
  used_ -= int64_t(bytes);
  if (config_.asyncAllocator) {
    cudaFreeAsync(ptr, stream_);
    return;
  }
  size_t off = size_t(static_cast<uint8_t*>(ptr) - static_cast<uint8_t*>(pool_));
  auto next = free_.lower_bound(off);
  if (next != free_.end() && off + bytes == next->first) {
    bytes += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == off) {
      prev->second += bytes;
      return;
    }
  }
  free_[off] = bytes;
}

std::list<std::shared_ptr<CachedColumn>> DeviceState::evict(size_t need, bool all) {
  std::list<std::shared_ptr<CachedColumn>> out;
  int64_t freed = 0;  // bytes the unlinked entries give back once the caller drops them
  for (auto it = lru_.end(); it != lru_.begin() && (all || used_ - freed + int64_t(need) > limit_);) {
    --it;
    if (it->owned) continue;  // the only copy: copied to the host first (ownedVictim)
    stats_.evictions++;
    stats_.evictedBytes += int64_t(it->col->bytes);
    cachedBytes_ -= int64_t(it->col->bytes);
    // A column the running chain also holds stays on the device until the chain ends.
    if (it->col.use_count() == 1) freed += int64_t(it->col->bytes);
    index_.erase({it->handle, it->column});
    out.push_back(std::move(it->col));
    it = lru_.erase(it);
  }
  return out;
}

uint64_t DeviceState::ownedVictim() const {
  // A column is read by a running chain when more than the cache's entries hold it (a
  // kept output may share a column with another entry: a column listed twice, one
  // passed through from a kept input).
  std::map<const CachedColumn*, long> held;
  for (const Entry& e : lru_) held[e.col.get()]++;
  auto inUse = [&](const Entry& e) { return e.col.use_count() > held.at(e.col.get()); };
  std::map<uint64_t, bool> busy;  // owned table → whether a chain reads one of its columns
  for (const Entry& e : lru_)
    if (e.owned) busy[e.handle] = busy[e.handle] || inUse(e);
  for (auto it = lru_.rbegin(); it != lru_.rend(); ++it)
    if (it->owned && !busy.at(it->handle)) return it->handle;
  return 0;
}

DBuf DeviceState::alloc(size_t bytes, const char* what) {
  bytes = Round(bytes);
  // Each round frees something (stale or cached columns, or one kept table copied to
  // the host, whose columns the next round frees) or ends.
  bool tooLarge = false;
  for (;;) {
    std::list<std::shared_ptr<CachedColumn>> victims;
    uint64_t spill = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ensureReady();
      victims.splice(victims.end(), stale_);  // released tables' columns: freed here, in a chain
      tooLarge = int64_t(bytes) > limit_ || (!config_.asyncAllocator && bytes > poolSize_);
      if (tooLarge) break;  // nothing can make room
      if (!victims.empty()) {
        // freed below, then this round's allocation is tried again
      } else if (used_ + int64_t(bytes) <= limit_) {
        if (void* p = tryAllocate(bytes)) {
          used_ += int64_t(bytes);
          return std::make_shared<DeviceBuffer>(this, p, bytes, generation_);
        }
        victims = evict(bytes, true);  // the allocator failed under the limit (fragmentation)
      } else {
        victims = evict(bytes, false);
      }
      if (victims.empty()) spill = ownedVictim();
      if (victims.empty() && !spill) break;
    }
    victims.clear();  // frees the spilled columns' device bytes, outside the lock
    if (spill) SpillOwnedTable(*this, spill);  // its columns are evictable copies after
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (tooLarge)
    throw BasinError("BASIN_CUDA", DeviceLabel(device_) + ": out of device memory allocating " + Mb(int64_t(bytes)) + " for " + what +
                                       ": more than the whole " + Mb(std::min<int64_t>(limit_, config_.asyncAllocator ? limit_ : int64_t(poolSize_))) +
                                       " limit or pool; use smaller partitions (a smaller blocksize) or raise --device-memory-limit");
  throw BasinError("BASIN_CUDA", DeviceLabel(device_) + ": out of device memory allocating " + Mb(int64_t(bytes)) + " for " + what +
                                     " after spilling cached columns and results to host (" + Mb(used_) + " in use of a " + Mb(limit_) +
                                     " limit); use smaller partitions (a smaller blocksize) or raise --device-memory-limit");
}

void DeviceState::configure(const DeviceConfig& c) {
  // Not while a chain runs: reset() frees the pool, the stream and the staging buffers
  // it uses (the order run_ then mu_, as in the chains, Warm and Keep).
  std::lock_guard<std::mutex> run(run_);
  spillAllOwned();
  reset();
  std::lock_guard<std::mutex> lock(mu_);
  config_ = c;
}

std::shared_ptr<CachedColumn> DeviceState::cached(uint64_t handle, int column, const std::weak_ptr<const Table>& alive) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find({handle, column});
  if (it == index_.end()) return nullptr;
  auto e = it->second;
  if (!e->owned && (e->alive.expired() || e->alive.owner_before(alive) || alive.owner_before(e->alive))) {
    // A released table's entry (handles are never reused; this is belt and braces).
    cachedBytes_ -= int64_t(e->col->bytes);
    index_.erase(it);
    stale_.push_back(std::move(e->col));
    lru_.erase(e);
    return nullptr;
  }
  lru_.splice(lru_.begin(), lru_, e);
  stats_.cacheHits++;
  return e->col;
}

void DeviceState::cache(uint64_t handle, int column, std::weak_ptr<const Table> alive, std::shared_ptr<CachedColumn> c) {
  std::list<std::shared_ptr<CachedColumn>> stale;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stale.splice(stale.end(), stale_);
    // Entries of released tables go first.
    for (auto it = lru_.begin(); it != lru_.end();) {
      if (it->owned || !it->alive.expired()) {
        ++it;
        continue;
      }
      cachedBytes_ -= int64_t(it->col->bytes);
      index_.erase({it->handle, it->column});
      stale.push_back(std::move(it->col));
      it = lru_.erase(it);
    }
    if (index_.count({handle, column})) return;
    cachedBytes_ += int64_t(c->bytes);
    lru_.push_front(Entry{handle, column, std::move(alive), std::move(c)});
    index_[{handle, column}] = lru_.begin();
  }
}

void DeviceState::adopt(uint64_t handle, TablePtr shape, std::vector<std::shared_ptr<CachedColumn>> cols) {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t bytes = 0;
  for (size_t i = 0; i < cols.size(); i++) {
    cols[i]->bytes = DeviceBytes(*cols[i]);  // columns computed here may not have counted theirs
    bytes += int64_t(cols[i]->bytes);
    cachedBytes_ += int64_t(cols[i]->bytes);
    lru_.push_front(Entry{handle, int(i), std::weak_ptr<const Table>(), std::move(cols[i]), true});
    index_[{handle, int(i)}] = lru_.begin();
  }
  owned_[handle] = OwnedTable{std::move(shape), bytes};
  stats_.resultTables++;
  stats_.resultBytes += bytes;
}

std::vector<std::shared_ptr<CachedColumn>> DeviceState::owned(uint64_t handle, TablePtr& shape) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::shared_ptr<CachedColumn>> cols;
  auto t = owned_.find(handle);
  if (t == owned_.end()) {
    shape = nullptr;
    return cols;
  }
  shape = t->second.shape;
  for (size_t i = 0; i < shape->columns.size(); i++) {
    auto it = index_.find({handle, int(i)});
    if (it == index_.end()) throw BasinError("BASIN_INTERNAL", DeviceLabel(device_) + ": a column of a table kept on the device is missing");
    lru_.splice(lru_.begin(), lru_, it->second);
    cols.push_back(it->second->col);
  }
  return cols;
}

template <class F>
void DeviceState::endOwned(uint64_t handle, const F& each) {
  auto t = owned_.find(handle);
  if (t == owned_.end()) return;
  for (size_t i = 0; i < t->second.shape->columns.size(); i++) {
    auto it = index_.find({handle, int(i)});
    if (it != index_.end()) each(it);
  }
  owned_.erase(t);
}

void DeviceState::disown(uint64_t handle, const TablePtr& host) {
  std::lock_guard<std::mutex> lock(mu_);
  endOwned(handle, [&](auto it) {
    it->second->owned = false;
    it->second->alive = host;
  });
}

void DeviceState::dropOwned(uint64_t handle) {
  // Called from any thread (a release on the JS thread): the columns are freed by the
  // next chain on this GPU (alloc, cache), with the GPU selected and its stream theirs.
  std::lock_guard<std::mutex> lock(mu_);
  endOwned(handle, [&](auto it) {
    cachedBytes_ -= int64_t(it->second->col->bytes);
    stale_.push_back(std::move(it->second->col));
    lru_.erase(it->second);
    index_.erase(it);
  });
}

bool DeviceState::keepResults() {
  std::lock_guard<std::mutex> lock(mu_);
  return config_.keepResults;
}

void DeviceState::spillAllOwned() {
  std::vector<uint64_t> handles;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!ready_) return;
    for (auto& [h, t] : owned_) handles.push_back(h);
  }
  if (!broken().empty() || cudaSetDevice(device_) != cudaSuccess) return;  // lost: their readers get BASIN_CUDA
  for (uint64_t h : handles) {
    try {
      SpillOwnedTable(*this, h);
    } catch (const BasinError& e) {
      // Lost (its readers get BASIN_CUDA); after a sticky error the rest are too.
      if (IsSticky(cudaStreamQuery(stream_))) {
        markBroken(e.what());
        return;
      }
    }
  }
}

MemoryStats DeviceState::stats() {
  std::lock_guard<std::mutex> lock(mu_);
  MemoryStats s = stats_;
  s.device = device_;
  s.broken = broken_;
  s.used = used_;
  s.limit = limit_;
  s.poolSize = int64_t(poolSize_);
  s.cachedBytes = cachedBytes_;
  s.cachedColumns = int64_t(lru_.size());
  s.phases.assign(phaseMicros_.begin(), phaseMicros_.end());
  return s;
}

void DeviceState::countUpload(size_t bytes, int64_t micros) {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.uploads++;
  stats_.uploadBytes += int64_t(bytes);
  stats_.uploadMicros += micros;
}

void DeviceState::countDownload(size_t bytes, int64_t micros) {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.downloads++;
  stats_.downloadBytes += int64_t(bytes);
  stats_.downloadMicros += micros;
}

void DeviceState::countChainTime(int64_t micros) {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.chainMicros += micros;
}

void DeviceState::countResultSpill(int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.resultSpills++;
  stats_.resultSpilledBytes += bytes;
}

void DeviceState::mark(const char* phase) {
  cudaStream_t s = stream();  // first: the GPU may fail to start, and no event is taken then
  cudaEvent_t e = nullptr;
  if (!events_.empty()) {
    e = events_.back();
    events_.pop_back();
  } else if (cudaEventCreate(&e) != cudaSuccess) {
    cudaGetLastError();
    return;  // timing is an instrument only
  }
  if (cudaEventRecord(e, s) != cudaSuccess) {
    cudaGetLastError();
    events_.push_back(e);
    return;
  }
  marks_.push_back(Mark{phase, e});
}

void DeviceState::endPhases(bool ok) noexcept {
  if (marks_.empty()) return;
  if (ok) {
    try {
      mark("");  // the end of the last span
    } catch (...) {
      ok = false;
    }
  }
  std::map<std::string, int64_t> spans;
  cudaError_t synced = ok && marks_.size() >= 2 ? cudaEventSynchronize(marks_.back().event) : cudaErrorNotReady;
  if (IsSticky(synced)) markBroken(DeviceLabel(device_) + ": waiting for a chain's end failed: " + cudaGetErrorString(synced));
  if (synced == cudaSuccess) {
    for (size_t i = 0; i + 1 < marks_.size(); i++) {
      float ms = 0;
      if (cudaEventElapsedTime(&ms, marks_[i].event, marks_[i + 1].event) == cudaSuccess) spans[marks_[i].phase] += int64_t(ms * 1000.0f);
    }
  }
  cudaGetLastError();
  for (const Mark& m : marks_) events_.push_back(m.event);
  marks_.clear();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [phase, micros] : spans) phaseMicros_[phase] += micros;
}

void DeviceState::countChain() {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.chains++;
}

void DeviceState::reset() {
  // Cached columns first, while their pool still exists (freed when the lists go).
  std::list<Entry> dropped;
  std::list<std::shared_ptr<CachedColumn>> stale;
  {
    std::lock_guard<std::mutex> lock(mu_);
    dropped.swap(lru_);
    stale.swap(stale_);
    index_.clear();
    owned_.clear();  // what spillAllOwned could not copy down is lost
    cachedBytes_ = 0;
  }
  dropped.clear();
  stale.clear();
  std::lock_guard<std::mutex> lock(mu_);
  generation_++;  // a buffer still held elsewhere is not returned to the pool freed below
  const bool usable = ready_ && broken_.empty();
  if (usable) {
    cudaSetDevice(device_);
    cudaStreamSynchronize(stream_);
    if (pool_) cudaFree(pool_);
    cudaStreamDestroy(stream_);
    cudaGetLastError();
  }
  staging_.release(usable);
  if (usable)
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
  events_.clear();  // after a sticky error they are gone with the context
  marks_.clear();
  pool_ = nullptr;
  stream_ = nullptr;
  free_.clear();
  poolSize_ = 0;
  used_ = 0;
  ready_ = false;
}

void DeviceState::markBroken(const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (broken_.empty()) broken_ = why;
  stats_.failures++;
}

std::string DeviceState::broken() {
  std::lock_guard<std::mutex> lock(mu_);
  return broken_;
}

}  // namespace gpu
}  // namespace basin
