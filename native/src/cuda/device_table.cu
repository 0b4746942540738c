#include "cuda/device_table.cuh"

#include <cstring>

#include "cuda/cuda_check.cuh"

namespace basin {
namespace gpu {

namespace {

__global__ void ComposeKernel(const int32_t* sel, const int32_t* rows, int32_t* out, int64_t n) {
  int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = sel ? sel[rows[i]] : rows[i];
}

template <typename T>
__global__ void GatherKernel(const T* src, const uint8_t* valid, const int32_t* idx, T* dst, uint8_t* dvalid, int64_t n) {
  int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int32_t r = idx[i];
  dst[i] = src[r];
  if (dvalid) dvalid[i] = valid[r];
}

// A host validity buffer, or none when every row is valid.
BufferPtr HostValidity(DeviceState& dev, const uint8_t* dvalid, int64_t n) {
  if (!dvalid || n == 0) return nullptr;
  BufferPtr v = MakeBuffer(size_t(n));
  ToHost(dev, v->data(), dvalid, size_t(n));
  if (!std::memchr(v->data(), 0, size_t(n))) return nullptr;
  return v;
}

}  // namespace

DBuf ComposeRows(DeviceState& dev, const DBuf& sel, const DBuf& rows, int64_t n) {
  if (!sel) return rows;
  if (!rows) return sel;
  DBuf out = dev.alloc(size_t(std::max<int64_t>(n, 1)) * 4, "a row selection");
  if (n > 0) ComposeKernel<<<Blocks(n), kBlock, 0, dev.stream()>>>(sel->as<int32_t>(), rows->as<int32_t>(), out->as<int32_t>(), n);
  return out;
}

void ToDevice(DeviceState& dev, void* dst, const void* src, size_t bytes) {
  if (!bytes) return;
  Check(dev.device(), "copy to device", cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, dev.stream()));
  Sync(dev, "copy to device");
  dev.countUpload(bytes);
}

void ToHost(DeviceState& dev, void* dst, const void* src, size_t bytes) {
  if (!bytes) return;
  Check(dev.device(), "copy to host", cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, dev.stream()));
  Sync(dev, "copy to host");
  dev.countDownload(bytes);
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

Column DTable::gather(int column, const DBuf& rowsBuf, int64_t n) {
  DColumn& c = cols[size_t(column)];
  DBuf phys = ComposeRows(dev, c.sel, rowsBuf, n);  // null: rows 0..n-1 as they are
  if (c.source >= 0) {
    // Gathered from the host copy: only the row numbers come back.
    const Column& h = host_->columns[size_t(c.source)];
    if (!phys) return h;
    std::vector<int32_t> idx32(static_cast<size_t>(n));
    ToHost(dev, idx32.data(), phys->data(), size_t(n) * 4);
    std::vector<int64_t> idx(idx32.begin(), idx32.end());
    return Take(h, idx.data(), n);
  }
  if (c.type == DType::String) throw BasinError("BASIN_INTERNAL", "GPU: computed string columns are not supported");
  ColumnView v = view(column);
  const size_t w = ElementSize(c.type);
  Column out;
  out.type = c.type;
  out.length = n;
  out.data = MakeBuffer(size_t(n) * w);
  if (!phys) {
    ToHost(dev, out.data->data(), v.data, size_t(n) * w);
    out.validity = HostValidity(dev, v.validity, n);
    return out;
  }
  DBuf data = dev.alloc(size_t(n) * w, "a column download");
  DBuf valid = v.validity ? dev.alloc(size_t(n), "a column download") : nullptr;
  uint8_t* dvalid = valid ? valid->as<uint8_t>() : nullptr;
  const int32_t* idx = phys->as<int32_t>();
  auto s = dev.stream();
  if (n > 0) {
    if (w == 8) GatherKernel<uint64_t><<<Blocks(n), kBlock, 0, s>>>(static_cast<const uint64_t*>(v.data), v.validity, idx, data->as<uint64_t>(), dvalid, n);
    else if (w == 4) GatherKernel<uint32_t><<<Blocks(n), kBlock, 0, s>>>(static_cast<const uint32_t*>(v.data), v.validity, idx, data->as<uint32_t>(), dvalid, n);
    else GatherKernel<uint8_t><<<Blocks(n), kBlock, 0, s>>>(static_cast<const uint8_t*>(v.data), v.validity, idx, data->as<uint8_t>(), dvalid, n);
  }
  ToHost(dev, out.data->data(), data->data(), size_t(n) * w);
  out.validity = HostValidity(dev, dvalid, n);
  return out;
}

Column DTable::download(int column) { return gather(column, nullptr, cols[size_t(column)].length); }

}  // namespace gpu
}  // namespace basin
