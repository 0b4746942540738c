#include "cuda/few_groups_kernel.cuh"

#include <thrust/iterator/counting_iterator.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>

#include <climits>

#include "cuda/column_access.cuh"
#include "cuda/group_columns.cuh"
#include "cuda/groupby_kernel.cuh"
#include "cuda/key_compare.cuh"

namespace basin {
namespace gpu {

namespace {

constexpr int kSlots = 2048;                       // the table's slots: a power of two
constexpr unsigned long long kLimit = kSlots / 2;  // groups it takes (claims stop at half)
constexpr int kMaxAccs = 6;                        // 6 × 16 KB of shared memory a block

// What one accumulator array adds up per slot.
enum class Acc : uint8_t { CountRows, CountValid, SumInt, SumDouble, MinInt, MaxInt, MinDouble, MaxDouble };

struct FewAcc {
  ColumnView c;
  Acc kind;
};

struct FewAccs {
  FewAcc a[kMaxAccs];
  int count;
};

// An accumulator's starting value (as its 64 bits): what adding nothing leaves.
__host__ __device__ inline unsigned long long Identity(Acc k) {
  switch (k) {
    case Acc::MinInt: return (unsigned long long)LLONG_MAX;
    case Acc::MaxInt: return (unsigned long long)LLONG_MIN;
    case Acc::MinDouble: return 0x7ff8000000000000ULL;  // NaN, the top of ops/float_order.h's order
    case Acc::MaxDouble: return 0xfff0000000000000ULL;  // -inf
    default: return 0;
  }
}

// Adds row `row` into accumulator w (as the one-pass-per-aggregate kernels add it).
__device__ inline void Accumulate(const FewAcc& a, int64_t row, unsigned long long* w) {
  int64_t p;
  if (a.kind == Acc::CountRows) {
    atomicAdd(w, 1ULL);
    return;
  }
  if (!Valid(a.c, row, p)) return;
  switch (a.kind) {
    case Acc::CountValid: atomicAdd(w, 1ULL); return;
    case Acc::SumInt: atomicAdd(w, (unsigned long long)AsInt(a.c, p)); return;
    case Acc::SumDouble: atomicAdd(reinterpret_cast<double*>(w), AsDouble(a.c, p)); return;
    case Acc::MinInt: atomicMin(reinterpret_cast<long long*>(w), (long long)AsInt(a.c, p)); return;
    case Acc::MaxInt: atomicMax(reinterpret_cast<long long*>(w), (long long)AsInt(a.c, p)); return;
    case Acc::MinDouble: AtomicMinMax(reinterpret_cast<double*>(w), static_cast<const double*>(a.c.data)[p], false); return;
    case Acc::MaxDouble: AtomicMinMax(reinterpret_cast<double*>(w), static_cast<const double*>(a.c.data)[p], true); return;
    default: return;
  }
}

// Adds a block's accumulator value v into the global one.
__device__ inline void Merge(Acc k, unsigned long long* g, unsigned long long v) {
  switch (k) {
    case Acc::SumDouble: atomicAdd(reinterpret_cast<double*>(g), __longlong_as_double((long long)v)); return;
    case Acc::MinInt: atomicMin(reinterpret_cast<long long*>(g), (long long)v); return;
    case Acc::MaxInt: atomicMax(reinterpret_cast<long long*>(g), (long long)v); return;
    case Acc::MinDouble: AtomicMinMax(reinterpret_cast<double*>(g), __longlong_as_double((long long)v), false); return;
    case Acc::MaxDouble: AtomicMinMax(reinterpret_cast<double*>(g), __longlong_as_double((long long)v), true); return;
    default: atomicAdd(g, v); return;  // counts and integer sums
  }
}

// One pass: each row's slot (claims past kLimit stop the pass: the caller then groups
// the general way), the slot's first row, and the row added into the block's shared
// accumulators (array j at acc[j * kSlots]); each block flushes what it added.
__global__ void FewGroupsKernel(Keys keys, int64_t n, int32_t* slotRow, int32_t* slotFirst, unsigned long long* claimed,
                                FewAccs accs, unsigned long long* out) {
  extern __shared__ unsigned long long acc[];
  const int words = accs.count * kSlots;
  for (int i = threadIdx.x; i < words; i += blockDim.x) acc[i] = Identity(accs.a[i / kSlots].kind);
  __syncthreads();
  for (int64_t row = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; row < n; row += int64_t(gridDim.x) * blockDim.x) {
    if (*(volatile unsigned long long*)claimed > kLimit) break;
    const uint64_t s = FindOrInsert(keys, row, slotRow, kSlots - 1, claimed, kLimit);
    if (s == kNoSlot) break;
    if (slotFirst[s] > row) atomicMin(&slotFirst[s], int32_t(row));
    for (int j = 0; j < accs.count; j++) Accumulate(accs.a[j], row, &acc[j * kSlots + int(s)]);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < words; i += blockDim.x) {
    const Acc k = accs.a[i / kSlots].kind;
    if (acc[i] != Identity(k)) Merge(k, &out[i], acc[i]);
  }
}

// Slots a row claimed (a first row was recorded).
struct Claimed {
  const int32_t* first;
  __device__ bool operator()(int32_t s) const { return first[s] != INT_MAX; }
};

__global__ void FirstsKernel(const int32_t* slots, const int32_t* slotFirst, uint32_t* firsts, int64_t G) {
  const int64_t g = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g < G) firsts[g] = uint32_t(slotFirst[slots[g]]);
}

// Group g's accumulator from the slot arrays: out[g] = acc[slot[g]].
__global__ void BySlotKernel(const unsigned long long* acc, const int32_t* slot, unsigned long long* out, int64_t G) {
  const int64_t g = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g < G) out[g] = acc[slot[g]];
}

}  // namespace

TablePtr FewGroupsAggregate(DTable& t, const std::vector<int>& keys, const std::vector<AggSpec>& aggs, AggMode mode) {
  const int64_t n = t.rows;
  if (keys.empty() || n == 0 || (mode != AggMode::Full && mode != AggMode::Partial)) return nullptr;
  FewAccs accs{};
  std::vector<int> firstAcc;
  std::vector<DType> types;
  for (const AggSpec& a : aggs) {
    const bool rows = a.op == AggOp::Count && a.column < 0;
    const DType type = rows ? DType::Int64 : t.cols[size_t(a.column)].type;
    if (!Additive(a.op) || !AggOnGpu(a, type) || accs.count + (a.op == AggOp::Count ? 1 : 2) > kMaxAccs) return nullptr;
    const ColumnView c = rows ? ColumnView{} : t.view(a.column);
    firstAcc.push_back(accs.count);
    types.push_back(type);
    accs.a[accs.count++] = FewAcc{c, rows ? Acc::CountRows : Acc::CountValid};
    const bool isFloat = type == DType::Float64;
    switch (a.op) {
      case AggOp::Sum: accs.a[accs.count++] = FewAcc{c, isFloat ? Acc::SumDouble : Acc::SumInt}; break;
      case AggOp::Mean: accs.a[accs.count++] = FewAcc{c, Acc::SumDouble}; break;
      case AggOp::Min: accs.a[accs.count++] = FewAcc{c, isFloat ? Acc::MinDouble : Acc::MinInt}; break;
      case AggOp::Max: accs.a[accs.count++] = FewAcc{c, isFloat ? Acc::MaxDouble : Acc::MaxInt}; break;
      default: break;
    }
  }
  DeviceState& dev = t.dev;
  auto s = dev.stream();
  const size_t smem = size_t(accs.count) * kSlots * 8;
  if (cudaFuncSetAttribute(FewGroupsKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)) != cudaSuccess) {
    cudaGetLastError();  // a GPU with less shared memory a block: the general way
    return nullptr;
  }
  const Keys k = KeysOf(t, keys);
  DBuf slotRow = Filled<int32_t>(dev, kSlots, -1, "a group-by hash table");
  DBuf slotFirst = Filled<int32_t>(dev, kSlots, INT_MAX, "a group-by hash table");
  DBuf claimed = Filled<unsigned long long>(dev, 1, 0ULL, "a group-by hash table");
  DBuf acc = dev.alloc(smem, "group accumulators");
  for (int j = 0; j < accs.count; j++)
    FillValueKernel<unsigned long long><<<Blocks(kSlots), kBlock, 0, s>>>(acc->as<unsigned long long>() + j * kSlots,
                                                                          Identity(accs.a[j].kind), kSlots);
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev.device());
  // Blocks an SM's shared memory holds (8 at most: no aggregate, e.g. distinct keys, needs none).
  const unsigned perSm = unsigned(std::max<size_t>(1, (size_t(200) << 10) / std::max<size_t>(smem, size_t(25) << 10)));
  const unsigned grid = std::min<unsigned>(Blocks(n), unsigned(std::max(1, sms)) * perSm);
  FewGroupsKernel<<<grid, kBlock, smem, s>>>(k, n, slotRow->as<int32_t>(), slotFirst->as<int32_t>(),
                                             claimed->as<unsigned long long>(), accs, acc->as<unsigned long long>());
  unsigned long long made = 0;
  ToHost(dev, &made, claimed->data(), 8);
  if (made > kLimit) return nullptr;  // more groups than the table takes
  // The groups: claimed slots, numbered by their first rows (the CPU's order of first appearance).
  DBuf slots = dev.alloc(kSlots * 4, "group slots"), count = dev.alloc(8, "group slots");
  thrust::counting_iterator<int32_t> all(0);
  RunCub(dev, "group-by", [&](void* scratch, size_t& bytes) {
    return cub::DeviceSelect::If(scratch, bytes, all, slots->as<int32_t>(), count->as<int64_t>(), kSlots, Claimed{slotFirst->as<int32_t>()}, s);
  });
  int64_t G = 0;
  ToHost(dev, &G, count->data(), 8);
  DBuf firsts = dev.alloc(size_t(G) * 4, "group first rows"), firstRow = dev.alloc(size_t(G) * 4, "group first rows");
  DBuf groupSlot = dev.alloc(size_t(G) * 4, "group slots");
  FirstsKernel<<<Blocks(G), kBlock, 0, s>>>(slots->as<int32_t>(), slotFirst->as<int32_t>(), firsts->as<uint32_t>(), G);
  RunCub(dev, "group-by", [&](void* scratch, size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(scratch, bytes, firsts->as<uint32_t>(), firstRow->as<uint32_t>(), slots->as<int32_t>(),
                                           groupSlot->as<int32_t>(), G, 0, RowBits(n), s);
  });
  auto out = std::make_shared<Table>();
  out->rows = G;
  for (int key : keys) {
    out->names.push_back(t.names[size_t(key)]);
    out->columns.push_back(t.gather(key, firstRow, G));
  }
  auto bySlot = [&](int j) {
    DBuf b = dev.alloc(size_t(G) * 8, "group accumulators");
    BySlotKernel<<<Blocks(G), kBlock, 0, s>>>(acc->as<unsigned long long>() + j * kSlots, groupSlot->as<int32_t>(),
                                              b->as<unsigned long long>(), G);
    return b;
  };
  for (size_t i = 0; i < aggs.size(); i++) {
    GroupAcc r;
    r.cnt = bySlot(firstAcc[i]);
    if (aggs[i].op != AggOp::Count) r.acc = bySlot(firstAcc[i] + 1);
    EmitAdditive(*out, dev, aggs[i], types[i], r, G, mode);
  }
  Sync(dev, "group-by");
  return out;
}

}  // namespace gpu
}  // namespace basin
