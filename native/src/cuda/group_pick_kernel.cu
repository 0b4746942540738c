#include "cuda/group_pick_kernel.cuh"

#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "cuda/column_access.cuh"
#include "cuda/cuda_check.cuh"
#include "cuda/group_columns.cuh"
#include "cuda/string_order.cuh"

namespace basin {
namespace gpu {

namespace {

// Per group, the smallest (first) or largest (last) logical row holding a value; pick
// starts at -1 (as unsigned, above every row). For `last` the threads walk the rows
// backwards, so the first blocks raise each group's pick and most later rows read that
// it is already beyond them and skip the atomic.
__global__ void PickRowKernel(ColumnView c, const int32_t* gid, int32_t* pick, bool last, int64_t n) {
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= n) return;
  const int64_t i = last ? n - 1 - t : t;
  int64_t p;
  if (!Valid(c, i, p)) return;
  int32_t* at = &pick[gid[i]];
  const int32_t row = int32_t(i);
  if (last) {
    if (*at < row) atomicMax(at, row);
  } else if (uint32_t(*at) > uint32_t(row)) {
    atomicMin(reinterpret_cast<unsigned*>(at), unsigned(row));
  }
}

// Each row's value as a key that is equal exactly for the values the CPU's nunique
// counts as one (hash::CanonFixed: -0 and 0, all NaNs), and its group; rows without a
// value get group G (sorted last, never counted).
__global__ void ValueKeysKernel(ColumnView c, const int32_t* gid, int64_t n, uint32_t G, uint64_t* key, uint32_t* group) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int64_t p;
  const bool ok = Valid(c, i, p);
  key[i] = ok ? OrderKey(c, p) : 0;
  group[i] = ok ? uint32_t(gid[i]) : G;
}

// A row's string (its sort key) and its group (G: null, sorted last).
struct GroupStr {
  StrKey s;
  uint32_t group;
};

__global__ void GroupStrKernel(ColumnView c, const int32_t* gid, int64_t n, uint32_t G, GroupStr* out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const StrKey k = StrKeyOf(c, int32_t(i));
  out[i] = GroupStr{k, k.len < 0 ? G : uint32_t(gid[i])};
}

// By group, then by string (bytewise, as the CPU compares); nulls (group G) tie.
struct GroupStrLess {
  ColumnView c;
  __device__ bool operator()(const GroupStr& a, const GroupStr& b) const {
    if (a.group != b.group) return a.group < b.group;
    return a.s.len >= 0 && CompareStr(c, a.s, b.s) < 0;
  }
};

// Sorted (group, value) sequences as the run kernels read them: the group at position j
// and whether positions a and b hold equal values.
struct FixedRuns {
  const uint32_t* group;
  const uint64_t* key;
  __device__ uint32_t Group(int64_t j) const { return group[j]; }
  __device__ bool Same(int64_t a, int64_t b) const { return key[a] == key[b]; }
};

struct StringRuns {
  const GroupStr* k;
  ColumnView c;
  __device__ uint32_t Group(int64_t j) const { return k[j].group; }
  __device__ bool Same(int64_t a, int64_t b) const { return CompareStr(c, k[a].s, k[b].s) == 0; }
};

// 1 where sorted position j holds a group's value unlike the one before it.
template <class Runs>
__global__ void NewValueKernel(Runs r, int64_t n, uint32_t G, int32_t* flag) {
  const int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n) return;
  const uint32_t g = r.Group(j);
  flag[j] = g < G && (j == 0 || r.Group(j - 1) != g || !r.Same(j - 1, j));
}

// The flags' inclusive sums just before each group's run and at its end; their
// difference is the group's distinct values (a group with no value keeps 0 and 0).
template <class Runs>
__global__ void RunBoundsKernel(Runs r, const int32_t* sum, int64_t n, uint32_t G, int32_t* before, int32_t* upTo) {
  const int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n) return;
  const uint32_t g = r.Group(j);
  if (g >= G) return;
  if (j == 0 || r.Group(j - 1) != g) before[g] = j > 0 ? sum[j - 1] : 0;
  if (j == n - 1 || r.Group(j + 1) != g) upTo[g] = sum[j];
}

__global__ void DifferenceKernel(const int32_t* before, const int32_t* upTo, int64_t* out, int64_t G) {
  const int64_t g = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g < G) out[g] = int64_t(upTo[g]) - before[g];
}

// A group's smallest string starts its run of the sorted keys; its largest ends it.
__global__ void RunEndKernel(const GroupStr* k, int64_t n, uint32_t G, bool last, int32_t* pick) {
  const int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n) return;
  const uint32_t g = k[j].group;
  if (g >= G) return;
  if (last ? (j == n - 1 || k[j + 1].group != g) : (j == 0 || k[j - 1].group != g)) pick[g] = k[j].s.row;
}

// The rows' strings sorted by (group, string), nulls last.
DBuf SortedStrings(DeviceState& dev, const ColumnView& c, const int32_t* gid, int64_t n, int64_t G) {
  DBuf keys = dev.alloc(size_t(std::max<int64_t>(n, 1)) * sizeof(GroupStr), "string aggregates");
  if (n == 0) return keys;
  GroupStrKernel<<<Blocks(n), kBlock, 0, dev.stream()>>>(c, gid, n, uint32_t(G), keys->as<GroupStr>());
  RunCub(dev, "string aggregates", [&](void* scratch, size_t& bytes) {
    return cub::DeviceMergeSort::SortKeys(scratch, bytes, keys->as<GroupStr>(), n, GroupStrLess{c}, dev.stream());
  });
  return keys;
}

// Distinct values per group (int64, never null) from a sorted (group, value) sequence.
template <class Runs>
Column CountRuns(DeviceState& dev, const Runs& r, int64_t n, int64_t G) {
  auto s = dev.stream();
  DBuf before = Filled<int32_t>(dev, G, 0, "nunique"), upTo = Filled<int32_t>(dev, G, 0, "nunique");
  if (n > 0) {
    DBuf flag = dev.alloc(size_t(n) * 4, "nunique"), sum = dev.alloc(size_t(n) * 4, "nunique");
    NewValueKernel<<<Blocks(n), kBlock, 0, s>>>(r, n, uint32_t(G), flag->as<int32_t>());
    RunCub(dev, "nunique", [&](void* scratch, size_t& bytes) {
      return cub::DeviceScan::InclusiveSum(scratch, bytes, flag->as<int32_t>(), sum->as<int32_t>(), n, s);
    });
    RunBoundsKernel<<<Blocks(n), kBlock, 0, s>>>(r, sum->as<int32_t>(), n, uint32_t(G), before->as<int32_t>(), upTo->as<int32_t>());
  }
  DBuf cnt = dev.alloc(size_t(std::max<int64_t>(G, 1)) * 8, "nunique");
  DifferenceKernel<<<Blocks(G), kBlock, 0, s>>>(before->as<int32_t>(), upTo->as<int32_t>(), cnt->as<int64_t>(), G);
  Column out;
  out.type = DType::Int64;
  out.length = G;
  out.data = MakeBufferNoInit(size_t(G) * 8);
  ToHost(dev, out.data->data(), cnt->data(), size_t(G) * 8);
  return out;
}

// nunique of a fixed-width column: the rows' keys sorted by value, then stably by group.
Column NUniqueFixed(DeviceState& dev, const ColumnView& c, const int32_t* gid, int64_t n, int64_t G) {
  auto s = dev.stream();
  const size_t n1 = size_t(std::max<int64_t>(n, 1));
  DBuf key = dev.alloc(n1 * 8, "nunique"), key2 = dev.alloc(n1 * 8, "nunique");
  DBuf group = dev.alloc(n1 * 4, "nunique"), group2 = dev.alloc(n1 * 4, "nunique");
  if (n > 0) {
    ValueKeysKernel<<<Blocks(n), kBlock, 0, s>>>(c, gid, n, uint32_t(G), key->as<uint64_t>(), group->as<uint32_t>());
    const int valueBits = c.type == DType::Bool ? 1 : 64;  // bools' keys are 0/1
    RunCub(dev, "nunique", [&](void* scratch, size_t& bytes) {
      return cub::DeviceRadixSort::SortPairs(scratch, bytes, key->as<uint64_t>(), key2->as<uint64_t>(), group->as<uint32_t>(),
                                             group2->as<uint32_t>(), n, 0, valueBits, s);
    });
    RunCub(dev, "nunique", [&](void* scratch, size_t& bytes) {
      return cub::DeviceRadixSort::SortPairs(scratch, bytes, group2->as<uint32_t>(), group->as<uint32_t>(), key2->as<uint64_t>(),
                                             key->as<uint64_t>(), n, 0, GroupBits(G), s);
    });
  }
  return CountRuns(dev, FixedRuns{group->as<uint32_t>(), key->as<uint64_t>()}, n, G);
}

}  // namespace

bool PickAggOnGpu(const AggSpec& a, DType input) {
  switch (a.op) {
    case AggOp::First:
    case AggOp::Last:
    case AggOp::NUnique: return true;
    case AggOp::Min:
    case AggOp::Max: return input == DType::String;
    default: return false;
  }
}

void AppendPickAgg(Table& out, DTable& t, const DBuf& gid, int64_t groups, const AggSpec& a, AggMode mode) {
  DeviceState& dev = t.dev;
  const int64_t n = t.rows, G = groups;
  const ColumnView c = t.view(a.column);
  const int32_t* g = gid->as<int32_t>();
  Column result;
  if (a.op == AggOp::NUnique) {
    if (mode != AggMode::Full)
      throw BasinError("BASIN_INTERNAL", "aggregation '" + a.name + "' (median/quantile/nunique) is not decomposable: use mode 'full'");
    if (c.type == DType::String) {
      DBuf keys = SortedStrings(dev, c, g, n, G);
      result = CountRuns(dev, StringRuns{keys->as<GroupStr>(), c}, n, G);
    } else {
      result = NUniqueFixed(dev, c, g, n, G);
    }
  } else {
    // The row each group's value is taken from; -1 (a group with no value) gives a null.
    DBuf pick = Filled<int32_t>(dev, G, -1, "group picks");
    DBuf keys;
    if (a.op == AggOp::First || a.op == AggOp::Last) {
      PickRowKernel<<<Blocks(n), kBlock, 0, dev.stream()>>>(c, g, pick->as<int32_t>(), a.op == AggOp::Last, n);
    } else {  // min/max of strings
      keys = SortedStrings(dev, c, g, n, G);
      if (n > 0)
        RunEndKernel<<<Blocks(n), kBlock, 0, dev.stream()>>>(keys->as<GroupStr>(), n, uint32_t(G), a.op == AggOp::Max, pick->as<int32_t>());
    }
    result = GatherDown(dev, c, pick->as<int32_t>(), G, true);
  }
  out.names.push_back(a.name);
  out.columns.push_back(std::move(result));
}

}  // namespace gpu
}  // namespace basin
