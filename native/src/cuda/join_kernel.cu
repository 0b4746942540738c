#include "cuda/join_kernel.cuh"

#include <thrust/iterator/counting_iterator.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include "cuda/column_access.cuh"
#include "cuda/cuda_check.cuh"

namespace basin {
namespace gpu {

namespace {

__global__ void RightKeysKernel(ColumnView c, int64_t n, int64_t* keys, uint8_t* valid) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int64_t p;
  valid[i] = Valid(c, i, p);
  keys[i] = AsInt(c, p);
}

__device__ inline int64_t LowerBound(const int64_t* a, int64_t n, int64_t k) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = (lo + hi) / 2;
    if (a[mid] < k) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// Per left row: where its matches start in the sorted right keys, how many, and how many
// output rows it makes under `how` (0 inner, 1 left, 4 semi, 5 anti: JoinHow's values).
__global__ void ProbeKernel(ColumnView c, int64_t n, const int64_t* sorted, int64_t m, int how, int64_t* start, int64_t* count, int64_t* out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int64_t p, lo = 0, k = 0;
  if (Valid(c, i, p)) {
    const int64_t key = AsInt(c, p);
    lo = LowerBound(sorted, m, key);
    int64_t hi = lo;
    while (hi < m && sorted[hi] == key) hi++;  // usually a few: a second search is slower
    k = hi - lo;
  }
  start[i] = lo;
  count[i] = k;
  const JoinHow h = JoinHow(how);
  out[i] = h == JoinHow::Inner ? k : h == JoinHow::Left ? (k > 0 ? k : 1) : h == JoinHow::Semi ? (k > 0) : (k == 0);
}

__global__ void EmitKernel(int64_t n, int how, const int64_t* start, const int64_t* count, const int64_t* offset, const int32_t* rows,
                           uint32_t* l, uint32_t* r) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const JoinHow h = JoinHow(how);
  const int64_t o = offset[i], k = count[i];
  if (h == JoinHow::Semi || h == JoinHow::Anti) {
    if ((h == JoinHow::Semi) == (k > 0)) l[o] = uint32_t(i);
    return;
  }
  for (int64_t j = 0; j < k; j++) {
    l[o + j] = uint32_t(i);
    r[o + j] = uint32_t(rows[start[i] + j]);
  }
  if (k == 0 && h == JoinHow::Left) {
    l[o] = uint32_t(i);
    r[o] = kJoinNone;
  }
}

}  // namespace

DevicePairs MatchRows(DTable& l, int lkey, DTable& r, int rkey, JoinHow how) {
  DeviceState& dev = l.dev;
  auto s = dev.stream();
  const int64_t nr = r.rows, nl = l.rows;
  DevicePairs pairs;
  // The right keys that can match (not null), with their row numbers, sorted by key.
  ColumnView rv = r.view(rkey);
  const size_t nr1 = size_t(std::max<int64_t>(nr, 1));
  DBuf keys = dev.alloc(nr1 * 8, "join keys"), valid = dev.alloc(nr1, "join keys");
  DBuf ck = dev.alloc(nr1 * 8, "join keys"), ci = dev.alloc(nr1 * 4, "join keys"), m = dev.alloc(8, "join keys");
  int64_t kept = 0;
  if (nr > 0) {
    RightKeysKernel<<<Blocks(nr), kBlock, 0, s>>>(rv, nr, keys->as<int64_t>(), valid->as<uint8_t>());
    RunCub(dev, "join", [&](void* scratch, size_t& bytes) { return cub::DeviceSelect::Flagged(scratch, bytes, keys->as<int64_t>(), valid->as<uint8_t>(), ck->as<int64_t>(), m->as<int64_t>(), nr, s); });
    thrust::counting_iterator<int32_t> it(0);
    RunCub(dev, "join", [&](void* scratch, size_t& bytes) { return cub::DeviceSelect::Flagged(scratch, bytes, it, valid->as<uint8_t>(), ci->as<int32_t>(), m->as<int64_t>(), nr, s); });
    ToHost(dev, &kept, m->data(), 8);
  }
  const size_t kept1 = size_t(std::max<int64_t>(kept, 1));
  DBuf sk = dev.alloc(kept1 * 8, "join keys"), si = dev.alloc(kept1 * 4, "join keys");
  if (kept > 0) {
    RunCub(dev, "join sort", [&](void* scratch, size_t& bytes) { return cub::DeviceRadixSort::SortPairs(scratch, bytes, ck->as<int64_t>(), sk->as<int64_t>(), ci->as<int32_t>(), si->as<int32_t>(), kept, 0, 64, s); });
  }
  if (nl == 0) return pairs;
  // Probe, count, place, write.
  ColumnView lv = l.view(lkey);
  DBuf start = dev.alloc(size_t(nl) * 8, "join probe"), count = dev.alloc(size_t(nl) * 8, "join probe");
  DBuf out = dev.alloc(size_t(nl) * 8, "join probe"), offset = dev.alloc(size_t(nl) * 8, "join probe");
  ProbeKernel<<<Blocks(nl), kBlock, 0, s>>>(lv, nl, sk->as<int64_t>(), kept, int(how), start->as<int64_t>(), count->as<int64_t>(), out->as<int64_t>());
  RunCub(dev, "join", [&](void* scratch, size_t& bytes) { return cub::DeviceScan::ExclusiveSum(scratch, bytes, out->as<int64_t>(), offset->as<int64_t>(), nl, s); });
  int64_t last[2];
  ToHost(dev, &last[0], offset->as<int64_t>() + (nl - 1), 8);
  ToHost(dev, &last[1], out->as<int64_t>() + (nl - 1), 8);
  const int64_t total = last[0] + last[1];
  if (total >= int64_t(kJoinNone)) throw BasinError("BASIN_INTERNAL", "a join result of 2^32 rows or more in one partition");
  const size_t total1 = size_t(std::max<int64_t>(total, 1));
  DBuf lrows = dev.alloc(total1 * 4, "join pairs");
  const bool right = how == JoinHow::Inner || how == JoinHow::Left;
  DBuf rrows = right ? dev.alloc(total1 * 4, "join pairs") : nullptr;
  EmitKernel<<<Blocks(nl), kBlock, 0, s>>>(nl, int(how), start->as<int64_t>(), count->as<int64_t>(), offset->as<int64_t>(), si->as<int32_t>(),
                                           lrows->as<uint32_t>(), right ? rrows->as<uint32_t>() : nullptr);
  pairs.l = lrows;
  pairs.r = rrows;
  pairs.n = total;
  return pairs;
}

}  // namespace gpu
}  // namespace basin
