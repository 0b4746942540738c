// Kernels of array chunks (engine/workers/array_steps.ts): a chunk is a one-column
// float64 table holding its elements in C order; its shape travels in the step.
// Every dtype is held as float64 and narrowed (float32 rounding, int32 wrapping,
// bool 0/1) by the kernel that makes values of that dtype.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace basin {

// Logical dtypes of array elements (engine/common/array_plan.ts ArrayDType).
enum class ArrayDType : uint8_t { Float64, Float32, Int64, Int32, Bool };
ArrayDType ArrayDTypeFromName(const std::string& name);
// A value as `t` holds it (astype's conversion: float → int truncates, int32 wraps).
double CastTo(double v, ArrayDType t);
// Values narrowed to what `t` holds, in place (results of arithmetic in float64).
void Narrow(double* v, int64_t n, ArrayDType t);

// Elementwise ops (the MapOp names of array_plan.ts).
enum class MapOp : uint8_t {
  Add, Subtract, Multiply, Divide, FloorDivide, Mod, Power, Maximum, Minimum,
  Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual, LogicalAnd, LogicalOr,
  Negative, Abs, Sqrt, Exp, Log, Sin, Cos, Tan, Floor, Ceil, Sign, IsNan, IsInf, LogicalNot, Where, AsType,
};
MapOp MapOpFromName(const std::string& name);

// An elementwise expression over input chunks. A leaf reads input `input` through
// `strides` (one per output axis, in elements; 0 where the input broadcasts).
struct ChunkExpr {
  enum class Kind : uint8_t { In, Scalar, Op } kind = Kind::Scalar;
  int input = 0;
  std::vector<int64_t> strides;
  double value = 0;
  MapOp op = MapOp::Add;
  ArrayDType dtype = ArrayDType::Float64;
  bool ints = false;  // every argument integral: integer division by zero gives 0
  int slot = -1;      // set by EvalChunkExpr: a leaf's index, an op's scratch tile
  std::vector<ChunkExpr> args;
};

// out (C order, `shape`) = expr over `inputs`; evaluated in cache-sized tiles, so
// no temporary is larger than a tile and broadcast inputs are never materialized.
void EvalChunkExpr(ChunkExpr e, const std::vector<const double*>& inputs, const std::vector<int64_t>& shape, double* out);

// Values of a generated array (engine/common/array_plan.ts Generator) at `offset` of `full`.
struct Generator {
  enum class Kind : uint8_t { Fill, Arange, Linspace, Uniform, Normal, Integers } kind = Kind::Fill;
  double value = 0, start = 0, step = 0, stop = 0;
  bool endpoint = false;
  uint32_t seed = 0;
  double a = 0, b = 1;
};
void Generate(const Generator& g, ArrayDType t, const std::vector<int64_t>& shape, const std::vector<int64_t>& offset,
              const std::vector<int64_t>& full, double* out);

// `x` of `shape` with axes permuted (output axis d is input axis axes[d]).
void Transpose(const double* x, const std::vector<int64_t>& shape, const std::vector<int>& axes, double* out);

// out (m × n) = Σ_p A_p (m × ks[p]) @ B_p (ks[p] × n), row-major.
void MatmulBlocks(int64_t m, int64_t n, const std::vector<int64_t>& ks, const std::vector<const double*>& as,
                  const std::vector<const double*>& bs, double* out);

}  // namespace basin
