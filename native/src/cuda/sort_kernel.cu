#include "cuda/sort_kernel.cuh"

#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>

#include "cuda/column_access.cuh"
#include "cuda/cuda_check.cuh"
#include "cuda/string_order.cuh"

namespace basin {
namespace gpu {

namespace {

// The order-preserving key of row perm[i] (0 for a null: nulls keep their order).
__global__ void FixedKeysKernel(ColumnView c, const int32_t* perm, int64_t n, uint64_t flip, uint64_t* keys) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int64_t p;
  keys[i] = Valid(c, perm[i], p) ? OrderKey(c, p) ^ flip : 0;
}

// The null class of row perm[i]: nullClass for a null, the other one for a value.
__global__ void NullClassKernel(ColumnView c, const int32_t* perm, int64_t n, uint8_t nullClass, uint8_t* cls) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int64_t p;
  cls[i] = Valid(c, perm[i], p) ? uint8_t(1 - nullClass) : nullClass;
}

__global__ void StringKeysKernel(ColumnView c, const int32_t* perm, int64_t n, StrKey* out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = StrKeyOf(c, perm[i]);
}

// The CPU's order of a string key, nulls together before or after every string.
struct StrLess {
  ColumnView c;
  bool descending, nullsFirst;

  __device__ bool operator()(const StrKey& a, const StrKey& b) const {
    const bool an = a.len < 0, bn = b.len < 0;
    if (an || bn) return an != bn && an == nullsFirst;  // two nulls tie
    const int cmp = CompareStr(c, a, b);
    return descending ? cmp > 0 : cmp < 0;
  }
};

__global__ void RowsOfKernel(const StrKey* keys, int64_t n, int32_t* perm) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) perm[i] = keys[i].row;
}

// Stably reorders perm by a fixed-width key: a radix sort of (key, row) pairs, then,
// when the column has nulls, one of (null class, row) pairs, so nulls go first or last.
void FixedPass(DeviceState& dev, const ColumnView& c, const SortKey& key, DBuf& perm, int64_t n) {
  auto s = dev.stream();
  const bool isBool = c.type == DType::Bool;  // keys 0/1: one bit to sort
  const uint64_t flip = key.descending ? (isBool ? 1 : ~uint64_t(0)) : 0;
  DBuf keys = dev.alloc(size_t(n) * 8, "sort keys"), sortedKeys = dev.alloc(size_t(n) * 8, "sort keys");
  DBuf out = dev.alloc(size_t(n) * 4, "sort rows");
  FixedKeysKernel<<<Blocks(n), kBlock, 0, s>>>(c, perm->as<int32_t>(), n, flip, keys->as<uint64_t>());
  RunCub(dev, "sort", [&](void* scratch, size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(scratch, bytes, keys->as<uint64_t>(), sortedKeys->as<uint64_t>(), perm->as<int32_t>(),
                                           out->as<int32_t>(), n, 0, isBool ? 1 : 64, s);
  });
  perm.swap(out);
  if (!c.validity) return;
  // The value sort moved the rows: their classes are read in the new order.
  DBuf cls = dev.alloc(size_t(n), "sort keys"), sortedCls = dev.alloc(size_t(n), "sort keys");
  NullClassKernel<<<Blocks(n), kBlock, 0, s>>>(c, perm->as<int32_t>(), n, key.nullsFirst ? 0 : 1, cls->as<uint8_t>());
  RunCub(dev, "sort", [&](void* scratch, size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(scratch, bytes, cls->as<uint8_t>(), sortedCls->as<uint8_t>(), perm->as<int32_t>(),
                                           out->as<int32_t>(), n, 0, 1, s);
  });
  perm.swap(out);
}

// Stably reorders perm by a string key: a merge sort of prefix keys with a comparator
// that reads the characters only when the first 8 bytes tie.
void StringPass(DeviceState& dev, const ColumnView& c, const SortKey& key, DBuf& perm, int64_t n) {
  auto s = dev.stream();
  DBuf keys = dev.alloc(size_t(n) * sizeof(StrKey), "sort keys");
  StringKeysKernel<<<Blocks(n), kBlock, 0, s>>>(c, perm->as<int32_t>(), n, keys->as<StrKey>());
  const StrLess less{c, key.descending, key.nullsFirst};
  RunCub(dev, "sort", [&](void* scratch, size_t& bytes) {
    return cub::DeviceMergeSort::StableSortKeys(scratch, bytes, keys->as<StrKey>(), n, less, s);
  });
  RowsOfKernel<<<Blocks(n), kBlock, 0, s>>>(keys->as<StrKey>(), n, perm->as<int32_t>());
}

}  // namespace

DBuf SortRows(DTable& t, const std::vector<SortKey>& keys) {
  DeviceState& dev = t.dev;
  const int64_t n = t.rows;
  DBuf perm = dev.alloc(size_t(std::max<int64_t>(n, 1)) * 4, "sort rows");
  if (n == 0) return perm;
  RowNumbers(dev, perm->as<int32_t>(), n);
  if (n == 1) return perm;
  // LSD over the keys: the last key first; every pass is stable, so rows that tie on a
  // key keep the order the later keys gave them.
  for (auto k = keys.rbegin(); k != keys.rend(); ++k) {
    const ColumnView c = t.view(k->column);
    if (c.type == DType::String) StringPass(dev, c, *k, perm, n);
    else FixedPass(dev, c, *k, perm, n);
  }
  return perm;
}

}  // namespace gpu
}  // namespace basin
