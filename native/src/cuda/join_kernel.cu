#include "cuda/join_kernel.cuh"

#include <thrust/iterator/counting_iterator.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include "cuda/cuda_check.cuh"
#include "cuda/key_compare.cuh"

namespace basin {
namespace gpu {

namespace {

// Right row `row`'s slot in the table, or -1 when a key is null (such rows never
// match); `keep` flags the rows in the table.
__global__ void BuildKernel(Keys keys, int64_t n, int32_t* slotRow, int32_t* rowSlot, uint8_t* keep, uint64_t mask) {
  const int64_t row = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= n) return;
  const bool ok = RowValid(keys, row);
  rowSlot[row] = ok ? int32_t(FindOrInsert(keys, row, slotRow, mask)) : -1;
  keep[row] = ok;
}

// Each slot's range [start, end) of positions in the right rows sorted by slot.
__global__ void RangesKernel(const uint32_t* slot, int64_t n, int32_t* start, int32_t* end) {
  const int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n) return;
  const uint32_t s = slot[j];
  if (j == 0 || slot[j - 1] != s) start[s] = int32_t(j);
  if (j == n - 1 || slot[j + 1] != s) end[s] = int32_t(j + 1);
}

// Per left row: the slot of the right rows with its key (-1: none, or a null key) and
// how many output rows it makes under `how`. Right/outer joins flag the slots matched.
__global__ void ProbeKernel(Keys lk, int64_t n, Keys rk, const int32_t* slotRow, const int32_t* start, const int32_t* end,
                            uint64_t mask, int how, int32_t* lslot, int64_t* out, uint8_t* matched) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int32_t slot = -1;
  if (RowValid(lk, i)) {
    // Stops at an empty slot: the table is at most half full.
    for (uint64_t s = RowHash(lk, i) & mask;; s = (s + 1) & mask) {
      const int32_t r = slotRow[s];
      if (r == -1) break;
      if (RowsEq(lk, i, rk, r)) {
        slot = int32_t(s);
        break;
      }
    }
  }
  const int64_t k = slot < 0 ? 0 : end[slot] - start[slot];
  lslot[i] = slot;
  // Read first: a hot key's slot is written once, not by every row that matches it.
  if (matched && slot >= 0 && !matched[slot]) matched[slot] = 1;
  switch (JoinHow(how)) {
    case JoinHow::Inner:
    case JoinHow::Right: out[i] = k; break;
    case JoinHow::Left:
    case JoinHow::Outer: out[i] = k > 0 ? k : 1; break;
    case JoinHow::Semi: out[i] = k > 0; break;
    case JoinHow::Anti: out[i] = k == 0; break;
  }
}

// Left row i's pairs at offset[i]: its matches in right input order (rows: the right
// rows sorted by slot), or (i, none) for an unmatched row of a left/outer join.
__global__ void EmitKernel(int64_t n, int how, const int32_t* lslot, const int32_t* start, const int32_t* end,
                           const int64_t* offset, const int32_t* rows, uint32_t* l, uint32_t* r) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const JoinHow h = JoinHow(how);
  const int32_t slot = lslot[i];
  const int64_t o = offset[i], from = slot < 0 ? 0 : start[slot], k = slot < 0 ? 0 : end[slot] - from;
  if (h == JoinHow::Semi || h == JoinHow::Anti) {
    if ((h == JoinHow::Semi) == (k > 0)) l[o] = uint32_t(i);
    return;
  }
  for (int64_t j = 0; j < k; j++) {
    l[o + j] = uint32_t(i);
    r[o + j] = uint32_t(rows[from + j]);
  }
  if (k == 0 && (h == JoinHow::Left || h == JoinHow::Outer)) {
    l[o] = uint32_t(i);
    r[o] = kJoinNone;
  }
}

// Right rows no left row matched: a null key, or a slot never flagged.
__global__ void UnmatchedKernel(const int32_t* rowSlot, const uint8_t* matched, int64_t n, uint8_t* flag) {
  const int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n) return;
  const int32_t s = rowSlot[j];
  flag[j] = s < 0 || !matched[s];
}

// The right side's hash table: slotRow (a representative row per slot, -1 empty), the
// slot of each right row (-1: a null key), and each slot's rows in right input order
// (rows[start[s], end[s])).
struct RightTable {
  uint64_t mask = 0;
  DBuf slotRow, rowSlot, start, end, rows;
};

RightTable BuildRight(DeviceState& dev, const Keys& keys, int64_t nr) {
  auto s = dev.stream();
  RightTable t;
  // At least twice as many slots as rows (nr <= 2^30: a slot fits an int32), so probes
  // stay short and always reach an empty slot.
  uint64_t cap = 16;
  int bits = 4;
  while (cap < uint64_t(nr) * 2) cap <<= 1, bits++;
  t.mask = cap - 1;
  const size_t nr1 = size_t(std::max<int64_t>(nr, 1));
  t.slotRow = dev.alloc(cap * 4, "a join hash table");
  t.start = dev.alloc(cap * 4, "a join hash table");
  t.end = dev.alloc(cap * 4, "a join hash table");
  t.rowSlot = dev.alloc(nr1 * 4, "a join hash table");
  Check(dev.device(), "clear a join hash table", cudaMemsetAsync(t.slotRow->data(), 0xFF, cap * 4, s));  // -1
  Check(dev.device(), "clear a join hash table", cudaMemsetAsync(t.start->data(), 0, cap * 4, s));
  Check(dev.device(), "clear a join hash table", cudaMemsetAsync(t.end->data(), 0, cap * 4, s));
  t.rows = dev.alloc(nr1 * 4, "a join hash table");
  if (nr == 0) return t;
  DBuf keep = dev.alloc(nr1, "a join hash table");
  BuildKernel<<<Blocks(nr), kBlock, 0, s>>>(keys, nr, t.slotRow->as<int32_t>(), t.rowSlot->as<int32_t>(), keep->as<uint8_t>(), t.mask);
  // The rows with a slot, with their slots (both in right input order), then sorted by
  // slot: a stable sort, so each slot's rows stay in input order.
  DBuf slots = dev.alloc(nr1 * 4, "a join hash table"), rows = dev.alloc(nr1 * 4, "a join hash table");
  DBuf count = dev.alloc(8, "a join hash table");
  RunCub(dev, "a join hash table", [&](void* scratch, size_t& bytes) {
    return cub::DeviceSelect::Flagged(scratch, bytes, t.rowSlot->as<uint32_t>(), keep->as<uint8_t>(), slots->as<uint32_t>(),
                                      count->as<int64_t>(), nr, s);
  });
  thrust::counting_iterator<int32_t> it(0);
  RunCub(dev, "a join hash table", [&](void* scratch, size_t& bytes) {
    return cub::DeviceSelect::Flagged(scratch, bytes, it, keep->as<uint8_t>(), rows->as<int32_t>(), count->as<int64_t>(), nr, s);
  });
  int64_t kept = 0;
  ToHost(dev, &kept, count->data(), 8);
  if (kept == 0) return t;
  DBuf sorted = dev.alloc(size_t(kept) * 4, "a join hash table");
  RunCub(dev, "a join hash table", [&](void* scratch, size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(scratch, bytes, slots->as<uint32_t>(), sorted->as<uint32_t>(), rows->as<int32_t>(),
                                           t.rows->as<int32_t>(), kept, 0, bits, s);
  });
  RangesKernel<<<Blocks(kept), kBlock, 0, s>>>(sorted->as<uint32_t>(), kept, t.start->as<int32_t>(), t.end->as<int32_t>());
  return t;
}

}  // namespace

DevicePairs MatchRows(DTable& l, const std::vector<int>& lkeys, DTable& r, const std::vector<int>& rkeys, JoinHow how) {
  if (lkeys.empty() || lkeys.size() != rkeys.size() || lkeys.size() > size_t(kMaxKeys))
    throw BasinError("BASIN_INTERNAL", "GPU: a join needs 1 to 8 key columns a side, as many left as right");
  DeviceState& dev = l.dev;
  auto s = dev.stream();
  const int64_t nr = r.rows, nl = l.rows;
  const Keys lk = KeysOf(l, lkeys), rk = KeysOf(r, rkeys);
  RightTable t = BuildRight(dev, rk, nr);
  const bool markHits = how == JoinHow::Right || how == JoinHow::Outer;
  const size_t cap = size_t(t.mask) + 1;
  DBuf matched = markHits ? dev.alloc(cap, "a join's matched slots") : nullptr;
  if (matched) Check(dev.device(), "clear a join's matched slots", cudaMemsetAsync(matched->data(), 0, cap, s));
  // Probe, count, place.
  const size_t nl1 = size_t(std::max<int64_t>(nl, 1));
  DBuf lslot = dev.alloc(nl1 * 4, "a join probe"), out = dev.alloc(nl1 * 8, "a join probe"), offset = dev.alloc(nl1 * 8, "a join probe");
  int64_t total = 0;
  if (nl > 0) {
    ProbeKernel<<<Blocks(nl), kBlock, 0, s>>>(lk, nl, rk, t.slotRow->as<int32_t>(), t.start->as<int32_t>(), t.end->as<int32_t>(),
                                              t.mask, int(how), lslot->as<int32_t>(), out->as<int64_t>(),
                                              matched ? matched->as<uint8_t>() : nullptr);
    RunCub(dev, "a join probe", [&](void* scratch, size_t& bytes) {
      return cub::DeviceScan::ExclusiveSum(scratch, bytes, out->as<int64_t>(), offset->as<int64_t>(), nl, s);
    });
    int64_t last[2];
    ToHost(dev, &last[0], offset->as<int64_t>() + (nl - 1), 8);
    ToHost(dev, &last[1], out->as<int64_t>() + (nl - 1), 8);
    total = last[0] + last[1];
  }
  // Right/outer: the right rows no left row matched, in right input order.
  int64_t missed = 0;
  DBuf unmatched;
  if (markHits && nr > 0) {
    DBuf flag = dev.alloc(size_t(nr), "a join's unmatched rows"), count = dev.alloc(8, "a join's unmatched rows");
    unmatched = dev.alloc(size_t(nr) * 4, "a join's unmatched rows");
    UnmatchedKernel<<<Blocks(nr), kBlock, 0, s>>>(t.rowSlot->as<int32_t>(), matched->as<uint8_t>(), nr, flag->as<uint8_t>());
    thrust::counting_iterator<int32_t> it(0);
    RunCub(dev, "a join's unmatched rows", [&](void* scratch, size_t& bytes) {
      return cub::DeviceSelect::Flagged(scratch, bytes, it, flag->as<uint8_t>(), unmatched->as<int32_t>(), count->as<int64_t>(), nr, s);
    });
    ToHost(dev, &missed, count->data(), 8);
  }
  const int64_t n = total + missed;
  if (n >= int64_t(kJoinNone)) throw BasinError("BASIN_INTERNAL", "GPU: a join result of 2^32 rows or more in one partition");
  const size_t n1 = size_t(std::max<int64_t>(n, 1));
  const bool hasRight = how != JoinHow::Semi && how != JoinHow::Anti;
  DevicePairs pairs;
  pairs.n = n;
  pairs.split = total;
  pairs.l = dev.alloc(n1 * 4, "join pairs");
  pairs.r = hasRight ? dev.alloc(n1 * 4, "join pairs") : nullptr;
  if (nl > 0)
    EmitKernel<<<Blocks(nl), kBlock, 0, s>>>(nl, int(how), lslot->as<int32_t>(), t.start->as<int32_t>(), t.end->as<int32_t>(),
                                             offset->as<int64_t>(), t.rows->as<int32_t>(), pairs.l->as<uint32_t>(),
                                             hasRight ? pairs.r->as<uint32_t>() : nullptr);
  if (missed > 0) {
    const size_t bytes = size_t(missed) * 4;
    Check(dev.device(), "place a join's unmatched rows", cudaMemsetAsync(pairs.l->as<uint32_t>() + total, 0xFF, bytes, s));  // kJoinNone
    Check(dev.device(), "place a join's unmatched rows",
          cudaMemcpyAsync(pairs.r->as<uint32_t>() + total, unmatched->data(), bytes, cudaMemcpyDeviceToDevice, s));
  }
  return pairs;
}

}  // namespace gpu
}  // namespace basin
