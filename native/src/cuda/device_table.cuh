// A table on one GPU while a chain of steps runs: columns uploaded from the host table
// on first use (and cached on the device under the store handle), columns computed on
// the device, and selections (a filter's surviving rows as int32 row numbers) that
// every kernel reads through instead of copying the columns.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cuda/cuda_check.cuh"
#include "cuda/device_memory.cuh"
#include "store/column.h"

namespace basin {
namespace gpu {

// What a kernel reads of a column: row i is data[sel ? sel[i] : i].
struct ColumnView {
  DType type;
  const void* data;         // int64 / double / uint8 / int32 (date) / int64 offsets (string)
  const uint8_t* validity;  // nullptr: no nulls
  const uint8_t* chars;     // strings
  const int32_t* sel;       // nullptr: identity
};

struct DColumn {
  DType type = DType::Int64;
  int64_t length = 0;  // logical rows
  // A column of the input table (index >= 0, uploaded on first use) or computed here.
  int source = -1;
  std::shared_ptr<CachedColumn> bufs;  // null until uploaded
  DBuf sel;                            // shared by the columns of one filter
};

class DTable {
 public:
  DTable(DeviceState& dev, uint64_t handle, TablePtr host);
  // A table of the device tier: its only copy is `cols` on the device; `shape` gives
  // its names, types and rows (no host buffers).
  DTable(DeviceState& dev, uint64_t handle, TablePtr shape, std::vector<std::shared_ptr<CachedColumn>> cols);
  DeviceState& dev;
  std::vector<std::string> names;
  std::vector<DColumn> cols;
  int64_t rows = 0;

  // Uploads the column if it is not on the device yet; returns the kernels' view.
  ColumnView view(int column);
  // Whether the column's data is on the device (uploaded, cached or computed here).
  bool onDevice(int column);
  // Copies a column back to the host. A source column with no selection is the host
  // column itself (no copy).
  Column download(int column);
  // Rows `rows` (logical row numbers on the device, int32; null: 0..n-1) of a column, on
  // the host: gathered on the device when the column is there, else from the host copy.
  Column gather(int column, const DBuf& rows, int64_t n);
  // The host table (the shape only, for a table of the device tier).
  const TablePtr& host() const { return host_; }
  uint64_t handle() const { return handle_; }
  bool deviceOnly() const { return deviceOnly_; }

 private:
  uint64_t handle_;
  TablePtr host_;
  bool deviceOnly_ = false;
};

// The kernels' view of a column computed on the device (no selection: one row per logical row).
inline ColumnView ComputedView(const DColumn& c) {
  return ColumnView{c.type, c.bufs->data->data(), c.bufs->validity ? c.bufs->validity->as<uint8_t>() : nullptr,
                    c.bufs->chars ? c.bufs->chars->as<uint8_t>() : nullptr, nullptr};
}

// Rows idx[0..n) (int32 logical rows read through the view's selection; a negative
// one gives a null, with maybeMissing) of a column, gathered into device buffers of
// their own; idx null: rows 0..n-1.
std::shared_ptr<CachedColumn> GatherOnDevice(DeviceState& dev, const ColumnView& v, const int32_t* idx, int64_t n, bool maybeMissing);
// A column's own device buffers (n rows of `type`, as GatherOnDevice or an upload
// makes them) copied to the host.
Column DownloadColumn(DeviceState& dev, DType type, int64_t n, const CachedColumn& c);
// GatherOnDevice, then downloaded.
Column GatherDown(DeviceState& dev, const ColumnView& v, const int32_t* idx, int64_t n, bool maybeMissing);
// Puts `cols` (buffers of their own, `shape`'s columns) in the store's device tier on
// `dev`; returns the handle (one reference, the caller's).
uint64_t KeepOnDevice(DeviceState& dev, TablePtr shape, std::vector<std::shared_ptr<CachedColumn>> cols);
// Copies the store's table `handle`, whose only copy is on `dev`, to the host; its
// columns there become cached copies of it. Null when it is not such a table (any
// more); `bytes`: its device bytes. Under the GPU's run lock.
TablePtr DownloadOwned(DeviceState& dev, uint64_t handle, int64_t& bytes);
// Row numbers `rows` (int32, logical) read through selection `sel`: sel[rows[i]];
// either may be null (identity), then the other is returned as it is.
DBuf ComposeRows(DeviceState& dev, const DBuf& sel, const DBuf& rows, int64_t n);
// out[i] = i for i < n (int32 row numbers), on the GPU's stream.
void RowNumbers(DeviceState& dev, int32_t* out, int64_t n);
// Copies n items to/from the device on the GPU's stream (synchronously).
void ToDevice(DeviceState& dev, void* dst, const void* src, size_t bytes);
void ToHost(DeviceState& dev, void* dst, const void* src, size_t bytes);
// Microseconds since t0 (the GPU statistics' timings).
inline int64_t MicrosSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
}
// Waits for the GPU's stream; names the operation in errors.
void Sync(DeviceState& dev, const char* op);
// Runs a CUB device algorithm the two-phase way: f(scratch, bytes) with no scratch
// says how much it needs, then runs with it. `what` names it in errors.
template <class F>
void RunCub(DeviceState& dev, const char* what, const F& f) {
  size_t bytes = 0;
  cudaError_t err = f(nullptr, bytes);
  if (err != cudaSuccess) ThrowCuda(dev.device(), what, err);
  DBuf scratch = dev.alloc(bytes, what);
  err = f(scratch->data(), bytes);
  if (err != cudaSuccess) ThrowCuda(dev.device(), what, err);
}

// Grid size for n threads of kBlock.
constexpr int kBlock = 256;
inline unsigned Blocks(int64_t n) { return unsigned(std::max<int64_t>(1, (n + kBlock - 1) / kBlock)); }

}  // namespace gpu
}  // namespace basin
