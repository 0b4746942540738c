#include "cuda/device_table.cuh"

#include <cub/device/device_scan.cuh>

#include <cstring>

#include "cuda/cuda_check.cuh"
#include "store/store.h"

namespace basin {
namespace gpu {

namespace {

__global__ void ComposeKernel(const int32_t* sel, const int32_t* rows, int32_t* out, int64_t n) {
  int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = sel ? sel[rows[i]] : rows[i];
}

__global__ void RowNumbersKernel(int32_t* out, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = int32_t(i);
}

// Row idx[i] of a column read through its selection; idx[i] < 0: no row (a null).
__device__ inline int64_t SourceRow(const int32_t* sel, const int32_t* idx, int64_t i) {
  const int32_t r = idx ? idx[i] : int32_t(i);
  return r < 0 ? -1 : (sel ? sel[r] : r);
}

template <typename T>
__global__ void GatherOrNullKernel(ColumnView v, const int32_t* idx, T* dst, uint8_t* dvalid, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int64_t p = SourceRow(v.sel, idx, i);
  dst[i] = p < 0 ? T(0) : static_cast<const T*>(v.data)[p];
  if (dvalid) dvalid[i] = p >= 0 && (!v.validity || v.validity[p]);
}

// A string gather's lengths (the last entry 0: the exclusive scan then ends in the total).
__global__ void StringLengthsKernel(ColumnView v, const int32_t* idx, int64_t* len, uint8_t* dvalid, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i > n) return;
  if (i == n) {
    len[n] = 0;
    return;
  }
  const int64_t p = SourceRow(v.sel, idx, i);
  const int64_t* off = static_cast<const int64_t*>(v.data);
  len[i] = p < 0 ? 0 : off[p + 1] - off[p];
  if (dvalid) dvalid[i] = p >= 0 && (!v.validity || v.validity[p]);
}

// One warp per row copies the row's bytes (strings of any length stay coalesced).
__global__ void StringCopyKernel(ColumnView v, const int32_t* idx, const int64_t* outOff, uint8_t* chars, int64_t n) {
  const int64_t warp = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (warp >= n) return;
  const int64_t p = SourceRow(v.sel, idx, warp);
  if (p < 0) return;
  const int64_t from = static_cast<const int64_t*>(v.data)[p], len = outOff[warp + 1] - outOff[warp];
  for (int64_t b = lane; b < len; b += 32) chars[outOff[warp] + b] = v.chars[from + b];
}

// A host validity buffer, or none when every row is valid.
BufferPtr HostValidity(DeviceState& dev, const uint8_t* dvalid, int64_t n) {
  if (!dvalid || n == 0) return nullptr;
  BufferPtr v = MakeBufferNoInit(size_t(n));
  ToHost(dev, v->data(), dvalid, size_t(n));
  if (!std::memchr(v->data(), 0, size_t(n))) return nullptr;
  return v;
}

}  // namespace

std::shared_ptr<CachedColumn> GatherOnDevice(DeviceState& dev, const ColumnView& v, const int32_t* idx, int64_t n, bool maybeMissing) {
  auto s = dev.stream();
  auto out = std::make_shared<CachedColumn>();
  if (v.validity || maybeMissing) out->validity = dev.alloc(size_t(std::max<int64_t>(n, 1)), "a column gather");
  uint8_t* dvalid = out->validity ? out->validity->as<uint8_t>() : nullptr;
  if (v.type == DType::String) {
    DBuf len = dev.alloc(size_t(n + 1) * 8, "a string gather");
    out->data = dev.alloc(size_t(n + 1) * 8, "a string gather");
    StringLengthsKernel<<<Blocks(n + 1), kBlock, 0, s>>>(v, idx, len->as<int64_t>(), dvalid, n);
    RunCub(dev, "a string gather", [&](void* scratch, size_t& bytes) {
      return cub::DeviceScan::ExclusiveSum(scratch, bytes, len->as<int64_t>(), out->data->as<int64_t>(), n + 1, s);
    });
    int64_t total = 0;
    ToHost(dev, &total, out->data->as<int64_t>() + n, 8);
    out->chars = dev.alloc(size_t(std::max<int64_t>(total, 1)), "a string gather");
    if (n > 0) StringCopyKernel<<<Blocks(n * 32), kBlock, 0, s>>>(v, idx, out->data->as<int64_t>(), out->chars->as<uint8_t>(), n);
  } else {
    const size_t w = ElementSize(v.type);
    out->data = dev.alloc(size_t(std::max<int64_t>(n, 1)) * w, "a column gather");
    if (n > 0) {
      if (w == 8) GatherOrNullKernel<uint64_t><<<Blocks(n), kBlock, 0, s>>>(v, idx, out->data->as<uint64_t>(), dvalid, n);
      else if (w == 4) GatherOrNullKernel<uint32_t><<<Blocks(n), kBlock, 0, s>>>(v, idx, out->data->as<uint32_t>(), dvalid, n);
      else GatherOrNullKernel<uint8_t><<<Blocks(n), kBlock, 0, s>>>(v, idx, out->data->as<uint8_t>(), dvalid, n);
    }
  }
  out->bytes = DeviceBytes(*out);
  return out;
}

Column DownloadColumn(DeviceState& dev, DType type, int64_t n, const CachedColumn& c) {
  Column out;
  out.type = type;
  out.length = n;
  if (type == DType::String) {
    out.data = MakeBufferNoInit(size_t(n + 1) * 8);
    ToHost(dev, out.data->data(), c.data->data(), size_t(n + 1) * 8);
    const int64_t total = out.data->as<int64_t>()[n];  // the chars up to the last row's end
    out.chars = MakeBufferNoInit(size_t(total));
    ToHost(dev, out.chars->data(), c.chars->data(), size_t(total));
  } else {
    const size_t bytes = size_t(n) * ElementSize(type);
    out.data = MakeBufferNoInit(bytes);
    ToHost(dev, out.data->data(), c.data->data(), bytes);
  }
  out.validity = HostValidity(dev, c.validity ? c.validity->as<uint8_t>() : nullptr, n);
  return out;
}

Column GatherDown(DeviceState& dev, const ColumnView& v, const int32_t* idx, int64_t n, bool maybeMissing) {
  return DownloadColumn(dev, v.type, n, *GatherOnDevice(dev, v, idx, n, maybeMissing));
}

uint64_t KeepOnDevice(DeviceState& dev, TablePtr shape, std::vector<std::shared_ptr<CachedColumn>> cols) {
  Sync(dev, "keeping a result on the GPU");
  int64_t bytes = 0;
  for (auto& c : cols) bytes += int64_t(DeviceBytes(*c));
  const uint64_t h = Store::Instance().putOnDevice(dev.device(), shape, bytes);
  try {
    dev.adopt(h, std::move(shape), std::move(cols));
  } catch (...) {
    Store::Instance().release(h);
    throw;
  }
  return h;
}

TablePtr DownloadOwned(DeviceState& dev, uint64_t handle, int64_t& bytes) {
  TablePtr shape;
  std::vector<std::shared_ptr<CachedColumn>> cols = dev.owned(handle, shape);
  if (!shape) return nullptr;
  auto host = std::make_shared<Table>();
  host->names = shape->names;
  host->rows = shape->rows;
  bytes = 0;
  for (size_t i = 0; i < cols.size(); i++) {
    host->columns.push_back(DownloadColumn(dev, shape->columns[i].type, shape->rows, *cols[i]));
    bytes += int64_t(cols[i]->bytes);
  }
  TablePtr table = host;
  dev.disown(handle, table);
  return table;
}

void SpillOwnedTable(DeviceState& dev, uint64_t handle) {
  int64_t bytes = 0;
  TablePtr table = DownloadOwned(dev, handle, bytes);
  if (!table) return;
  dev.countResultSpill(bytes);
  Store::Instance().deviceSpilled(handle, table);
}

void RowNumbers(DeviceState& dev, int32_t* out, int64_t n) {
  if (n > 0) RowNumbersKernel<<<Blocks(n), kBlock, 0, dev.stream()>>>(out, n);
}

DBuf ComposeRows(DeviceState& dev, const DBuf& sel, const DBuf& rows, int64_t n) {
  if (!sel) return rows;
  if (!rows) return sel;
  DBuf out = dev.alloc(size_t(std::max<int64_t>(n, 1)) * 4, "a row selection");
  if (n > 0) ComposeKernel<<<Blocks(n), kBlock, 0, dev.stream()>>>(sel->as<int32_t>(), rows->as<int32_t>(), out->as<int32_t>(), n);
  return out;
}

void ToDevice(DeviceState& dev, void* dst, const void* src, size_t bytes) {
  if (!bytes) return;
  Sync(dev, "copy to device");  // the kernels queued before: not the copy's time
  const auto t0 = std::chrono::steady_clock::now();
  HostStaging* staging = bytes >= HostStaging::kMinStaged ? dev.staging() : nullptr;
  if (!staging || !staging->upload(dev.device(), dev.stream(), dst, src, bytes)) {
    Check(dev.device(), "copy to device", cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, dev.stream()));
    Sync(dev, "copy to device");
  }
  dev.countUpload(bytes, MicrosSince(t0));
}

void ToHost(DeviceState& dev, void* dst, const void* src, size_t bytes) {
  if (!bytes) return;
  Sync(dev, "copy to host");
  const auto t0 = std::chrono::steady_clock::now();
  HostStaging* staging = bytes >= HostStaging::kMinStaged ? dev.staging() : nullptr;
  if (!staging || !staging->download(dev.device(), dev.stream(), dst, src, bytes)) {
    Check(dev.device(), "copy to host", cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, dev.stream()));
    Sync(dev, "copy to host");
  }
  dev.countDownload(bytes, MicrosSince(t0));
}

void Sync(DeviceState& dev, const char* op) {
  Check(dev.device(), op, cudaGetLastError());
  Check(dev.device(), op, cudaStreamSynchronize(dev.stream()));
}

DTable::DTable(DeviceState& d, uint64_t handle, TablePtr host) : dev(d), handle_(handle), host_(std::move(host)) {
  names = host_->names;
  rows = host_->rows;
  for (size_t i = 0; i < host_->columns.size(); i++) {
    DColumn c;
    c.type = host_->columns[i].type;
    c.length = host_->rows;
    c.source = int(i);
    cols.push_back(std::move(c));
  }
}

DTable::DTable(DeviceState& d, uint64_t handle, TablePtr shape, std::vector<std::shared_ptr<CachedColumn>> bufs)
    : DTable(d, handle, std::move(shape)) {
  deviceOnly_ = true;
  for (size_t i = 0; i < cols.size(); i++) cols[i].bufs = std::move(bufs[i]);
}

ColumnView DTable::view(int column) {
  DColumn& c = cols[size_t(column)];
  if (!c.bufs) {
    std::weak_ptr<const Table> alive = host_;
    if (handle_) c.bufs = dev.cached(handle_, c.source, alive);
    if (!c.bufs) {
      const Column& h = host_->columns[size_t(c.source)];
      auto up = std::make_shared<CachedColumn>();
      const size_t dataBytes = c.type == DType::String ? size_t(h.length + 1) * 8 : size_t(h.length) * ElementSize(c.type);
      up->data = dev.alloc(dataBytes, "a column upload");
      if (dataBytes) ToDevice(dev, up->data->data(), h.data->data(), dataBytes);
      up->bytes = up->data->size();
      if (h.validity && h.length > 0) {
        up->validity = dev.alloc(size_t(h.length), "a column upload");
        ToDevice(dev, up->validity->data(), h.validity->data(), size_t(h.length));
        up->bytes += up->validity->size();
      }
      if (c.type == DType::String) {
        const size_t n = h.chars ? h.chars->size() : 0;
        up->chars = dev.alloc(n, "a column upload");
        ToDevice(dev, up->chars->data(), n ? h.chars->data() : nullptr, n);
        up->bytes += up->chars->size();
      }
      if (handle_) dev.cache(handle_, c.source, alive, up);
      c.bufs = std::move(up);
    }
  }
  return ColumnView{c.type, c.bufs->data->data(), c.bufs->validity ? c.bufs->validity->as<uint8_t>() : nullptr,
                    c.bufs->chars ? c.bufs->chars->as<uint8_t>() : nullptr, c.sel ? c.sel->as<int32_t>() : nullptr};
}

bool DTable::onDevice(int column) {
  DColumn& c = cols[size_t(column)];
  if (!c.bufs && handle_) c.bufs = dev.cached(handle_, c.source, std::weak_ptr<const Table>(host_));
  return c.bufs != nullptr;
}

Column DTable::gather(int column, const DBuf& rowsBuf, int64_t n) {
  DColumn& c = cols[size_t(column)];
  if (c.source >= 0 && !c.sel && !rowsBuf && !deviceOnly_) return host_->columns[size_t(c.source)];  // the whole host column
  // On the device already (a persisted table's cached column, or used in this chain):
  // gathered there, so only the rows kept cross the bus.
  if (c.source < 0 || onDevice(column))
    return GatherDown(dev, view(column), rowsBuf ? rowsBuf->as<int32_t>() : nullptr, n, false);
  // Not on the device: gathered from the host copy (only the row numbers come back).
  DBuf phys = ComposeRows(dev, c.sel, rowsBuf, n);
  std::vector<int32_t> idx32(static_cast<size_t>(n));
  ToHost(dev, idx32.data(), phys->data(), size_t(n) * 4);
  std::vector<int64_t> idx(idx32.begin(), idx32.end());
  return Take(host_->columns[size_t(c.source)], idx.data(), n);
}

Column DTable::download(int column) { return gather(column, nullptr, cols[size_t(column)].length); }

}  // namespace gpu
}  // namespace basin
