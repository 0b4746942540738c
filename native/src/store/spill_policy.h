// The spill policy as a pure state machine: which table lives on which memory tier,
// how many bytes each tier holds, and which tables move when a tier is over its
// limit. No I/O and no locking: the store (store.cc) carries the moves out under its
// lock, and spillPolicyRun (bind/spill_api.cc) replays event scripts for unit tests.
#pragma once
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

namespace basin {

// Tiers from fastest to slowest; a table spills to the next one. Device is designed
// in (the CUDA build spills device → host) but no CPU table lives there.
enum class Tier : uint8_t { Device = 0, Host = 1, Disk = 2 };
constexpr int kTierCount = 3;
const char* TierName(Tier t);
Tier TierFromName(const char* name);  // throws BASIN_INTERNAL on an unknown name

struct SpillMove {
  uint64_t id;
  Tier from, to;
  int64_t bytes;
  // The table still has its file from an earlier spill: the move writes nothing.
  bool reuse = false;
};

struct SpillPlan {
  std::vector<SpillMove> moves;
  // The next tier has no room for the next victim (disk full): the caller fails,
  // naming that tier's location, if the moves were not enough.
  bool nextTierFull = false;
  // Even after the moves the tier stays over its limit (everything left is pinned or in use).
  bool stillOver = false;
};

class SpillPolicy {
 public:
  static constexpr int64_t kUnlimited = -1;

  // A limit per tier (kUnlimited: never spill from it, and it is never full).
  void setLimit(Tier t, int64_t bytes) { limits_[int(t)] = bytes; }
  int64_t limit(Tier t) const { return limits_[int(t)]; }
  // Once over its limit, a tier is spilled down to this fraction of it, so that the
  // next few allocations do not each trigger a spill (hysteresis).
  void setTarget(double fraction) { target_ = fraction; }
  double target() const { return target_; }

  void add(uint64_t id, int64_t bytes, Tier t);  // the newest, most recently used entry
  void remove(uint64_t id);
  // The entry's size changed (a table of the device tier read back to the host, whose
  // bytes are then counted as the host's); keeps its tier, pins and place in line.
  void resize(uint64_t id, int64_t bytes);
  void touch(uint64_t id);                       // used now: last in line to move
  void pin(uint64_t id);                         // pinned entries never move
  void unpin(uint64_t id);
  // A move (or an unspill) was carried out. Read back from disk with `keepCopy`, the
  // table keeps its file (counted on the disk tier) so that evicting it again writes nothing.
  // A move to disk that wrote a file says its size (`written`; -1: the table's bytes).
  void moved(uint64_t id, Tier to, bool keepCopy = false, int64_t written = -1);
  void dropCopy(uint64_t id);                    // its kept file was removed
  bool hasCopy(uint64_t id) const;
  bool has(uint64_t id) const { return items_.count(id) > 0; }
  Tier tier(uint64_t id) const;
  int64_t pins(uint64_t id) const;
  // Bytes on tier t; the disk's are its files' sizes, those kept by tables read back included.
  int64_t bytes(Tier t) const { return bytes_[int(t)]; }
  int64_t count(Tier t) const { return counts_[int(t)]; }  // tables living on tier t

  // Whether `used + need` bytes exceed tier t's limit; `used` is what the tier
  // measurably holds (for the host: every live buffer, kernels' scratch included).
  bool over(Tier t, int64_t used, int64_t need) const;
  // The moves that bring tier t from `used + need` bytes down to its target: least
  // recently used first, skipping pinned entries and those `busy` says are being read.
  // Nothing moves while the tier is within its limit.
  SpillPlan plan(Tier t, int64_t used, int64_t need, const std::function<bool(uint64_t)>& busy) const;
  // After an allocation of `need` bytes failed: moves freeing at least `need` bytes
  // of tier t whatever its limit (then the caller retries the allocation once).
  SpillPlan planToFree(Tier t, int64_t need, const std::function<bool(uint64_t)>& busy) const;

 private:
  struct Item {
    int64_t bytes;
    Tier tier;
    int64_t pins;
    uint64_t stamp;     // larger = used more recently
    bool copy;          // off disk, but its spill file is kept
    int64_t file = -1;  // its spill file's size (-1: not known, counted as `bytes`)
    int64_t fileBytes() const { return file >= 0 ? file : bytes; }
  };
  void account(const Item& it, int64_t sign);
  SpillPlan pick(Tier t, int64_t excess, int64_t stillOverBy, const std::function<bool(uint64_t)>& busy) const;
  std::unordered_map<uint64_t, Item> items_;
  uint64_t clock_ = 0;
  int64_t limits_[kTierCount] = {kUnlimited, kUnlimited, kUnlimited};
  int64_t bytes_[kTierCount] = {0, 0, 0};
  int64_t counts_[kTierCount] = {0, 0, 0};  // memoryStats() reads them after every task: kept, not counted
  double target_ = 0.8;
};

}  // namespace basin
