// The GPU side of the engine as the rest of the addon sees it: which GPUs there are,
// per-GPU memory settings, and running a chain of steps (filter, project, aggregate)
// on one GPU. Implemented by cuda/*.cu where nvcc is found, by gpu_none.cc otherwise
// (no GPUs; running anything is a BASIN_CUDA error). No CUDA types cross this header.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ops/expr.h"
#include "ops/groupby.h"
#include "ops/join.h"
#include "ops/sort.h"
#include "store/column.h"

namespace basin {
namespace gpu {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int64_t totalMemory = 0;
  int major = 0, minor = 0;  // compute capability
  int multiprocessors = 0;
  // Peak bandwidth from the memory clock and bus width, for "fraction of bandwidth" figures.
  double bandwidthGBs = 0;
  std::string pciBusId;
};

struct RuntimeInfo {
  bool compiled = false;   // the addon was built with CUDA
  int driverVersion = 0;   // e.g. 13000; 0 without a driver
  int runtimeVersion = 0;  // the CUDA runtime linked in
  std::string note;        // why there are no devices, when there are none
  std::vector<DeviceInfo> devices;
};

// Device discovery (never throws: a machine with nvcc but no driver reports no devices).
RuntimeInfo Runtime();

struct DeviceConfig {
  // Bytes Basin may hold on the device (cached columns + a step's working set);
  // 0 = 80% of the device's memory.
  int64_t memoryLimit = 0;
  // Reserved up front and sub-allocated (like RMM's pool); 0 = the memory limit.
  int64_t poolSize = 0;
  // CUDA's stream-ordered allocator (cudaMallocAsync) instead of Basin's pool.
  bool asyncAllocator = false;
  // Copies of 8 MiB and more go through pinned staging buffers (cuda/host_staging.cuh);
  // false: straight from and to pageable memory (the driver stages them itself).
  bool stagedCopies = true;
  // A GPU operation's output stays on the device (the store's device tier) when every
  // column of it is there; it comes to the host when read there, or when spilled.
  bool keepResults = true;
};

// Applies settings to a GPU (frees what it holds there). Throws BASIN_CUDA for a GPU
// that does not exist.
void Configure(int device, const DeviceConfig& config);
// Makes the GPU ready for chains now (CUDA context, stream, memory pool), so that a
// cluster's first query does not pay for it. Throws BASIN_CUDA when it cannot.
void Warm(int device);

// One step of a GPU chain (the same meaning as the CPU steps in engine/lower/tasks.ts).
struct Step {
  enum class Kind { Filter, Project, Aggregate, TopK } kind = Kind::Filter;
  Expr predicate;                  // Filter
  std::vector<Expr> exprs;         // Project
  std::vector<std::string> names;  // Project
  std::vector<int> keys;           // Aggregate, TopK (the groups)
  std::vector<AggSpec> aggs;       // Aggregate (mode Full or Partial)
  AggMode mode = AggMode::Full;
  int column = -1;                 // TopK: the value ranked
  int64_t k = 0;                   // TopK: rows kept per group
  bool descending = false;         // TopK
};

// Why `step` cannot run on a GPU, or "" when it can (expression kinds, types, aggregate
// modes the kernels cover; anything else runs on the CPU kernels).
std::string Unsupported(const Step& step, const Table& input);
// Why GPU `device` cannot run anything in this process (a sticky CUDA error earlier), or "".
std::string Broken(int device);

// A GPU operation's output: a host table for the caller to put in the store (`host`),
// or the store handle of a table kept on the device (`handle`: the store's device
// tier, see DeviceConfig::keepResults; the caller owns one reference).
struct Output {
  TablePtr host;
  uint64_t handle = 0;
};

// Runs steps in order on GPU `device` over the store's table `handle` (its uploaded
// columns are cached on the device under that handle).
// Errors: BASIN_CUDA naming the GPU and the operation.
Output Run(int device, uint64_t handle, const std::vector<Step>& steps);

// Uploads every column of the store's table `handle` to GPU `device`, into its cache (a
// persisted partition whose home is that GPU), so that its first query does not pay
// the upload; columns already there stay. Errors: BASIN_CUDA naming the GPU.
void Keep(int device, uint64_t handle, const TablePtr& table);

// Why a join cannot match its rows on a GPU, or "" (every join type; 1 to 8 keys of any
// type, each the same type on both sides; a left side under 2^31 rows, a right side of
// at most 2^30: the CPU kernels do the rest).
std::string JoinUnsupported(const Table& left, const Table& right, const JoinSpec& spec);

// HashJoin of the store's tables `leftHandle` and `rightHandle` with the rows matched
// on GPU `device` (keys uploaded, cached under the handles): the same rows in the
// same order. The output columns are gathered on the device. A result of 2^32 rows or
// more is a BASIN_INTERNAL error.
Output Join(int device, uint64_t leftHandle, uint64_t rightHandle, const JoinSpec& spec);

// Why a sort cannot order its rows on a GPU, or "" (up to 8 keys of any type, each
// with its own direction and nulls placement; under 2^31 rows).
std::string SortUnsupported(const Table& t, const std::vector<SortKey>& keys);
// SortTable on GPU `device`: the permutation from stable sorts by each key, the last key
// first (radix sorts of order-preserving keys; a merge sort for strings); the columns on
// the device are gathered there, the others on the host.
Output Sort(int device, uint64_t handle, const std::vector<SortKey>& keys);

struct MemoryStats {
  int device = 0;
  int64_t used = 0, limit = 0, poolSize = 0, cachedBytes = 0, cachedColumns = 0;
  int64_t evictions = 0, evictedBytes = 0, uploads = 0, uploadBytes = 0, downloads = 0, downloadBytes = 0;
  int64_t cacheHits = 0, chains = 0, failures = 0;
  // Time inside chains, and inside their copies (the bytes' own time: queued kernels are
  // waited for before the clock starts), in microseconds: where a chain's time goes.
  int64_t chainMicros = 0, uploadMicros = 0, downloadMicros = 0;
  // The device tier: outputs kept on the device so far, and those copied to the host
  // under memory pressure (the others come down when read, or are released there).
  int64_t resultTables = 0, resultBytes = 0, resultSpills = 0, resultSpilledBytes = 0;
  // GPU time of the chains' phases (group ids, aggregates, a join's match and output,
  // ...), in microseconds, by phase: where a chain's time goes inside it.
  std::vector<std::pair<std::string, int64_t>> phases;
  std::string broken;  // why the GPU is unusable in this process, or ""
};
// For every GPU that has run something or been configured.
std::vector<MemoryStats> Stats();

// Test hooks for the failure paths: "bad-launch" launches a kernel with an invalid
// configuration; "oom" allocates more than the memory limit; "illegal-address" makes
// a kernel fault (sticky: the GPU is unusable in this process afterwards). Each throws
// BASIN_CUDA.
void Fault(int device, const std::string& kind);

}  // namespace gpu
}  // namespace basin
