// Per-group results on the device made into the host columns GroupByAgg lays out: the
// additive aggregates (count, sum, mean, min, max) from their accumulators, whichever
// kernel accumulated them (one pass over few groups, or one pass per aggregate).
#pragma once
#include <algorithm>
#include <vector>

#include "cuda/device_table.cuh"
#include "ops/float_order.h"
#include "ops/groupby.h"

namespace basin {
namespace gpu {

template <typename T>
__global__ void FillValueKernel(T* p, T v, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}

// n values v on the device (at least one slot).
template <typename T>
DBuf Filled(DeviceState& dev, int64_t n, T v, const char* what) {
  DBuf b = dev.alloc(size_t(std::max<int64_t>(n, 1)) * sizeof(T), what);
  FillValueKernel<T><<<Blocks(n), kBlock, 0, dev.stream()>>>(b->as<T>(), v, n);
  return b;
}

// n values copied to a host vector.
template <typename T>
std::vector<T> Down(DeviceState& dev, const DBuf& b, int64_t n) {
  std::vector<T> v(static_cast<size_t>(n));
  ToHost(dev, v.data(), b->data(), size_t(n) * sizeof(T));
  return v;
}

// The bits a row number below n takes (radix sorts of row numbers need no more).
inline int RowBits(int64_t n) {
  int bits = 1;
  while (bits < 31 && (int64_t(1) << bits) < n) bits++;
  return bits;
}

// The bits a group id of 0..G takes (G: rows without a value, sorted last).
inline int GroupBits(int64_t G) {
  int bits = 1;
  while (bits < 32 && (uint64_t(1) << bits) <= uint64_t(G)) bits++;
  return bits;
}

// Replaces only when strictly better, as the CPU loop does (NaN never replaces).
__device__ inline void AtomicMinMax(double* addr, double v, bool isMax) {
  auto* a = reinterpret_cast<unsigned long long*>(addr);
  unsigned long long old = *a;
  while (ReplacesExtreme(v, __longlong_as_double((long long)old), isMax)) {
    unsigned long long seen = atomicCAS(a, old, (unsigned long long)__double_as_longlong(v));
    if (seen == old) break;
    old = seen;
  }
}

// A per-group column copied from the device straight into its host buffer (G values of
// the type's width), null where `cnt` (when given) counted no value in the group.
Column DownColumn(DeviceState& dev, DType type, const DBuf& values, int64_t G, const DBuf& cnt);

// sum[g] /= cnt[g] in place (0 where a group counted nothing).
void FinishMean(DeviceState& dev, const DBuf& sum, const DBuf& cnt, int64_t G);

// The accumulators of one additive aggregate over G groups: the values counted
// (unsigned long long) and, but for count, the sum (double, or unsigned long long for
// integer sums, which wrap as the CPU's do), minimum or maximum (double, or long long
// for ints, dates, timestamps and bools).
struct GroupAcc {
  DBuf cnt, acc;
};

// Whether op is one whose accumulators are a count and one value per group.
bool Additive(AggOp op);

// Appends aggregate a (over a column of type `type`) as GroupByAgg lays it out for
// `mode`, from its accumulators.
void EmitAdditive(Table& out, DeviceState& dev, const AggSpec& a, DType type, const GroupAcc& r, int64_t G, AggMode mode);

}  // namespace gpu
}  // namespace basin
