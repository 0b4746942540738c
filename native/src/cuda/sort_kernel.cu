#include "cuda/sort_kernel.cuh"

#include <thrust/iterator/counting_iterator.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>

#include "cuda/column_access.cuh"
#include "cuda/cuda_check.cuh"

namespace basin {
namespace gpu {

namespace {

__global__ void KeysKernel(ColumnView c, int64_t n, bool descending, uint64_t* keys, uint8_t* valid, uint8_t* isNull) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int64_t p;
  const bool ok = Valid(c, i, p);
  valid[i] = ok;
  isNull[i] = !ok;
  const uint64_t k = OrderKey(c, p);
  keys[i] = descending ? ~k : k;
}

}  // namespace

std::vector<int64_t> SortPermutation(DTable& t, const SortKey& key) {
  DeviceState& dev = t.dev;
  auto s = dev.stream();
  const int64_t n = t.rows;
  std::vector<int64_t> perm;
  if (n == 0) return perm;
  ColumnView c = t.view(key.column);
  DBuf keys = dev.alloc(size_t(n) * 8, "sort keys"), valid = dev.alloc(size_t(n), "sort keys"), isNull = dev.alloc(size_t(n), "sort keys");
  KeysKernel<<<Blocks(n), kBlock, 0, s>>>(c, n, key.descending, keys->as<uint64_t>(), valid->as<uint8_t>(), isNull->as<uint8_t>());
  // Non-null rows (keys and row numbers), then null rows' numbers, each in input order.
  DBuf ck = dev.alloc(size_t(n) * 8, "sort keys"), ci = dev.alloc(size_t(n) * 4, "sort rows"), ni = dev.alloc(size_t(n) * 4, "sort rows");
  DBuf counts = dev.alloc(16, "sort counts");
  thrust::counting_iterator<int32_t> rows(0);
  RunCub(dev, "sort", [&](void* scratch, size_t& bytes) {
    return cub::DeviceSelect::Flagged(scratch, bytes, keys->as<uint64_t>(), valid->as<uint8_t>(), ck->as<uint64_t>(), counts->as<int64_t>(), n, s);
  });
  RunCub(dev, "sort", [&](void* scratch, size_t& bytes) {
    return cub::DeviceSelect::Flagged(scratch, bytes, rows, valid->as<uint8_t>(), ci->as<int32_t>(), counts->as<int64_t>(), n, s);
  });
  RunCub(dev, "sort", [&](void* scratch, size_t& bytes) {
    return cub::DeviceSelect::Flagged(scratch, bytes, rows, isNull->as<uint8_t>(), ni->as<int32_t>(), counts->as<int64_t>() + 1, n, s);
  });
  int64_t m[2];
  ToHost(dev, m, counts->data(), 16);
  DBuf sk = dev.alloc(size_t(std::max<int64_t>(m[0], 1)) * 8, "sort keys"), si = dev.alloc(size_t(std::max<int64_t>(m[0], 1)) * 4, "sort rows");
  if (m[0] > 0)
    RunCub(dev, "sort", [&](void* scratch, size_t& bytes) {
      return cub::DeviceRadixSort::SortPairs(scratch, bytes, ck->as<uint64_t>(), sk->as<uint64_t>(), ci->as<int32_t>(), si->as<int32_t>(), m[0], 0, 64, s);
    });
  std::vector<int32_t> sorted(static_cast<size_t>(m[0])), nulls(static_cast<size_t>(m[1]));
  ToHost(dev, sorted.data(), si->data(), size_t(m[0]) * 4);
  ToHost(dev, nulls.data(), ni->data(), size_t(m[1]) * 4);
  perm.reserve(size_t(n));
  if (key.nullsFirst) perm.insert(perm.end(), nulls.begin(), nulls.end());
  perm.insert(perm.end(), sorted.begin(), sorted.end());
  if (!key.nullsFirst) perm.insert(perm.end(), nulls.begin(), nulls.end());
  return perm;
}

}  // namespace gpu
}  // namespace basin
