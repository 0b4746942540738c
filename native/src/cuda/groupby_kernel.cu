#include "cuda/groupby_kernel.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include <climits>
#include <cmath>

#include "cuda/column_access.cuh"
#include "cuda/cuda_check.cuh"
#include "cuda/few_groups_kernel.cuh"
#include "cuda/group_columns.cuh"
#include "ops/quantile.h"
#include "cuda/group_pick_kernel.cuh"
#include "cuda/key_compare.cuh"

namespace basin {
namespace gpu {

namespace {

// Each row finds (or claims) the slot of its key; slotFirst[s] ends as the slot's first
// row. A table sized for few groups is tried first: once `limit` claims were made,
// rows with a key not yet in it give up (`claimed` then ends above the limit and the
// caller retries with a table sized for every row), so probing always ends at an
// empty slot. `limit` is unbounded for a table of twice the rows.
__global__ void InsertKernel(Keys keys, int64_t n, int32_t* slotRow, int32_t* slotFirst, int32_t* rowSlot, uint64_t mask,
                             unsigned long long* claimed, unsigned long long limit) {
  const int64_t row = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= n || *(volatile unsigned long long*)claimed > limit) return;
  const uint64_t s = FindOrInsert(keys, row, slotRow, mask, claimed, limit);
  if (s == kNoSlot) return;  // too small a table: the caller retries
  rowSlot[row] = int32_t(s);
  // Rows of a group mostly come after its first: read before the atomic, so a few
  // groups over many rows do not serialize on their slots.
  if (slotFirst[s] > row) atomicMin(&slotFirst[s], int32_t(row));
}

// Group g is the one whose first row is the g-th in row order: its slot gets number g.
__global__ void NumberSlotsKernel(const int32_t* firstRow, const int32_t* rowSlot, int32_t* slotGroup, int64_t G) {
  const int64_t g = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g < G) slotGroup[rowSlot[firstRow[g]]] = int32_t(g);
}

// Each row's slot replaced by its group's number (in place).
__global__ void SlotToGroupKernel(int32_t* rowSlotThenGid, const int32_t* slotGroup, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) rowSlotThenGid[i] = slotGroup[rowSlotThenGid[i]];
}

// Occupied slots (a first row was recorded).
struct Occupied {
  __device__ bool operator()(int32_t first) const { return first != INT_MAX; }
};

// Per-row contributions to per-group sums: op(i, g, v) sets v and says whether row i counts.
struct CountOp {
  ColumnView c;
  bool hasCol;
  __device__ bool operator()(int64_t i, int32_t, unsigned long long& v) const {
    int64_t p;
    v = 1ULL;
    return !hasCol || Valid(c, i, p);
  }
};

// Integer sums wrap around as the CPU's unsigned adds do.
struct SumIntOp {
  ColumnView c;
  __device__ bool operator()(int64_t i, int32_t, unsigned long long& v) const {
    int64_t p;
    if (!Valid(c, i, p)) return false;
    v = (unsigned long long)AsInt(c, p);
    return true;
  }
};

struct SumDoubleOp {
  ColumnView c;
  __device__ bool operator()(int64_t i, int32_t, double& v) const {
    int64_t p;
    if (!Valid(c, i, p)) return false;
    v = AsDouble(c, p);
    return true;
  }
};

// The corrected two-pass moments' second pass: deviations from the rough mean (squared: m2).
struct DeviationOp {
  ColumnView c;
  const double* mean;
  bool squared;
  __device__ bool operator()(int64_t i, int32_t g, double& v) const {
    int64_t p;
    if (!Valid(c, i, p)) return false;
    const double d = AsDouble(c, p) - mean[g];
    v = squared ? d * d : d;
    return true;
  }
};

// Adds op's contributions into acc[gid[i]]. With few groups (`privatize`) each block
// adds into its own copy in shared memory first and flushes once: a hundred groups
// over millions of rows would otherwise serialize on a hundred global addresses.
template <typename T, typename Op>
__global__ void GroupAddKernel(Op op, const int32_t* gid, T* acc, int64_t n, int64_t G, bool privatize) {
  extern __shared__ unsigned char smem[];
  T* local = reinterpret_cast<T*>(smem);
  if (privatize) {
    for (int64_t g = threadIdx.x; g < G; g += blockDim.x) local[g] = T(0);
    __syncthreads();
  }
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    T v;
    const int32_t g = gid[i];
    if (!op(i, g, v)) continue;
    atomicAdd(privatize ? &local[g] : &acc[g], v);
  }
  if (privatize) {
    __syncthreads();
    for (int64_t g = threadIdx.x; g < G; g += blockDim.x)
      if (local[g] != T(0)) atomicAdd(&acc[g], local[g]);
  }
}

constexpr int64_t kPrivateGroups = 2048;  // 16 KB of shared memory per 8-byte accumulator array

template <typename T, typename Op>
void GroupAdd(DeviceState& dev, const Op& op, const int32_t* gid, T* acc, int64_t n, int64_t G) {
  if (n == 0) return;
  const bool privatize = G <= kPrivateGroups;
  unsigned grid = Blocks(n);
  if (privatize) {
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev.device());
    grid = std::min<unsigned>(grid, unsigned(std::max(1, sms) * 4));
  }
  GroupAddKernel<T, Op><<<grid, kBlock, privatize ? size_t(G) * sizeof(T) : 0, dev.stream()>>>(op, gid, acc, n, G, privatize);
}

__global__ void MinMaxKernel(ColumnView c, const int32_t* gid, long long* iacc, double* dacc, bool isMax, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t p;
  if (i >= n || !Valid(c, i, p)) return;
  const int32_t g = gid[i];
  if (c.type == DType::Float64) {
    AtomicMinMax(&dacc[g], static_cast<const double*>(c.data)[p], isMax);
  } else {
    long long v = AsInt(c, p);
    if (isMax) atomicMax(&iacc[g], v);
    else atomicMin(&iacc[g], v);
  }
}

// Each row's value as an order key (of the value as a double with `asDouble`, flipped
// when `descending`) and its group; rows without a value get group G (sorted last).
__global__ void RankKeysKernel(ColumnView c, const int32_t* gid, int64_t n, uint32_t G, bool asDouble, bool descending,
                               uint64_t* key, uint32_t* group) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int64_t p;
  const bool ok = Valid(c, i, p);
  const uint64_t k = !ok ? 0 : asDouble ? DoubleOrderKey(AsDouble(c, p)) : OrderKey(c, p);
  key[i] = descending ? ~k : k;
  group[i] = ok ? uint32_t(gid[i]) : G;
}

__global__ void GroupOfKernel(const uint32_t* group, const int32_t* rows, uint32_t* out, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = group[rows[i]];
}

// The q-quantile of each group's sorted values (at off[g], cnt[g] of them), interpolated
// linearly between the two nearest ranks as the CPU's QuantileAgg does.
__global__ void QuantileKernel(const uint64_t* key, const int32_t* ranked, const unsigned long long* off,
                               const unsigned long long* cnt, double q, double* out, int64_t G) {
  const int64_t g = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g >= G) return;
  const int64_t n = int64_t(cnt[g]);
  if (n == 0) {
    out[g] = 0.0;
    return;
  }
  const int32_t* b = ranked + off[g];
  const double rank = q * double(n - 1);
  const int64_t lo = int64_t(floor(rank));
  double v = OrderKeyDouble(key[b[lo]]);
  if (double(lo) != rank) v = Interpolate(v, OrderKeyDouble(key[b[lo + 1]]), rank - double(lo));
  out[g] = v;
}

// Rows where both columns of a pair are non-null.
__device__ inline bool PairValid(const ColumnView& x, const ColumnView& y, int64_t i, int64_t& px, int64_t& py) {
  return Valid(x, i, px) && Valid(y, i, py);
}

// Each group's first row with a whole pair (the CPU's shift for corr's sums).
__global__ void FirstPairKernel(ColumnView x, ColumnView y, const int32_t* gid, int32_t* first, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t px, py;
  if (i >= n || !PairValid(x, y, i, px, py)) return;
  int32_t* f = &first[gid[i]];
  if (*f > i) atomicMin(f, int32_t(i));
}

__global__ void ShiftKernel(ColumnView x, ColumnView y, const int32_t* first, double* kx, double* ky, int64_t G) {
  const int64_t g = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g >= G) return;
  const int32_t r = first[g];
  if (r == INT_MAX) {
    kx[g] = ky[g] = 0.0;
    return;
  }
  kx[g] = AsDouble(x, Phys(x, r));
  ky[g] = AsDouble(y, Phys(y, r));
}

struct PairCountOp {
  ColumnView x, y;
  __device__ bool operator()(int64_t i, int32_t, unsigned long long& v) const {
    int64_t px, py;
    v = 1ULL;
    return PairValid(x, y, i, px, py);
  }
};

// One of the shifted sums over whole pairs: dx, dy, dx², dy² or dx·dy.
struct PairSumOp {
  ColumnView x, y;
  const double *kx, *ky;
  int which;
  __device__ bool operator()(int64_t i, int32_t g, double& v) const {
    int64_t px, py;
    if (!PairValid(x, y, i, px, py)) return false;
    const double dx = AsDouble(x, px) - kx[g], dy = AsDouble(y, py) - ky[g];
    switch (which) {
      case 0: v = dx; break;
      case 1: v = dy; break;
      case 2: v = dx * dx; break;
      case 3: v = dy * dy; break;
      default: v = dx * dy;
    }
    return true;
  }
};

// Groups a table of kFewGroups * 2 slots takes before the table for every row is made.
constexpr uint64_t kFewGroups = uint64_t(1) << 15;

struct Grouped {
  DBuf gid, firstRow;  // int32 per row; int32 per group (logical rows)
  int64_t groups = 0;
};

// Keeps the first k of each group's run in the sorted order (rows without a value: none).
__global__ void FirstKKernel(const uint32_t* group, const unsigned long long* off, uint32_t G, int64_t k, uint8_t* keep,
                             int64_t n) {
  const int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n) return;
  const uint32_t g = group[j];
  keep[j] = g < G && j - int64_t(off[g]) < k;
}

Grouped GroupIds(DTable& t, const std::vector<int>& keys) {
  DeviceState& dev = t.dev;
  auto s = dev.stream();
  const int64_t n = t.rows;
  Grouped g;
  if (keys.empty()) {
    g.gid = dev.alloc(size_t(std::max<int64_t>(n, 1)) * 4, "group ids");
    g.groups = 1;
    g.firstRow = dev.alloc(4, "group first rows");
    FillValueKernel<int32_t><<<Blocks(n), kBlock, 0, s>>>(g.gid->as<int32_t>(), 0, n);
    FillValueKernel<int32_t><<<1, 1, 0, s>>>(g.firstRow->as<int32_t>(), n > 0 ? 0 : -1, 1);
    Sync(dev, "group-by");
    return g;
  }
  if (n == 0) {
    g.gid = dev.alloc(4, "group ids");
    g.firstRow = dev.alloc(4, "group first rows");
    return g;
  }
  const Keys k = KeysOf(t, keys);
  // Slots: twice the rows at most (never full); first a table for up to kFewGroups groups,
  // whose fill and reads stay in cache: most group-bys have few groups.
  uint64_t full = 1024;
  while (full < uint64_t(n) * 2) full <<= 1;
  uint64_t cap = std::min<uint64_t>(full, kFewGroups * 2);
  DBuf rowSlot = dev.alloc(size_t(n) * 4, "a group-by hash table");
  DBuf claimed = dev.alloc(8, "a group-by hash table");
  DBuf slotRow, slotFirst;
  for (;;) {
    const unsigned long long limit = cap == full ? ~0ULL : cap / 2;
    slotRow = Filled<int32_t>(dev, int64_t(cap), -1, "a group-by hash table");
    slotFirst = Filled<int32_t>(dev, int64_t(cap), INT_MAX, "a group-by hash table");
    FillValueKernel<unsigned long long><<<1, 1, 0, s>>>(claimed->as<unsigned long long>(), 0ULL, 1);
    InsertKernel<<<Blocks(n), kBlock, 0, s>>>(k, n, slotRow->as<int32_t>(), slotFirst->as<int32_t>(), rowSlot->as<int32_t>(), cap - 1,
                                              claimed->as<unsigned long long>(), limit);
    if (cap == full) break;
    unsigned long long made = 0;
    ToHost(dev, &made, claimed->data(), 8);
    if (made <= limit) break;
    cap = full;  // more keys than the small table takes
  }
  slotRow.reset();  // not needed past the inserts: 4 bytes a slot (8 GiB at 2^31) off the peak below
  // The groups' first rows in row order number the groups (the CPU's order of first appearance).
  DBuf firsts = dev.alloc(size_t(cap) * 4, "group first rows"), count = dev.alloc(8, "group first rows");
  RunCub(dev, "group-by", [&](void* scratch, size_t& bytes) {
    return cub::DeviceSelect::If(scratch, bytes, slotFirst->as<int32_t>(), firsts->as<int32_t>(), count->as<int64_t>(), int64_t(cap), Occupied{}, s);
  });
  ToHost(dev, &g.groups, count->data(), 8);
  g.firstRow = dev.alloc(size_t(g.groups) * 4, "group first rows");
  RunCub(dev, "group-by", [&](void* scratch, size_t& bytes) {
    // As unsigned: rows are not negative, and the bits above n's are zero.
    return cub::DeviceRadixSort::SortKeys(scratch, bytes, firsts->as<uint32_t>(), g.firstRow->as<uint32_t>(), g.groups, 0, RowBits(n), s);
  });
  DBuf slotGroup = dev.alloc(size_t(cap) * 4, "group ids");
  NumberSlotsKernel<<<Blocks(g.groups), kBlock, 0, s>>>(g.firstRow->as<int32_t>(), rowSlot->as<int32_t>(), slotGroup->as<int32_t>(), g.groups);
  SlotToGroupKernel<<<Blocks(n), kBlock, 0, s>>>(rowSlot->as<int32_t>(), slotGroup->as<int32_t>(), n);
  g.gid = rowSlot;
  Sync(dev, "group-by");
  return g;
}

// Rows ranked within their groups on the device: the rows with a value, by (group,
// order key, row) — a stable radix sort by key, then one by group — and where each
// group's run starts (`cnt`: the values per group). Groups in order of first
// appearance, ties by row: the CPU's per-group orders (QuantileAgg, TopKRows).
struct Ranked {
  DBuf key;    // uint64 order key per row (input order)
  DBuf rows;   // int32 rows in rank order; rows without a value last
  DBuf group;  // uint32 group of each ranked row (G: no value)
  DBuf off;    // unsigned long long: where each group's run starts in `rows`
};

Ranked RankInGroups(DTable& t, const Grouped& g, ColumnView c, const DBuf& cnt, bool asDouble, bool descending) {
  DeviceState& dev = t.dev;
  auto s = dev.stream();
  const int64_t n = t.rows, G = g.groups;
  const size_t n1 = size_t(std::max<int64_t>(n, 1));
  Ranked r;
  r.key = dev.alloc(n1 * 8, "ranks");
  r.rows = dev.alloc(n1 * 4, "ranks");
  r.group = dev.alloc(n1 * 4, "ranks");
  r.off = dev.alloc(size_t(std::max<int64_t>(G, 1)) * 8, "ranks");
  DBuf key2 = dev.alloc(n1 * 8, "ranks"), rows2 = dev.alloc(n1 * 4, "ranks"), group2 = dev.alloc(n1 * 4, "ranks");
  if (n > 0) {
    RankKeysKernel<<<Blocks(n), kBlock, 0, s>>>(c, g.gid->as<int32_t>(), n, uint32_t(G), asDouble, descending,
                                                r.key->as<uint64_t>(), r.group->as<uint32_t>());
    RowNumbers(dev, r.rows->as<int32_t>(), n);
    RunCub(dev, "ranks", [&](void* scratch, size_t& bytes) {
      return cub::DeviceRadixSort::SortPairs(scratch, bytes, r.key->as<uint64_t>(), key2->as<uint64_t>(), r.rows->as<int32_t>(), rows2->as<int32_t>(), n, 0, 64, s);
    });
    GroupOfKernel<<<Blocks(n), kBlock, 0, s>>>(r.group->as<uint32_t>(), rows2->as<int32_t>(), group2->as<uint32_t>(), n);
    RunCub(dev, "ranks", [&](void* scratch, size_t& bytes) {
      return cub::DeviceRadixSort::SortPairs(scratch, bytes, group2->as<uint32_t>(), r.group->as<uint32_t>(), rows2->as<int32_t>(), r.rows->as<int32_t>(), n, 0, GroupBits(G), s);
    });
  }
  if (G > 0)
    RunCub(dev, "ranks", [&](void* scratch, size_t& bytes) {
      return cub::DeviceScan::ExclusiveSum(scratch, bytes, cnt->as<unsigned long long>(), r.off->as<unsigned long long>(), G, s);
    });
  return r;
}

// The q-quantile per group (Full mode): one thread per group reads its ranked values.
Column QuantileOnGpu(DTable& t, const Grouped& g, ColumnView c, const DBuf& cnt, double q) {
  DeviceState& dev = t.dev;
  const int64_t G = g.groups;
  Ranked r = RankInGroups(t, g, c, cnt, true, false);
  DBuf out = dev.alloc(size_t(std::max<int64_t>(G, 1)) * 8, "quantiles");
  QuantileKernel<<<Blocks(G), kBlock, 0, dev.stream()>>>(r.key->as<uint64_t>(), r.rows->as<int32_t>(), r.off->as<unsigned long long>(),
                                                         cnt->as<unsigned long long>(), q, out->as<double>(), G);
  std::vector<unsigned long long> u = Down<unsigned long long>(dev, cnt, G);
  std::vector<int64_t> k(u.begin(), u.end());
  return FixedColumn(DType::Float64, Down<double>(dev, out, G), &k);
}

// corr's co-moments per group, from the same shifted sums the CPU makes (shift: each
// group's first whole pair), finished and laid out by the CPU's code.
void AppendCorrOnGpu(Table& out, DTable& t, const Grouped& g, const AggSpec& a, bool emitState) {
  DeviceState& dev = t.dev;
  auto s = dev.stream();
  const int64_t n = t.rows, G = g.groups;
  const int32_t* gid = g.gid->as<int32_t>();
  ColumnView x = t.view(a.column), y = t.view(a.column2);
  DBuf first = Filled<int32_t>(dev, G, INT_MAX, "corr shifts");
  FirstPairKernel<<<Blocks(n), kBlock, 0, s>>>(x, y, gid, first->as<int32_t>(), n);
  DBuf kx = dev.alloc(size_t(std::max<int64_t>(G, 1)) * 8, "corr shifts"), ky = dev.alloc(size_t(std::max<int64_t>(G, 1)) * 8, "corr shifts");
  ShiftKernel<<<Blocks(G), kBlock, 0, s>>>(x, y, first->as<int32_t>(), kx->as<double>(), ky->as<double>(), G);
  DBuf cnt = Filled<unsigned long long>(dev, G, 0ULL, "group counts");
  GroupAdd(dev, PairCountOp{x, y}, gid, cnt->as<unsigned long long>(), n, G);
  ShiftedSums sums;
  std::vector<double>* dst[] = {&sums.sx, &sums.sy, &sums.m2x, &sums.m2y, &sums.cxy};
  for (int w = 0; w < 5; w++) {
    DBuf acc = Filled<double>(dev, G, 0.0, "corr sums");
    GroupAdd(dev, PairSumOp{x, y, kx->as<double>(), ky->as<double>(), w}, gid, acc->as<double>(), n, G);
    *dst[w] = Down<double>(dev, acc, G);
  }
  std::vector<unsigned long long> u = Down<unsigned long long>(dev, cnt, G);
  sums.n.assign(u.begin(), u.end());
  sums.kx = Down<double>(dev, kx, G);
  sums.ky = Down<double>(dev, ky, G);
  AppendCorr(out, a, FinishCoMoments(std::move(sums)), emitState);
}

// One aggregate accumulated on the GPU, appended to `out` as GroupByAgg lays it out.
void AppendGpuAgg(Table& out, DTable& t, const Grouped& g, const AggSpec& a, AggMode mode) {
  DeviceState& dev = t.dev;
  auto s = dev.stream();
  const int64_t n = t.rows, G = g.groups;
  const bool emitState = mode == AggMode::Partial;
  const int32_t* gid = g.gid->as<int32_t>();
  if (a.op == AggOp::Corr) {
    AppendCorrOnGpu(out, t, g, a, emitState);
    return;
  }
  const bool rows = a.op == AggOp::Count && a.column < 0;
  ColumnView c = rows ? ColumnView{} : t.view(a.column);
  GroupAcc r;
  r.cnt = Filled<unsigned long long>(dev, G, 0ULL, "group counts");
  GroupAdd(dev, CountOp{c, !rows}, gid, r.cnt->as<unsigned long long>(), n, G);
  switch (a.op) {
    case AggOp::Count: break;
    case AggOp::Sum:
    case AggOp::Mean:
      if (c.type == DType::Float64 || a.op == AggOp::Mean) {
        r.acc = Filled<double>(dev, G, 0.0, "group sums");
        GroupAdd(dev, SumDoubleOp{c}, gid, r.acc->as<double>(), n, G);
      } else {
        r.acc = Filled<unsigned long long>(dev, G, 0ULL, "group sums");
        GroupAdd(dev, SumIntOp{c}, gid, r.acc->as<unsigned long long>(), n, G);
      }
      break;
    case AggOp::Min:
    case AggOp::Max: {
      const bool isMax = a.op == AggOp::Max;
      if (c.type == DType::Float64) {
        r.acc = Filled<double>(dev, G, isMax ? -INFINITY : NAN, "group minima");  // ops/float_order.h
        MinMaxKernel<<<Blocks(n), kBlock, 0, s>>>(c, gid, nullptr, r.acc->as<double>(), isMax, n);
      } else {
        r.acc = Filled<long long>(dev, G, isMax ? LLONG_MIN : LLONG_MAX, "group minima");
        MinMaxKernel<<<Blocks(n), kBlock, 0, s>>>(c, gid, r.acc->as<long long>(), nullptr, isMax, n);
      }
      break;
    }
    default: break;
  }
  if (Additive(a.op)) {
    EmitAdditive(out, dev, a, c.type, r, G, mode);
    return;
  }
  const DBuf& cnt = r.cnt;
  auto counts = [&]() {
    std::vector<unsigned long long> u = Down<unsigned long long>(dev, cnt, G);
    return std::vector<int64_t>(u.begin(), u.end());
  };
  auto add = [&](Column col) {
    out.names.push_back(a.name);
    out.columns.push_back(std::move(col));
  };
  switch (a.op) {
    case AggOp::Var:
    case AggOp::Std: {
      DBuf sum = Filled<double>(dev, G, 0.0, "group sums");
      GroupAdd(dev, SumDoubleOp{c}, gid, sum->as<double>(), n, G);
      FinishMean(dev, sum, cnt, G);
      DBuf s1 = Filled<double>(dev, G, 0.0, "group moments");
      DBuf m2 = Filled<double>(dev, G, 0.0, "group moments");
      GroupAdd(dev, DeviationOp{c, sum->as<double>(), false}, gid, s1->as<double>(), n, G);
      GroupAdd(dev, DeviationOp{c, sum->as<double>(), true}, gid, m2->as<double>(), n, G);
      Moments m;
      m.n = counts();
      m.mean = Down<double>(dev, sum, G);
      m.m2 = Down<double>(dev, m2, G);
      std::vector<double> d = Down<double>(dev, s1, G);
      for (int64_t i = 0; i < G; i++) {  // as ComputeMoments finishes the corrected two-pass sums
        if (!m.n[size_t(i)]) continue;
        const double k = double(m.n[size_t(i)]);
        m.mean[size_t(i)] += d[size_t(i)] / k;
        m.m2[size_t(i)] = NonNegative(m.m2[size_t(i)] - d[size_t(i)] * d[size_t(i)] / k);
      }
      AppendMoments(out, a, m, emitState);
      return;
    }
    case AggOp::Median:
    case AggOp::Quantile:
      if (mode != AggMode::Full)
        throw BasinError("BASIN_INTERNAL", "aggregation '" + a.name + "' (median/quantile/nunique) is not decomposable: use mode 'full'");
      add(QuantileOnGpu(t, g, c, cnt, a.op == AggOp::Median ? 0.5 : a.param));
      return;
    default: throw BasinError("BASIN_INTERNAL", "GPU: aggregate '" + a.name + "' is not accumulated on the GPU");
  }
}

}  // namespace

bool AggOnGpu(const AggSpec& a, DType input, DType input2) {
  auto numeric = [](DType t) { return t == DType::Int64 || t == DType::Float64 || t == DType::Bool; };
  switch (a.op) {
    case AggOp::Count: return true;
    case AggOp::Sum:
    case AggOp::Mean:
    case AggOp::Var:
    case AggOp::Std:
    case AggOp::Median:
    case AggOp::Quantile: return numeric(input);
    case AggOp::Corr: return numeric(input) && numeric(input2);
    case AggOp::Min:
    case AggOp::Max: return input != DType::String;
    default: return false;
  }
}

TablePtr Aggregate(DTable& t, const std::vector<int>& keys, const std::vector<AggSpec>& aggs, AggMode mode) {
  if (keys.size() > size_t(kMaxKeys)) throw BasinError("BASIN_INTERNAL", "GPU: more group keys than the kernel takes");
  if (t.rows > kMaxGroupedRows) throw BasinError("BASIN_INTERNAL", "GPU: a partition of more than 2^30 rows to group");
  t.dev.mark("few groups");
  if (TablePtr few = FewGroupsAggregate(t, keys, aggs, mode)) return few;
  t.dev.mark("group ids");
  Grouped g = GroupIds(t, keys);
  const int64_t G = g.groups;
  auto out = std::make_shared<Table>();
  out->rows = G;
  t.dev.mark("group keys");
  for (int k : keys) {
    out->names.push_back(t.names[size_t(k)]);
    out->columns.push_back(t.gather(k, g.firstRow, G));
  }
  t.dev.mark("aggregates");
  // Aggregates the GPU does not accumulate run on the CPU over the GPU's group ids.
  bool onHost = false;
  Table rowsOnHost;
  std::vector<bool> have;
  Grouping cpu;
  std::vector<int64_t> groupRows;
  for (const AggSpec& a : aggs) {
    const bool raw = !(a.op == AggOp::Count && a.column < 0);
    const DType second = a.column2 >= 0 && size_t(a.column2) < t.cols.size() ? t.cols[size_t(a.column2)].type : DType::String;
    if (AggOnGpu(a, raw ? t.cols[size_t(a.column)].type : DType::Int64, second)) {
      AppendGpuAgg(*out, t, g, a, mode);
      continue;
    }
    if (PickAggOnGpu(a, raw ? t.cols[size_t(a.column)].type : DType::Int64)) {
      AppendPickAgg(*out, t, g.gid, G, a, mode);
      continue;
    }
    if (!onHost) {
      onHost = true;
      cpu.groups = G;
      std::vector<int32_t> gid = Down<int32_t>(t.dev, g.gid, t.rows);
      cpu.gid.assign(gid.begin(), gid.end());
      std::vector<int32_t> first = Down<int32_t>(t.dev, g.firstRow, G);
      cpu.firstRow.assign(first.begin(), first.end());
      groupRows = GroupRows(cpu, t.rows);
      rowsOnHost.rows = t.rows;
      rowsOnHost.names = t.names;
      rowsOnHost.columns.resize(t.cols.size());
      have.assign(t.cols.size(), false);
    }
    for (int col : {a.column, a.column2}) {
      if (col < 0 || have[size_t(col)]) continue;
      rowsOnHost.columns[size_t(col)] = t.download(col);
      have[size_t(col)] = true;
    }
    AppendAgg(*out, rowsOnHost, cpu, groupRows, a, mode);
  }
  return out;
}

DBuf TopKRows(DTable& t, const std::vector<int>& keys, int column, int64_t k, bool descending, int64_t& count) {
  DeviceState& dev = t.dev;
  auto s = dev.stream();
  const int64_t n = t.rows;
  count = 0;
  DBuf out = dev.alloc(size_t(std::max<int64_t>(n, 1)) * 4, "top-k rows");
  if (n == 0) return out;
  Grouped g = GroupIds(t, keys);
  const int64_t G = g.groups;
  ColumnView c = t.view(column);
  DBuf cnt = Filled<unsigned long long>(dev, G, 0ULL, "group counts");
  GroupAdd(dev, CountOp{c, true}, g.gid->as<int32_t>(), cnt->as<unsigned long long>(), n, G);
  Ranked r = RankInGroups(t, g, c, cnt, false, descending);
  DBuf keep = dev.alloc(size_t(n), "top-k flags");
  FirstKKernel<<<Blocks(n), kBlock, 0, s>>>(r.group->as<uint32_t>(), r.off->as<unsigned long long>(), uint32_t(G), k, keep->as<uint8_t>(), n);
  DBuf kept = dev.alloc(8, "top-k count");
  RunCub(dev, "top-k", [&](void* scratch, size_t& bytes) {
    return cub::DeviceSelect::Flagged(scratch, bytes, r.rows->as<int32_t>(), keep->as<uint8_t>(), out->as<int32_t>(), kept->as<int64_t>(), n, s);
  });
  ToHost(dev, &count, kept->data(), 8);
  return out;
}

}  // namespace gpu
}  // namespace basin
