#include "cuda/group_columns.cuh"

namespace basin {
namespace gpu {

namespace {

// valid[g]: whether group g counted a value; *empty set when one did not.
__global__ void ValidFromCountKernel(const unsigned long long* cnt, uint8_t* valid, unsigned long long* empty, int64_t G) {
  const int64_t g = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g >= G) return;
  valid[g] = cnt[g] != 0;
  if (!cnt[g]) *empty = 1;
}

template <typename T>
__global__ void NarrowKernel(const long long* in, T* out, int64_t G) {
  const int64_t g = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g < G) out[g] = T(in[g]);
}

__global__ void MeanKernel(double* sum, const unsigned long long* cnt, int64_t G) {
  const int64_t g = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (g < G) sum[g] = cnt[g] ? sum[g] / double(cnt[g]) : 0.0;
}

// DownColumn of min/max accumulators (long long) as a narrower type (dates, bools).
template <typename T>
Column DownNarrowed(DeviceState& dev, DType type, const DBuf& acc, int64_t G, const DBuf& cnt) {
  DBuf narrow = dev.alloc(size_t(std::max<int64_t>(G, 1)) * sizeof(T), "group minima");
  NarrowKernel<T><<<Blocks(G), kBlock, 0, dev.stream()>>>(acc->as<long long>(), narrow->as<T>(), G);
  return DownColumn(dev, type, narrow, G, cnt);
}

}  // namespace

Column DownColumn(DeviceState& dev, DType type, const DBuf& values, int64_t G, const DBuf& cnt) {
  Column c;
  c.type = type;
  c.length = G;
  c.data = MakeBufferNoInit(size_t(G) * ElementSize(type));
  ToHost(dev, c.data->data(), values->data(), c.data->size());
  if (cnt && G > 0) {
    DBuf valid = dev.alloc(size_t(G), "group validity");
    DBuf empty = Filled<unsigned long long>(dev, 1, 0ULL, "group validity");
    ValidFromCountKernel<<<Blocks(G), kBlock, 0, dev.stream()>>>(cnt->as<unsigned long long>(), valid->as<uint8_t>(),
                                                                 empty->as<unsigned long long>(), G);
    unsigned long long anyEmpty = 0;
    ToHost(dev, &anyEmpty, empty->data(), 8);
    if (anyEmpty) {
      c.validity = MakeBufferNoInit(size_t(G));
      ToHost(dev, c.validity->data(), valid->data(), size_t(G));
    }
  }
  return c;
}

void FinishMean(DeviceState& dev, const DBuf& sum, const DBuf& cnt, int64_t G) {
  MeanKernel<<<Blocks(G), kBlock, 0, dev.stream()>>>(sum->as<double>(), cnt->as<unsigned long long>(), G);
}

bool Additive(AggOp op) {
  return op == AggOp::Count || op == AggOp::Sum || op == AggOp::Mean || op == AggOp::Min || op == AggOp::Max;
}

void EmitAdditive(Table& out, DeviceState& dev, const AggSpec& a, DType type, const GroupAcc& r, int64_t G, AggMode mode) {
  auto add = [&](Column col) {
    out.names.push_back(a.name);
    out.columns.push_back(std::move(col));
  };
  switch (a.op) {
    case AggOp::Count: add(DownColumn(dev, DType::Int64, r.cnt, G, nullptr)); return;
    case AggOp::Sum: add(DownColumn(dev, type == DType::Float64 ? DType::Float64 : DType::Int64, r.acc, G, r.cnt)); return;
    case AggOp::Mean:
      if (mode == AggMode::Partial) {
        std::vector<unsigned long long> u = Down<unsigned long long>(dev, r.cnt, G);
        AppendMean(out, a.name, Down<double>(dev, r.acc, G), std::vector<int64_t>(u.begin(), u.end()), true);
        return;
      }
      FinishMean(dev, r.acc, r.cnt, G);
      add(DownColumn(dev, DType::Float64, r.acc, G, r.cnt));
      return;
    case AggOp::Min:
    case AggOp::Max:
      if (type == DType::Date) add(DownNarrowed<int32_t>(dev, DType::Date, r.acc, G, r.cnt));
      else if (type == DType::Bool) add(DownNarrowed<uint8_t>(dev, DType::Bool, r.acc, G, r.cnt));
      else add(DownColumn(dev, type, r.acc, G, r.cnt));
      return;
    default: throw BasinError("BASIN_INTERNAL", "GPU: aggregate '" + a.name + "' is not additive");
  }
}

}  // namespace gpu
}  // namespace basin
