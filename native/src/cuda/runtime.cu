// The GPU entry points (gpu/gpu.h): discovery, settings, running chains, statistics.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>

#include "cuda/cuda_check.cuh"
#include "cuda/device_memory.cuh"
#include "cuda/device_table.cuh"
#include "cuda/expr_kernel.cuh"
#include "cuda/groupby_kernel.cuh"
#include "cuda/join_kernel.cuh"
#include "cuda/key_compare.cuh"
#include "cuda/sort_kernel.cuh"
#include "gpu/gpu.h"
#include "store/store.h"

namespace basin {
namespace gpu {

namespace {

// A CUDA failure that leaves the context unusable: the GPU's state is reset after it.
struct StickyCudaError : BasinError {
  using BasinError::BasinError;
};

__global__ void WriteKernel(int* p) { *p = 1; }

std::vector<DType> Types(const std::vector<DColumn>& cols) {
  std::vector<DType> t;
  for (auto& c : cols) t.push_back(c.type);
  return t;
}

// Why rows cannot be grouped by `keys` on the GPU (the group-by kernels' limits), or "".
std::string GroupingUnsupported(const std::vector<int>& keys, const std::vector<DType>& types, int64_t rows) {
  if (keys.size() > 8) return "more than 8 group keys";
  // Its hash table has twice the rows in slots, numbered in int32.
  if (rows > kMaxGroupedRows) return "a partition of more than 2^30 rows";
  for (int k : keys)
    if (k < 0 || size_t(k) >= types.size()) return "a key out of range";
  return "";
}

std::string UnsupportedFor(const Step& step, std::vector<DType>& types, int64_t rows) {
  switch (step.kind) {
    case Step::Kind::Filter:
      if (step.predicate.type != DType::Bool) return "a predicate that is not bool";
      return ExprUnsupported(step.predicate, types);
    case Step::Kind::Project: {
      std::vector<DType> next;
      for (const Expr& e : step.exprs) {
        if (e.kind != ExprKind::Col) {
          std::string why = ExprUnsupported(e, types);
          if (!why.empty()) return why;
        } else if (e.index < 0 || size_t(e.index) >= types.size()) {
          return "a column out of range";
        }
        next.push_back(e.type);
      }
      types = next;
      return "";
    }
    case Step::Kind::TopK: {
      if (step.k < 1) return "a top-k of no rows";
      if (step.column < 0 || size_t(step.column) >= types.size()) return "a value column out of range";
      if (types[size_t(step.column)] == DType::String) return "a string value to rank";
      return GroupingUnsupported(step.keys, types, rows);
    }
    case Step::Kind::Aggregate:
      if (step.mode != AggMode::Full && step.mode != AggMode::Partial) return "a merge of partial aggregates";
      // Checked here, not indexed blindly by the kernels' setup: the CPU names the error.
      for (const AggSpec& a : step.aggs) {
        const bool rowCount = a.op == AggOp::Count && a.column == -1;
        if (!rowCount && (a.column < 0 || size_t(a.column) >= types.size())) return "an aggregate column out of range";
        if (a.op == AggOp::Corr && (a.column2 < 0 || size_t(a.column2) >= types.size())) return "an aggregate column out of range";
      }
      return GroupingUnsupported(step.keys, types, rows);
  }
  return "an unknown step";
}

}  // namespace

std::string DeviceLabel(int device) {
  cudaDeviceProp p;
  if (cudaGetDeviceProperties(&p, device) != cudaSuccess) {
    cudaGetLastError();
    return "GPU " + std::to_string(device);
  }
  return "GPU " + std::to_string(device) + " (" + p.name + ")";
}

bool IsSticky(cudaError_t err) {
  switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorECCUncorrectable:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
      return true;
    default:
      return false;
  }
}

void ThrowCuda(int device, const std::string& op, cudaError_t err) {
  cudaGetLastError();  // clears a non-sticky error so the GPU stays usable
  std::string msg = DeviceLabel(device) + ": " + op + " failed: " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")";
  if (IsSticky(err))
    throw StickyCudaError("BASIN_CUDA", msg + "; CUDA cannot use this GPU again in this process: its work runs on the CPU from now on (restart Basin to use the GPU)");
  if (err == cudaErrorMemoryAllocation) throw BasinError("BASIN_CUDA", msg + "; out of device memory: use smaller partitions or a lower --device-memory-limit");
  throw BasinError("BASIN_CUDA", msg);
}

RuntimeInfo Runtime() {
  RuntimeInfo r;
  r.compiled = true;
  cudaRuntimeGetVersion(&r.runtimeVersion);
  cudaError_t err = cudaDriverGetVersion(&r.driverVersion);
  int n = 0;
  cudaError_t cerr = cudaGetDeviceCount(&n);
  if (err != cudaSuccess || cerr != cudaSuccess || r.driverVersion == 0) {
    cudaGetLastError();  // clear the error (e.g. no driver)
    r.note = std::string("no usable CUDA driver or GPU: ") + cudaGetErrorString(cerr != cudaSuccess ? cerr : err);
    return r;
  }
  for (int i = 0; i < n; i++) {
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) {
      cudaGetLastError();
      continue;
    }
    DeviceInfo d;
    d.index = i;
    d.name = p.name;
    d.totalMemory = int64_t(p.totalGlobalMem);
    d.major = p.major;
    d.minor = p.minor;
    d.multiprocessors = p.multiProcessorCount;
    int clockKHz = 0, busBits = 0;
    cudaDeviceGetAttribute(&clockKHz, cudaDevAttrMemoryClockRate, i);
    cudaDeviceGetAttribute(&busBits, cudaDevAttrGlobalMemoryBusWidth, i);
    d.bandwidthGBs = 2.0 * double(clockKHz) * 1e3 * (double(busBits) / 8.0) / 1e9;  // double data rate
    char bus[32] = {0};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, i) == cudaSuccess) d.pciBusId = bus;
    cudaGetLastError();
    r.devices.push_back(d);
  }
  if (r.devices.empty()) r.note = "the CUDA driver reports no GPU";
  return r;
}

void Configure(int device, const DeviceConfig& config) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || device < 0 || device >= n) {
    cudaGetLastError();
    throw BasinError("BASIN_CUDA", "GPU " + std::to_string(device) + " does not exist (this machine has " + std::to_string(n) +
                                       "); check --gpus and CUDA_VISIBLE_DEVICES");
  }
  DeviceState::Of(device).configure(config);
}

void Warm(int device) {
  DeviceState& dev = DeviceState::Of(device);
  std::lock_guard<std::mutex> lock(dev.runLock());
  if (!dev.broken().empty()) return;  // the chains say why
  Check(device, "select the device", cudaSetDevice(device));
  dev.stream();
}

std::string Unsupported(const Step& step, const Table& input) {
  std::vector<DType> types;
  for (auto& c : input.columns) types.push_back(c.type);
  return UnsupportedFor(step, types, input.rows);
}

std::string Broken(int device) { return DeviceState::Of(device).broken(); }

namespace {

// Runs f(dev) as GPU `device`'s one chain at a time (counted as one in its statistics
// with `chain`): refused once the GPU is unusable; a sticky CUDA error marks it so
// (CUDA cannot recover it inside this process).
template <class F>
auto OnDevice(int device, const F& f, bool chain = true) -> decltype(f(std::declval<DeviceState&>())) {
  DeviceState& dev = DeviceState::Of(device);
  std::lock_guard<std::mutex> lock(dev.runLock());
  std::string broken = dev.broken();
  if (!broken.empty()) throw BasinError("BASIN_CUDA", DeviceLabel(device) + " is unusable in this process after an earlier error (" + broken + "); restart Basin to use it again");
  try {
    Check(device, "select the device", cudaSetDevice(device));
    if (chain) dev.countChain();
    const auto t0 = std::chrono::steady_clock::now();
    auto out = f(dev);
    dev.endPhases(true);
    if (chain) dev.countChainTime(MicrosSince(t0));
    return out;
  } catch (const StickyCudaError& e) {
    dev.endPhases(false);
    dev.markBroken(e.what());
    throw;
  } catch (...) {
    dev.endPhases(false);
    throw;
  }
}

// A chain step's phase name (DeviceState::mark).
const char* StepPhase(Step::Kind kind) {
  switch (kind) {
    case Step::Kind::Filter:
      return "filter";
    case Step::Kind::Project:
      return "project";
    case Step::Kind::Aggregate:
      return "aggregate";
    case Step::Kind::TopK:
      return "top-k";
  }
  return "step";
}

// A store table as an operation on GPU `device` reads it: on the host, or only on
// that GPU (the device tier: its shape here, its columns there).
struct Input {
  uint64_t handle;
  TablePtr table;  // the host table, or the shape of one on the device
  bool onDevice;
};

// Before the GPU's run lock: reading a table back from another tier may wait for a
// chain (one coming down from this GPU takes the lock).
Input Resolve(int device, uint64_t handle) {
  Store& store = Store::Instance();
  if (TablePtr shape = store.onDevice(handle, device)) return Input{handle, shape, true};
  return Input{handle, store.get(handle), false};
}

// Under the run lock: the table as the chain reads it, unless it left the device
// since Resolve (read back to the host by another thread): null then, and the caller
// resolves again.
std::unique_ptr<DTable> Open(DeviceState& dev, const Input& in) {
  if (!in.onDevice) return std::make_unique<DTable>(dev, in.handle, in.table);
  TablePtr shape;
  std::vector<std::shared_ptr<CachedColumn>> cols = dev.owned(in.handle, shape);
  if (!shape) {
    // Only on this GPU by the store's account, yet not here: lost when the GPU was reset.
    if (Store::Instance().onDevice(in.handle, dev.device()))
      throw BasinError("BASIN_CUDA", DeviceLabel(dev.device()) + ": table " + std::to_string(in.handle) +
                                         ", kept on this GPU, is lost (its memory was reset); run the pipeline again");
    return nullptr;
  }
  return std::make_unique<DTable>(dev, in.handle, shape, std::move(cols));
}

// Runs f(dev, tables) on GPU `device` over the store's tables `handles`, opened as
// they are then (see Open).
template <class F>
Output WithTables(int device, const std::vector<uint64_t>& handles, const F& f) {
  for (int attempt = 0; attempt < 100; attempt++) {
    std::vector<Input> inputs;
    for (uint64_t h : handles) inputs.push_back(Resolve(device, h));
    bool moved = false;
    Output out = OnDevice(device, [&](DeviceState& dev) -> Output {
      std::vector<std::unique_ptr<DTable>> tables;
      for (const Input& in : inputs) {
        tables.push_back(Open(dev, in));
        if (!tables.back()) {
          moved = true;
          return Output{};
        }
      }
      return f(dev, tables);
    });
    if (!moved) return out;
  }
  throw BasinError("BASIN_INTERNAL", DeviceLabel(device) + ": a table kept on the device kept moving to the host");
}

// Whether every column of t is on the device (uploaded, cached, computed here): then
// an output made of them can stay there without uploading anything.
bool AllOnDevice(DTable& t, const std::vector<int>& columns) {
  for (int c : columns)
    if (!t.onDevice(c)) return false;
  return true;
}

// Narrows every column of t to logical rows `rows` (int32, `count` of them, in that
// order): a filter's survivors or top-k's picks, read through instead of copied.
void Select(DTable& t, const DBuf& rows, int64_t count) {
  std::vector<std::pair<DeviceBuffer*, DBuf>> composed;  // one new selection per old one
  for (DColumn& c : t.cols) {
    DBuf next;
    for (auto& [old, made] : composed)
      if (old == c.sel.get()) next = made;
    if (!next) {
      next = ComposeRows(t.dev, c.sel, rows, count);
      composed.emplace_back(c.sel.get(), next);
    }
    c.sel = next;
    c.length = count;
  }
  t.rows = count;
}

}  // namespace

std::string JoinUnsupported(const Table& left, const Table& right, const JoinSpec& spec) {
  const size_t K = spec.leftKeys.size();
  if (K == 0 || spec.rightKeys.size() != K) return "a join without as many left as right keys";
  if (K > size_t(kMaxKeys)) return "a join on more than 8 keys";
  for (size_t k = 0; k < K; k++) {
    const int lk = spec.leftKeys[k], rk = spec.rightKeys[k];
    if (lk < 0 || size_t(lk) >= left.columns.size() || rk < 0 || size_t(rk) >= right.columns.size()) return "a key out of range";
    if (left.columns[size_t(lk)].type != right.columns[size_t(rk)].type) return "keys of two types";
  }
  // Row numbers are int32 on the device; the right side's hash table has 2 slots a row.
  if (left.rows >= INT32_MAX) return "a left side of 2^31 rows or more";
  if (right.rows > (int64_t(1) << 30)) return "a right side of more than 2^30 rows";
  return "";
}

Output Join(int device, uint64_t leftHandle, uint64_t rightHandle, const JoinSpec& spec) {
  return WithTables(device, {leftHandle, rightHandle}, [&](DeviceState& dev, std::vector<std::unique_ptr<DTable>>& sides) -> Output {
    DTable &l = *sides[0], &r = *sides[1];
    CheckJoin(*l.host(), *r.host(), spec);
    std::string why = JoinUnsupported(*l.host(), *r.host(), spec);
    if (!why.empty()) throw BasinError("BASIN_INTERNAL", "GPU: cannot join " + why);
    dev.mark("join match");
    DevicePairs pairs = MatchRows(l, spec.leftKeys, r, spec.rightKeys, spec.how);
    dev.mark("join output");
    // The output columns are gathered on the device: only the joined rows cross the bus,
    // and none while the output stays there. A kJoinNone row number reads as -1: a null
    // where the pieces allow one.
    auto rowsOf = [&](bool isLeft, int64_t start, int64_t n) -> const int32_t* {
      const DBuf& rows = isLeft ? pairs.l : pairs.r;
      if (n > 0 && !rows) throw BasinError("BASIN_INTERNAL", "GPU: a semi or anti join has no right rows to output");
      return rows ? rows->as<int32_t>() + start : nullptr;
    };
    const auto pieces = JoinColumnPieces(spec, pairs.n, pairs.split);
    bool keep = dev.keepResults();
    for (const auto& column : pieces) keep = keep && column.size() == 1 && (column[0].left ? l : r).onDevice(column[0].column);
    if (keep) {
      std::vector<std::string> names;
      std::vector<DType> types;
      std::vector<std::shared_ptr<CachedColumn>> cols;
      for (size_t i = 0; i < pieces.size(); i++) {
        const JoinPiece& p = pieces[i][0];
        DTable& side = p.left ? l : r;
        names.push_back(spec.output[i].name);
        types.push_back(side.cols[size_t(p.column)].type);
        cols.push_back(GatherOnDevice(dev, side.view(p.column), rowsOf(p.left, p.start, p.n), p.n, p.maybeMissing));
      }
      return Output{nullptr, KeepOnDevice(dev, ShapeTable(names, types, pairs.n), std::move(cols))};
    }
    TablePtr out = AssembleJoin(spec, pairs.n, pairs.split, [&](bool isLeft, int column, int64_t start, int64_t n, bool maybeMissing) {
      return GatherDown(dev, (isLeft ? l : r).view(column), rowsOf(isLeft, start, n), n, maybeMissing);
    });
    Sync(dev, "a GPU join");
    return Output{out, 0};
  });
}

std::string SortUnsupported(const Table& t, const std::vector<SortKey>& keys) {
  if (keys.size() > 8) return "more than 8 sort keys";
  for (const SortKey& k : keys)
    if (k.column < 0 || size_t(k.column) >= t.columns.size()) return "a key out of range";
  if (t.rows >= INT32_MAX) return "a partition of 2^31 rows or more";  // int32 row numbers
  return "";
}

namespace {

// A table handed back as it is: the same handle for one of the device tier.
Output Unchanged(DTable& t) {
  if (!t.deviceOnly()) return Output{t.host(), 0};
  Store::Instance().retain(t.handle());
  return Output{nullptr, t.handle()};
}

}  // namespace

Output Sort(int device, uint64_t handle, const std::vector<SortKey>& keys) {
  return WithTables(device, {handle}, [&](DeviceState& dev, std::vector<std::unique_ptr<DTable>>& in) -> Output {
    DTable& d = *in[0];
    std::string why = SortUnsupported(*d.host(), keys);
    if (!why.empty()) throw BasinError("BASIN_INTERNAL", "GPU: cannot sort by " + why);
    if (d.rows < 2 || keys.empty()) return Unchanged(d);  // already in order
    dev.mark("sort");
    DBuf perm = SortRows(d, keys);
    dev.mark("sort output");
    std::vector<int> all(d.cols.size());
    for (size_t i = 0; i < all.size(); i++) all[i] = int(i);
    if (dev.keepResults() && AllOnDevice(d, all)) {
      std::vector<std::shared_ptr<CachedColumn>> cols;
      for (int i : all) cols.push_back(GatherOnDevice(dev, d.view(i), perm->as<int32_t>(), d.rows, false));
      return Output{nullptr, KeepOnDevice(dev, ShapeTable(d.names, Types(d.cols), d.rows), std::move(cols))};
    }
    // Columns on the device (the keys, cached ones) are gathered there, so only the
    // sorted rows cross the bus; the others from the host copy (DTable::gather).
    auto out = std::make_shared<Table>();
    out->names = d.names;
    out->rows = d.rows;
    for (int i : all) out->columns.push_back(d.gather(i, perm, d.rows));
    Sync(dev, "a GPU sort");
    return Output{out, 0};
  });
}

Output Run(int device, uint64_t handle, const std::vector<Step>& steps) {
  return WithTables(device, {handle}, [&](DeviceState& dev, std::vector<std::unique_ptr<DTable>>& in) -> Output {
    std::unique_ptr<DTable> t = std::move(in[0]);
    for (const Step& step : steps) {
      std::vector<DType> types = Types(t->cols);
      std::string why = UnsupportedFor(step, types, t->rows);
      if (!why.empty()) throw BasinError("BASIN_INTERNAL", "GPU: cannot run " + why);
      dev.mark(StepPhase(step.kind));
      switch (step.kind) {
        case Step::Kind::Filter: {
          int64_t count = 0;
          DBuf rows = SelectRows(*t, step.predicate, count);
          Select(*t, rows, count);
          break;
        }
        case Step::Kind::TopK: {
          int64_t count = 0;
          DBuf rows = TopKRows(*t, step.keys, step.column, step.k, step.descending, count);
          Select(*t, rows, count);
          break;
        }
        case Step::Kind::Project: {
          std::vector<DColumn> next;
          for (const Expr& e : step.exprs) next.push_back(e.kind == ExprKind::Col ? t->cols[size_t(e.index)] : EvalColumn(*t, e));
          t->cols = std::move(next);
          t->names = step.names;
          break;
        }
        case Step::Kind::Aggregate: {
          TablePtr result = Aggregate(*t, step.keys, step.aggs, step.mode);
          t = std::make_unique<DTable>(dev, 0, result);
          break;
        }
      }
    }
    if (t->cols.empty() || std::all_of(t->cols.begin(), t->cols.end(), [](const DColumn& c) { return c.source >= 0 && !c.sel; })) {
      // Nothing computed or selected since the last table: hand it back as it is.
      bool same = t->cols.size() == t->host()->columns.size();
      for (size_t i = 0; same && i < t->cols.size(); i++) same = t->cols[i].source == int(i);
      if (same && t->names == t->host()->names) return Unchanged(*t);
    }
    dev.mark("output");
    std::vector<int> all(t->cols.size());
    for (size_t i = 0; i < all.size(); i++) all[i] = int(i);
    // Kept when made here: some column computed or selected, the others too, or passed
    // through from a kept input (a host input's columns the host has: not kept).
    bool made = t->deviceOnly() && !t->cols.empty(), hostColumns = false;
    for (const DColumn& c : t->cols) {
      made = made || c.source < 0 || c.sel;
      hostColumns = hostColumns || (c.source >= 0 && !c.sel && !t->deviceOnly());
    }
    if (dev.keepResults() && made && !hostColumns && AllOnDevice(*t, all)) {
      // Columns with no selection are kept as they are (shared with the input's copy).
      std::vector<std::shared_ptr<CachedColumn>> cols;
      for (int i : all) {
        ColumnView v = t->view(i);
        const DColumn& c = t->cols[size_t(i)];
        cols.push_back(c.sel ? GatherOnDevice(dev, v, nullptr, c.length, false) : c.bufs);
      }
      return Output{nullptr, KeepOnDevice(dev, ShapeTable(t->names, Types(t->cols), t->rows), std::move(cols))};
    }
    auto out = std::make_shared<Table>();
    out->names = t->names;
    out->rows = t->rows;
    for (int i : all) out->columns.push_back(t->download(i));
    Sync(dev, "a GPU chain");
    return Output{out, 0};
  });
}

void Keep(int device, uint64_t handle, const TablePtr& table) {
  // Only saves the first query its uploads: a GPU unusable after a sticky error runs
  // nothing (its work goes to the CPU), so persist() must not fail for it.
  if (!DeviceState::Of(device).broken().empty()) return;
  OnDevice(
      device,
      [&](DeviceState& dev) -> TablePtr {
        DTable d(dev, handle, table);
        dev.mark("keep upload");
        for (size_t i = 0; i < table->columns.size(); i++) d.view(int(i));
        Sync(dev, "keeping a table on the GPU");
        return nullptr;
      },
      false);
}

namespace {

// The store's device tier (store/device_tier.h), on the GPUs' tables kept in DeviceState.
class CudaDeviceTier : public DeviceTier {
 public:
  TablePtr download(int device, uint64_t handle) override {
    return OnDevice(
        device,
        [&](DeviceState& dev) -> TablePtr {
          int64_t bytes = 0;
          return DownloadOwned(dev, handle, bytes);
        },
        false);
  }
  void drop(int device, uint64_t handle) override { DeviceState::Of(device).dropOwned(handle); }
};

struct RegisterDeviceTier {
  RegisterDeviceTier() {
    static CudaDeviceTier tier;
    Store::Instance().setDeviceTier(&tier);
  }
} registerDeviceTier;

}  // namespace

std::vector<MemoryStats> Stats() {
  std::vector<MemoryStats> out;
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return out;
  }
  for (int i = 0; i < n; i++) out.push_back(DeviceState::Of(i).stats());
  return out;
}

void Fault(int device, const std::string& kind) {
  OnDevice(device, [&](DeviceState& dev) -> TablePtr {
    if (kind == "bad-launch") {
      WriteKernel<<<0, 1, 0, dev.stream()>>>(nullptr);  // a grid of zero blocks: refused at launch
      Check(device, "a test launch", cudaGetLastError());
    } else if (kind == "oom") {
      dev.stream();  // the limit is known once the GPU is set up
      dev.alloc(size_t(dev.stats().limit) + 1, "a test allocation");
    } else if (kind == "illegal-address") {
      WriteKernel<<<1, 1, 0, dev.stream()>>>(reinterpret_cast<int*>(8));
      Sync(dev, "a test kernel");
    }
    throw BasinError("BASIN_INTERNAL", "unknown GPU fault '" + kind + "'");
  });
}

}  // namespace gpu
}  // namespace basin
