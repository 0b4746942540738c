#include "store/store.h"

#include <chrono>
#include <cstdio>

#include "io/spill_file.h"

namespace basin {

Store& Store::Instance() {
  static Store* store = new Store();  // never destroyed: buffers may outlive static teardown
  return *store;
}

namespace {
thread_local uint32_t t_owner = 0;
thread_local bool t_inSpill = false;  // this thread is spilling: its own allocations must not recurse

// Marks the thread as spilling for a scope.
struct InSpill {
  InSpill() { t_inSpill = true; }
  ~InSpill() { t_inSpill = false; }
  InSpill(const InSpill&) = delete;
  InSpill& operator=(const InSpill&) = delete;
};

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Allocations smaller than this never trigger a spill by themselves (a new table does).
constexpr size_t kSpillCheckBytes = size_t(1) << 16;
}  // namespace

void Store::SetThreadOwner(uint32_t owner) { t_owner = owner; }
uint32_t Store::ThreadOwner() { return t_owner; }

uint64_t Store::put(TablePtr t) {
  int64_t bytes = TableBytes(*t);
  int64_t rows = t->rows;
  uint64_t h;
  {
    std::lock_guard<std::mutex> lock(mu_);
    h = next_++;
    entries_.emplace(h, Entry{std::move(t), 1, t_owner, State::Memory, std::string(), rows, bytes, -1, nullptr});
    policy_.add(h, bytes, Tier::Host);
  }
  if (t_owner != 0) {
    try {
      maybeSpill(0);
    } catch (...) {
      release(h);  // nobody got the handle
      throw;
    }
  }
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
  std::vector<std::string> files;
  std::vector<std::pair<int, uint64_t>> onDevices;
  DeviceTier* tier = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    tier = deviceTier_;
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (owner != 0 && it->second.owner == owner) {
        doomed.push_back(std::move(it->second.table));
        std::string file = FileToRemove(it->second);
        if (!file.empty()) files.push_back(file);
        if (it->second.state == State::Device) onDevices.emplace_back(it->second.device, it->first);
        policy_.remove(it->first);
        it = entries_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& f : files) std::remove(f.c_str());
  if (tier)
    for (auto [device, handle] : onDevices) tier->drop(device, handle);
  return int64_t(doomed.size());
}

TablePtr Store::get(uint64_t handle) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    auto it = entries_.find(handle);
    if (it == entries_.end()) throw BasinError("BASIN_HANDLE", "unknown or released table handle " + std::to_string(handle));
    Entry& e = it->second;
    policy_.touch(handle);
    if (e.state == State::Memory || e.state == State::Spilling) return e.table;
    if (e.state == State::Loading) {  // another thread reads it back: wait for it
      loaded_.wait(lock);
      continue;
    }
    TablePtr t = readBack(handle, e, lock);
    if (!t) continue;  // the device tier spilled it to the host meanwhile
    lock.unlock();
    if (t_owner != 0) maybeSpill(0);  // `t` is held here, so it is not a candidate
    return t;
  }
}

TablePtr Store::readBack(uint64_t handle, Entry& e, std::unique_lock<std::mutex>& lock) {
  const bool fromDisk = e.state == State::Disk;
  const int device = e.device;
  const std::string file = e.file;
  DeviceTier* tier = deviceTier_;
  e.state = State::Loading;
  lock.unlock();
  auto t0 = std::chrono::steady_clock::now();
  TablePtr t;
  try {
    InSpill guard;  // reading back must not spill others mid-read
    if (fromDisk) t = ReadSpillFile(file);
    else if (tier) t = tier->download(device, handle);
    else throw BasinError("BASIN_INTERNAL", "table " + std::to_string(handle) + " is on a GPU but this Basin has no GPU support");
  } catch (...) {
    lock.lock();
    auto again = entries_.find(handle);
    if (again != entries_.end() && again->second.state == State::Memory) {  // the device tier spilled it meanwhile
      loaded_.notify_all();
      return nullptr;
    }
    if (again != entries_.end() && again->second.state == State::Loading) again->second.state = fromDisk ? State::Disk : State::Device;
    const bool released = again == entries_.end();
    loaded_.notify_all();
    if (released && !fromDisk && tier) {  // nobody will read it now: its device bytes go
      lock.unlock();
      tier->drop(device, handle);
      lock.lock();
    }
    throw;
  }
  double secs = SecondsSince(t0);
  lock.lock();
  if (!t) {
    auto again = entries_.find(handle);
    const bool lost = again != entries_.end() && again->second.state == State::Loading;  // not spilled to the host meanwhile
    if (lost) again->second.state = State::Device;
    loaded_.notify_all();
    if (lost)
      throw BasinError("BASIN_CUDA", "table " + std::to_string(handle) + " was kept on GPU " + std::to_string(device) +
                                         " and is lost (the GPU was reset or failed); run the pipeline again");
    return nullptr;
  }
  auto again = entries_.find(handle);
  if (again != entries_.end() && again->second.state == State::Loading) {
    // From disk the file stays: evicting the table again writes nothing.
    again->second.table = t;
    again->second.state = State::Memory;
    if (!fromDisk) arrived(handle, again->second);
    policy_.moved(handle, Tier::Host, fromDisk);
    policy_.touch(handle);
  } else if (again == entries_.end() && fromDisk) {  // released meanwhile: the caller still gets its copy
    std::remove(file.c_str());
  }
  if (fromDisk) {
    unspilledCount_++;
    unspilledBytes_ += TableBytes(*t);
    unspillSeconds_ += secs;
  }
  loaded_.notify_all();
  return t;
}

uint64_t Store::putOnDevice(int device, TablePtr shape, int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t h = next_++;
  const int64_t rows = shape->rows;
  entries_.emplace(h, Entry{nullptr, 1, t_owner, State::Device, std::string(), rows, bytes, device, std::move(shape)});
  policy_.add(h, bytes, Tier::Device);
  return h;
}

TablePtr Store::onDevice(uint64_t handle, int device) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Entry& e = entry(handle);
  return e.state == State::Device && e.device == device ? e.shape : nullptr;
}

int Store::deviceOf(uint64_t handle) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Entry& e = entry(handle);
  return e.state == State::Device ? e.device : -1;
}

void Store::deviceSpilled(uint64_t handle, TablePtr table) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(handle);
    if (it == entries_.end()) return;  // released: the copy goes with `table`
    Entry& e = it->second;
    if (e.state != State::Device && !(e.state == State::Loading && e.device >= 0)) return;
    e.table = std::move(table);
    e.state = State::Memory;
    arrived(handle, e);
    policy_.moved(handle, Tier::Host);
    loaded_.notify_all();
  }
  if (t_owner != 0) maybeSpill(0);
}

void Store::arrived(uint64_t handle, Entry& e) {
  e.device = -1;
  e.shape.reset();
  e.bytes = TableBytes(*e.table);  // the host's bytes, not the device's
  policy_.resize(handle, e.bytes);
}

DeviceTier* Store::setDeviceTier(DeviceTier* tier) {
  std::lock_guard<std::mutex> lock(mu_);
  DeviceTier* before = deviceTier_;
  deviceTier_ = tier;
  return before;
}

void Store::retain(uint64_t handle) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(handle);
  if (it == entries_.end()) throw BasinError("BASIN_HANDLE", "retain of unknown handle " + std::to_string(handle));
  it->second.refs++;
}

void Store::release(uint64_t handle) {
  TablePtr doomed;  // destroyed outside the lock
  std::string file;
  int device = -1;
  DeviceTier* tier = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(handle);
    if (it == entries_.end()) throw BasinError("BASIN_HANDLE", "release of unknown handle " + std::to_string(handle));
    if (--it->second.refs > 0) return;
    doomed = std::move(it->second.table);
    file = FileToRemove(it->second);
    if (it->second.state == State::Device) device = it->second.device;  // Loading: the reader's download disposes of it
    tier = deviceTier_;
    policy_.remove(handle);
    entries_.erase(it);
  }
  if (!file.empty()) std::remove(file.c_str());
  if (device >= 0 && tier) tier->drop(device, handle);
}

std::string Store::FileToRemove(const Entry& e) {
  return e.state == State::Disk || e.state == State::Memory ? e.file : std::string();
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

void Store::configure(const MemoryConfig& c) {
  std::lock_guard<std::mutex> lock(mu_);
  config_ = c;
  policy_.setLimit(Tier::Host, c.hostLimit);
  policy_.setLimit(Tier::Disk, c.diskLimit);
  policy_.setTarget(c.target);
  hostLimit_ = c.hostLimit;
}

MemoryConfig Store::config() const {
  std::lock_guard<std::mutex> lock(mu_);
  return config_;
}

MemoryStats Store::memoryStats() const {
  std::lock_guard<std::mutex> lock(mu_);
  MemoryStats s{};
  s.hostBytes = bytes_.load();
  s.hostLimit = config_.hostLimit;
  s.hostTables = policy_.count(Tier::Host);
  s.diskBytes = policy_.bytes(Tier::Disk);
  s.diskTables = policy_.count(Tier::Disk);
  s.deviceBytes = policy_.bytes(Tier::Device);
  s.spilledCount = spilledCount_;
  s.spilledBytes = spilledBytes_;
  s.unspilledCount = unspilledCount_;
  s.unspilledBytes = unspilledBytes_;
  s.writtenBytes = writtenBytes_;
  s.reusedCount = reusedCount_;
  s.spillSeconds = spillSeconds_;
  s.unspillSeconds = unspillSeconds_;
  s.overLimit = policy_.over(Tier::Host, s.hostBytes, 0);
  return s;
}

void Store::pin(uint64_t handle) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!entries_.count(handle)) throw BasinError("BASIN_HANDLE", "pin of unknown handle " + std::to_string(handle));
  policy_.pin(handle);
}

void Store::unpin(uint64_t handle) {
  std::lock_guard<std::mutex> lock(mu_);
  policy_.unpin(handle);  // a table released meanwhile (a failed run's) needs no unpin
}

bool Store::isSpilled(uint64_t handle) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Entry& e = entry(handle);
  return e.state == State::Disk || e.state == State::Loading || e.state == State::Device;
}

bool Store::has(uint64_t handle) const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.count(handle) > 0;
}

const Store::Entry& Store::entry(uint64_t handle) const {
  auto it = entries_.find(handle);
  if (it == entries_.end()) throw BasinError("BASIN_HANDLE", "unknown or released table handle " + std::to_string(handle));
  return it->second;
}

int64_t Store::rows(uint64_t handle) const {
  std::lock_guard<std::mutex> lock(mu_);
  return entry(handle).rows;
}

int64_t Store::bytes(uint64_t handle) const {
  std::lock_guard<std::mutex> lock(mu_);
  return entry(handle).bytes;
}

void Store::beforeAlloc(size_t bytes) {
  if (t_owner == 0 || t_inSpill || bytes < kSpillCheckBytes) return;
  int64_t lim = hostLimit_.load();
  if (lim == SpillPolicy::kUnlimited || bytes_.load() + int64_t(bytes) <= lim) return;
  maybeSpill(int64_t(bytes));
}

bool Store::spillToFree(size_t bytes) {
  if (t_inSpill) return false;
  InSpill guard;
  std::unique_lock<std::mutex> lock(mu_);
  if (config_.directory.empty()) return false;
  SpillPlan plan = policy_.planToFree(Tier::Host, int64_t(bytes), [this](uint64_t id) {
    const Entry& e = entries_.at(id);
    return e.state != State::Memory || e.table.use_count() > 1;
  });
  if (plan.moves.empty()) return false;
  carryOut(plan, lock);
  return true;
}

void Store::maybeSpill(int64_t need, bool force) {
  if (t_inSpill || (hostLimit_.load() == SpillPolicy::kUnlimited && !force)) return;
  InSpill guard;
  std::unique_lock<std::mutex> lock(mu_);
  // In use = read by a kernel now (the store's reference is not the only one) or moving.
  auto busy = [this](uint64_t id) {
    const Entry& e = entries_.at(id);
    return e.state != State::Memory || e.table.use_count() > 1;
  };
  SpillPlan plan = force ? policy_.planToFree(Tier::Host, need, busy) : policy_.plan(Tier::Host, bytes_.load(), need, busy);
  std::string dir = config_.directory;
  int64_t diskLimit = config_.diskLimit;
  if (plan.moves.empty() && !(plan.nextTierFull && plan.stillOver)) return;
  if (dir.empty()) throw BasinError("BASIN_SPILL", "the host memory limit is reached but no spill directory is set; set localDirectory");
  if (!plan.moves.empty()) carryOut(plan, lock);
  if (plan.nextTierFull && plan.stillOver) {
    // The disk is full: files kept by tables in memory go first, then once more.
    if (!lock.owns_lock()) lock.lock();
    if (dropCopies(lock)) {
      lock.lock();
      plan = force ? policy_.planToFree(Tier::Host, need, busy) : policy_.plan(Tier::Host, bytes_.load(), need, busy);
      if (!plan.moves.empty()) carryOut(plan, lock);
    }
  }
  if (plan.nextTierFull && plan.stillOver)
    throw BasinError("BASIN_SPILL", "the spill directory " + dir + " is full: its limit of " + std::to_string(diskLimit) +
                                        " bytes is reached while the host is over its memory limit; raise the spill limit, free disk space, or raise --memory-limit");
}

std::string Store::spillPath(uint64_t handle) const { return config_.directory + "/t" + std::to_string(handle) + ".arrow"; }

// Holds the lock on entry; released on return when it returns true.
bool Store::dropCopies(std::unique_lock<std::mutex>& lock) {
  std::vector<std::string> files;
  for (auto& [id, e] : entries_)
    if (e.state == State::Memory && !e.file.empty()) {
      files.push_back(std::move(e.file));
      e.file.clear();
      policy_.dropCopy(id);
    }
  if (files.empty()) return false;
  lock.unlock();
  for (auto& f : files) std::remove(f.c_str());
  return true;
}

// Writes the plan's tables to disk one by one, outside the lock (held on entry,
// released on return); a table that kept its file from an earlier spill is not
// written again. A table someone started reading meanwhile stays in memory.
void Store::carryOut(const SpillPlan& plan, std::unique_lock<std::mutex>& lock) {
  struct Job {
    uint64_t id;
    TablePtr table;
    std::string path;
    int64_t bytes;
    bool reuse;
  };
  std::vector<Job> jobs;
  SpillCodec codec = config_.codec;
  for (const SpillMove& m : plan.moves) {
    Entry& e = entries_.at(m.id);
    e.state = State::Spilling;
    bool reuse = !e.file.empty();
    jobs.push_back(Job{m.id, e.table, reuse ? e.file : spillPath(m.id), m.bytes, reuse});
  }
  lock.unlock();
  size_t i = 0;
  try {
    for (; i < jobs.size(); i++) {
      Job& job = jobs[i];
      auto t0 = std::chrono::steady_clock::now();
      int64_t written = job.reuse ? 0 : WriteSpillFile(job.path, *job.table, codec);
      double secs = SecondsSince(t0);
      TablePtr drop;  // freed outside the lock
      bool removeFile = true;
      lock.lock();
      auto it = entries_.find(job.id);
      if (it != entries_.end()) {
        Entry& e = it->second;
        writtenBytes_ += written;
        if (e.table.use_count() > 2) {  // the entry's and ours: anyone else is reading it
          e.state = State::Memory;
          removeFile = !job.reuse;  // a kept copy stays kept
        } else {
          drop = std::move(e.table);
          e.state = State::Disk;
          e.file = job.path;
          policy_.moved(job.id, Tier::Disk, false, job.reuse ? -1 : written);
          spilledCount_++;
          spilledBytes_ += job.bytes;
          spillSeconds_ += secs;
          if (job.reuse) reusedCount_++;
          removeFile = false;
        }
      }
      loaded_.notify_all();
      lock.unlock();
      if (removeFile) std::remove(job.path.c_str());
      job.table.reset();
    }
  } catch (...) {
    lock.lock();
    for (; i < jobs.size(); i++) {
      auto it = entries_.find(jobs[i].id);
      if (it != entries_.end() && it->second.state == State::Spilling) it->second.state = State::Memory;
    }
    loaded_.notify_all();
    lock.unlock();
    throw;  // jobs' references go after the lock is released
  }
}

}  // namespace basin
