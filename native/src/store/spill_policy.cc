#include "store/spill_policy.h"

#include <algorithm>
#include <cstring>

#include "store/column.h"

namespace basin {

const char* TierName(Tier t) {
  switch (t) {
    case Tier::Device: return "device";
    case Tier::Host: return "host";
    case Tier::Disk: return "disk";
  }
  return "?";
}

Tier TierFromName(const char* name) {
  for (int i = 0; i < kTierCount; i++)
    if (std::strcmp(name, TierName(Tier(i))) == 0) return Tier(i);
  throw BasinError("BASIN_INTERNAL", std::string("unknown memory tier '") + name + "'");
}

// Adds (sign 1) or takes away (-1) an item and its bytes: on its tier, and on disk for a
// kept file. The disk counts a file's own (compressed) size: a spill limit is disk space.
void SpillPolicy::account(const Item& it, int64_t sign) {
  counts_[int(it.tier)] += sign;
  if (it.tier != Tier::Disk) bytes_[int(it.tier)] += sign * it.bytes;
  if (it.tier == Tier::Disk || it.copy) bytes_[int(Tier::Disk)] += sign * it.fileBytes();
}

void SpillPolicy::add(uint64_t id, int64_t bytes, Tier t) {
  remove(id);
  Item& it = items_[id] = Item{bytes, t, 0, ++clock_, false};
  account(it, 1);
}

void SpillPolicy::resize(uint64_t id, int64_t bytes) {
  auto it = items_.find(id);
  if (it == items_.end()) return;
  account(it->second, -1);
  it->second.bytes = bytes;
  account(it->second, 1);
}

void SpillPolicy::remove(uint64_t id) {
  auto it = items_.find(id);
  if (it == items_.end()) return;
  account(it->second, -1);
  items_.erase(it);
}

void SpillPolicy::touch(uint64_t id) {
  auto it = items_.find(id);
  if (it != items_.end()) it->second.stamp = ++clock_;
}

void SpillPolicy::pin(uint64_t id) {
  auto it = items_.find(id);
  if (it != items_.end()) it->second.pins++;
}

void SpillPolicy::unpin(uint64_t id) {
  auto it = items_.find(id);
  if (it != items_.end() && it->second.pins > 0) it->second.pins--;
}

void SpillPolicy::moved(uint64_t id, Tier to, bool keepCopy, int64_t written) {
  auto it = items_.find(id);
  if (it == items_.end()) return;
  Item& item = it->second;
  account(item, -1);
  if (to == Tier::Disk && !item.copy) item.file = written;  // a new file (a kept one keeps its size)
  // Off disk with its file kept, or still holding a kept file: the copy stays valid
  // (tables never change); on disk the file is the table itself.
  item.copy = to != Tier::Disk && ((item.tier == Tier::Disk && keepCopy) || item.copy);
  item.tier = to;
  account(item, 1);
}

void SpillPolicy::dropCopy(uint64_t id) {
  auto it = items_.find(id);
  if (it == items_.end() || !it->second.copy) return;
  account(it->second, -1);
  it->second.copy = false;
  account(it->second, 1);
}

bool SpillPolicy::hasCopy(uint64_t id) const {
  auto it = items_.find(id);
  return it != items_.end() && it->second.copy;
}

Tier SpillPolicy::tier(uint64_t id) const {
  auto it = items_.find(id);
  if (it == items_.end()) throw BasinError("BASIN_INTERNAL", "spill policy: unknown entry " + std::to_string(id));
  return it->second.tier;
}

int64_t SpillPolicy::pins(uint64_t id) const {
  auto it = items_.find(id);
  return it == items_.end() ? 0 : it->second.pins;
}

bool SpillPolicy::over(Tier t, int64_t used, int64_t need) const {
  int64_t lim = limits_[int(t)];
  return lim != kUnlimited && used + need > lim;
}

SpillPlan SpillPolicy::plan(Tier t, int64_t used, int64_t need, const std::function<bool(uint64_t)>& busy) const {
  if (!over(t, used, need) || t == Tier::Disk) return {};
  int64_t lim = limits_[int(t)];
  int64_t target = int64_t(double(lim) * target_);
  return pick(t, used + need - target, used + need - lim, busy);
}

SpillPlan SpillPolicy::planToFree(Tier t, int64_t need, const std::function<bool(uint64_t)>& busy) const {
  if (t == Tier::Disk) return {};
  return pick(t, need, need, busy);
}

// Victims in LRU order until `excess` bytes are freed; stillOver when less than
// `stillOverBy` could be.
SpillPlan SpillPolicy::pick(Tier t, int64_t excess, int64_t stillOverBy, const std::function<bool(uint64_t)>& busy) const {
  SpillPlan out;
  std::vector<std::pair<uint64_t, uint64_t>> order;  // (stamp, id)
  for (auto& kv : items_)
    if (kv.second.tier == t && kv.second.pins == 0 && kv.second.bytes > 0 && !(busy && busy(kv.first)))
      order.emplace_back(kv.second.stamp, kv.first);
  std::sort(order.begin(), order.end());
  Tier next = Tier(int(t) + 1);
  // Only the last tier can be full: one that spills onward takes what comes and spills in turn.
  int64_t nextLim = next == Tier::Disk ? limits_[int(next)] : kUnlimited;
  int64_t nextBytes = bytes_[int(next)];
  int64_t freed = 0;
  for (auto& [stamp, id] : order) {
    if (freed >= excess) break;
    const Item& it = items_.at(id);
    // A table with a kept file goes to disk without taking more of it.
    bool reuse = it.copy && next == Tier::Disk;
    if (!reuse && nextLim != kUnlimited && nextBytes + it.bytes > nextLim) {
      out.nextTierFull = true;
      break;
    }
    out.moves.push_back(SpillMove{id, t, next, it.bytes, reuse});
    freed += it.bytes;
    if (!reuse) nextBytes += it.bytes;
  }
  out.stillOver = freed < stillOverBy;
  return out;
}

}  // namespace basin
