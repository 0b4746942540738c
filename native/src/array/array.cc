// Array chunk kernels (see array.h).
#include "array/array.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "store/column.h"

namespace basin {

ArrayDType ArrayDTypeFromName(const std::string& name) {
  if (name == "float64") return ArrayDType::Float64;
  if (name == "float32") return ArrayDType::Float32;
  if (name == "int64") return ArrayDType::Int64;
  if (name == "int32") return ArrayDType::Int32;
  if (name == "bool") return ArrayDType::Bool;
  throw BasinError("BASIN_INTERNAL", "unknown array dtype " + name);
}

namespace {

// JavaScript's ToInt32 (what `v | 0` does): truncate, wrap modulo 2^32; NaN and ±inf give 0.
double ToInt32(double v) {
  if (!std::isfinite(v)) return 0;
  double t = std::fmod(std::trunc(v), 4294967296.0);
  if (t < 0) t += 4294967296.0;
  return t >= 2147483648.0 ? t - 4294967296.0 : t;
}

}  // namespace

double CastTo(double v, ArrayDType t) {
  switch (t) {
    case ArrayDType::Bool: return v != 0 ? 1 : 0;
    case ArrayDType::Int64: return std::trunc(v);
    case ArrayDType::Int32: return ToInt32(v);
    case ArrayDType::Float32: return double(float(v));
    case ArrayDType::Float64: return v;
  }
  return v;
}

void Narrow(double* v, int64_t n, ArrayDType t) {
  if (t == ArrayDType::Float32)
    for (int64_t i = 0; i < n; i++) v[i] = double(float(v[i]));
  else if (t == ArrayDType::Int32)
    for (int64_t i = 0; i < n; i++) v[i] = ToInt32(v[i]);
  else if (t == ArrayDType::Bool)
    for (int64_t i = 0; i < n; i++) v[i] = v[i] != 0 ? 1 : 0;
}

MapOp MapOpFromName(const std::string& s) {
  static const std::pair<const char*, MapOp> names[] = {
      {"add", MapOp::Add}, {"subtract", MapOp::Subtract}, {"multiply", MapOp::Multiply}, {"divide", MapOp::Divide},
      {"floor_divide", MapOp::FloorDivide}, {"mod", MapOp::Mod}, {"power", MapOp::Power}, {"maximum", MapOp::Maximum},
      {"minimum", MapOp::Minimum}, {"equal", MapOp::Equal}, {"not_equal", MapOp::NotEqual}, {"less", MapOp::Less},
      {"less_equal", MapOp::LessEqual}, {"greater", MapOp::Greater}, {"greater_equal", MapOp::GreaterEqual},
      {"logical_and", MapOp::LogicalAnd}, {"logical_or", MapOp::LogicalOr}, {"negative", MapOp::Negative},
      {"abs", MapOp::Abs}, {"sqrt", MapOp::Sqrt}, {"exp", MapOp::Exp}, {"log", MapOp::Log}, {"sin", MapOp::Sin},
      {"cos", MapOp::Cos}, {"tan", MapOp::Tan}, {"floor", MapOp::Floor}, {"ceil", MapOp::Ceil}, {"sign", MapOp::Sign},
      {"isnan", MapOp::IsNan}, {"isinf", MapOp::IsInf}, {"logical_not", MapOp::LogicalNot}, {"where", MapOp::Where},
      {"astype", MapOp::AsType},
  };
  for (const auto& [n, op] : names)
    if (s == n) return op;
  throw BasinError("BASIN_INTERNAL", "unknown array op " + s);
}

namespace {

constexpr int64_t kTile = 1024;

// An operand of a tile: `len` values at p[i * stride] (stride 0: one repeated value).
struct Operand {
  const double* p;
  int64_t stride;
  double at(int64_t i) const { return p[i * stride]; }
};

// out[i] = f(a[i], b[i]) with unit-stride and broadcast cases split so loops vectorize.
template <typename F>
void Binary(Operand a, Operand b, int64_t n, double* out, F f) {
  if (a.stride == 1 && b.stride == 1)
    for (int64_t i = 0; i < n; i++) out[i] = f(a.p[i], b.p[i]);
  else if (a.stride == 1 && b.stride == 0) {
    const double y = b.p[0];
    for (int64_t i = 0; i < n; i++) out[i] = f(a.p[i], y);
  } else if (a.stride == 0 && b.stride == 1) {
    const double x = a.p[0];
    for (int64_t i = 0; i < n; i++) out[i] = f(x, b.p[i]);
  } else
    for (int64_t i = 0; i < n; i++) out[i] = f(a.at(i), b.at(i));
}

template <typename F>
void Unary(Operand a, int64_t n, double* out, F f) {
  if (a.stride == 1)
    for (int64_t i = 0; i < n; i++) out[i] = f(a.p[i]);
  else
    for (int64_t i = 0; i < n; i++) out[i] = f(a.at(i));
}

double FloorDiv(double a, double b, bool ints) { return ints && b == 0 ? 0 : std::floor(a / b); }

double Mod(double a, double b, bool ints) {
  if (ints && b == 0) return 0;
  const double r = std::fmod(a, b);
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}

double Sign(double a) { return a > 0 ? 1 : a < 0 ? -1 : a; }

void BinaryOp(MapOp op, bool ints, Operand a, Operand b, int64_t n, double* o) {
  switch (op) {
    case MapOp::Add: return Binary(a, b, n, o, [](double x, double y) { return x + y; });
    case MapOp::Subtract: return Binary(a, b, n, o, [](double x, double y) { return x - y; });
    case MapOp::Multiply: return Binary(a, b, n, o, [](double x, double y) { return x * y; });
    case MapOp::Divide: return Binary(a, b, n, o, [](double x, double y) { return x / y; });
    case MapOp::FloorDivide: return Binary(a, b, n, o, [ints](double x, double y) { return FloorDiv(x, y, ints); });
    case MapOp::Mod: return Binary(a, b, n, o, [ints](double x, double y) { return Mod(x, y, ints); });
    case MapOp::Power: return Binary(a, b, n, o, [](double x, double y) { return std::pow(x, y); });
    case MapOp::Maximum: return Binary(a, b, n, o, [](double x, double y) { return x != x || y != y ? NAN : x > y ? x : y; });
    case MapOp::Minimum: return Binary(a, b, n, o, [](double x, double y) { return x != x || y != y ? NAN : x < y ? x : y; });
    case MapOp::Equal: return Binary(a, b, n, o, [](double x, double y) { return x == y ? 1.0 : 0.0; });
    case MapOp::NotEqual: return Binary(a, b, n, o, [](double x, double y) { return x != y ? 1.0 : 0.0; });
    case MapOp::Less: return Binary(a, b, n, o, [](double x, double y) { return x < y ? 1.0 : 0.0; });
    case MapOp::LessEqual: return Binary(a, b, n, o, [](double x, double y) { return x <= y ? 1.0 : 0.0; });
    case MapOp::Greater: return Binary(a, b, n, o, [](double x, double y) { return x > y ? 1.0 : 0.0; });
    case MapOp::GreaterEqual: return Binary(a, b, n, o, [](double x, double y) { return x >= y ? 1.0 : 0.0; });
    case MapOp::LogicalAnd: return Binary(a, b, n, o, [](double x, double y) { return x != 0 && y != 0 ? 1.0 : 0.0; });
    case MapOp::LogicalOr: return Binary(a, b, n, o, [](double x, double y) { return x != 0 || y != 0 ? 1.0 : 0.0; });
    default: throw BasinError("BASIN_INTERNAL", "not a binary array op");
  }
}

void UnaryOp(MapOp op, Operand a, int64_t n, double* o) {
  switch (op) {
    case MapOp::Negative: return Unary(a, n, o, [](double x) { return -x; });
    case MapOp::Abs: return Unary(a, n, o, [](double x) { return std::fabs(x); });
    case MapOp::Sqrt: return Unary(a, n, o, [](double x) { return std::sqrt(x); });
    case MapOp::Exp: return Unary(a, n, o, [](double x) { return std::exp(x); });
    case MapOp::Log: return Unary(a, n, o, [](double x) { return std::log(x); });
    case MapOp::Sin: return Unary(a, n, o, [](double x) { return std::sin(x); });
    case MapOp::Cos: return Unary(a, n, o, [](double x) { return std::cos(x); });
    case MapOp::Tan: return Unary(a, n, o, [](double x) { return std::tan(x); });
    case MapOp::Floor: return Unary(a, n, o, [](double x) { return std::floor(x); });
    case MapOp::Ceil: return Unary(a, n, o, [](double x) { return std::ceil(x); });
    case MapOp::Sign: return Unary(a, n, o, Sign);
    case MapOp::IsNan: return Unary(a, n, o, [](double x) { return x != x ? 1.0 : 0.0; });
    case MapOp::IsInf: return Unary(a, n, o, [](double x) { return std::isinf(x) ? 1.0 : 0.0; });
    case MapOp::LogicalNot: return Unary(a, n, o, [](double x) { return x == 0 ? 1.0 : 0.0; });
    default: throw BasinError("BASIN_INTERNAL", "not a unary array op");
  }
}

struct TileEval {
  const std::vector<const double*>& inputs;
  const std::vector<int64_t>& leafOffset;  // per leaf: where this tile starts in its input
  std::vector<double>& scratch;            // kTile per op node

  Operand eval(const ChunkExpr& e, int64_t n) {
    switch (e.kind) {
      case ChunkExpr::Kind::Scalar: return {&e.value, 0};
      case ChunkExpr::Kind::In: return {inputs[size_t(e.input)] + leafOffset[size_t(e.slot)], e.strides.empty() ? 0 : e.strides.back()};
      case ChunkExpr::Kind::Op: break;
    }
    double* out = &scratch[size_t(e.slot) * kTile];
    Operand a = eval(e.args[0], n);
    if (e.op == MapOp::Where) {
      Operand x = eval(e.args[1], n), y = eval(e.args[2], n);
      for (int64_t i = 0; i < n; i++) out[i] = a.at(i) != 0 ? x.at(i) : y.at(i);
    } else if (e.op == MapOp::AsType) {
      const ArrayDType t = e.dtype;
      Unary(a, n, out, [t](double x) { return CastTo(x, t); });
      return {out, 1};
    } else if (e.args.size() == 1)
      UnaryOp(e.op, a, n, out);
    else
      BinaryOp(e.op, e.ints, a, eval(e.args[1], n), n, out);
    Narrow(out, n, e.dtype);
    return {out, 1};
  }
};

// Numbers leaves and op nodes; collects the leaves.
void Number(ChunkExpr& e, std::vector<ChunkExpr*>& leaves, int& ops) {
  if (e.kind == ChunkExpr::Kind::In) {
    e.slot = int(leaves.size());
    leaves.push_back(&e);
  } else if (e.kind == ChunkExpr::Kind::Op) {
    e.slot = ops++;
    for (auto& a : e.args) Number(a, leaves, ops);
  }
}

}  // namespace

void EvalChunkExpr(ChunkExpr e, const std::vector<const double*>& inputs, const std::vector<int64_t>& shape, double* out) {
  std::vector<ChunkExpr*> leaves;
  int ops = 0;
  Number(e, leaves, ops);
  std::vector<double> scratch(size_t(std::max(ops, 1)) * kTile);
  std::vector<int64_t> offs(leaves.size(), 0), tileOffs(leaves.size(), 0);
  TileEval ev{inputs, tileOffs, scratch};
  const size_t nd = shape.size();
  for (int64_t d : shape)
    if (d == 0) return;
  const int64_t len = nd ? shape[nd - 1] : 1;
  std::vector<int64_t> idx(nd, 0);
  int64_t o = 0;
  for (;;) {
    // One row along the last axis, in tiles.
    for (int64_t s = 0; s < len; s += kTile) {
      const int64_t n = std::min(kTile, len - s);
      for (size_t l = 0; l < leaves.size(); l++) tileOffs[l] = offs[l] + (nd ? s * leaves[l]->strides[nd - 1] : 0);
      Operand r = ev.eval(e, n);
      for (int64_t i = 0; i < n; i++) out[o + i] = r.at(i);
      o += n;
    }
    if (nd < 2) return;
    int64_t d = int64_t(nd) - 2;
    for (; d >= 0; d--) {
      idx[size_t(d)]++;
      for (size_t l = 0; l < leaves.size(); l++) offs[l] += leaves[l]->strides[size_t(d)];
      if (idx[size_t(d)] < shape[size_t(d)]) break;
      for (size_t l = 0; l < leaves.size(); l++) offs[l] -= leaves[l]->strides[size_t(d)] * shape[size_t(d)];
      idx[size_t(d)] = 0;
    }
    if (d < 0) return;
  }
}

namespace {

uint32_t Mix32(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

// The counter-based hash of (seed, flat position g, stream): bit-for-bit the
// function the array plan has always used, so seeds keep their values.
uint32_t Hash(uint32_t seed, uint64_t g, uint32_t stream) {
  uint32_t h = Mix32(seed ^ ((stream + 1) * 0x9e3779b9u));
  h = Mix32(h ^ uint32_t(g));
  return Mix32((h + uint32_t(g >> 32) * 0x27d4eb2fu) ^ 0x165667b1u);
}

// Uniform in [0, 1) with 53 random bits.
double Uniform(uint32_t seed, uint64_t g, uint32_t stream) {
  return (double(Hash(seed, g, 2 * stream) >> 5) * 67108864.0 + double(Hash(seed, g, 2 * stream + 1) >> 6)) / 9007199254740992.0;
}

}  // namespace

void Generate(const Generator& g, ArrayDType t, const std::vector<int64_t>& shape, const std::vector<int64_t>& offset,
              const std::vector<int64_t>& full, double* out) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  if (n == 0) return;
  using K = Generator::Kind;
  if (g.kind == K::Fill) {
    std::fill(out, out + n, CastTo(g.value, t));
    return;
  }
  if (g.kind == K::Arange || g.kind == K::Linspace) {
    for (int64_t i = 0; i < n; i++) out[i] = g.start + double(offset[0] + i) * g.step;
    if (g.kind == K::Linspace && g.endpoint && offset[0] + n == full[0] && full[0] > 1) out[n - 1] = g.stop;
    Narrow(out, n, t);
    return;
  }
  // Each element's global C-order position drives the hash, so any chunking gives the same values.
  const size_t nd = shape.size();
  std::vector<int64_t> fs(nd, 1);
  for (int64_t d = int64_t(nd) - 2; d >= 0; d--) fs[size_t(d)] = fs[size_t(d) + 1] * full[size_t(d) + 1];
  const int64_t len = nd ? shape[nd - 1] : 1;
  std::vector<int64_t> idx(nd, 0);
  for (int64_t row = 0, o = 0; o < n; row++) {
    uint64_t g0 = 0;
    for (size_t d = 0; d < nd; d++) g0 += uint64_t((offset[d] + (d + 1 < nd ? idx[d] : 0)) * fs[d]);
    double* dst = out + o;
    if (g.kind == K::Uniform)
      for (int64_t i = 0; i < len; i++) dst[i] = g.a + (g.b - g.a) * Uniform(g.seed, g0 + uint64_t(i), 0);
    else if (g.kind == K::Integers)
      for (int64_t i = 0; i < len; i++) dst[i] = g.a + std::floor(Uniform(g.seed, g0 + uint64_t(i), 0) * (g.b - g.a));
    else
      for (int64_t i = 0; i < len; i++) {
        const double u1 = 1 - Uniform(g.seed, g0 + uint64_t(i), 0), u2 = Uniform(g.seed, g0 + uint64_t(i), 1);
        dst[i] = g.a + g.b * std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
      }
    o += len;
    for (int64_t d = int64_t(nd) - 2; d >= 0; d--) {
      if (++idx[size_t(d)] < shape[size_t(d)]) break;
      idx[size_t(d)] = 0;
    }
  }
  Narrow(out, n, t);
}

void Transpose(const double* x, const std::vector<int64_t>& shape, const std::vector<int>& axes, double* out) {
  const size_t nd = shape.size();
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  if (n == 0) return;
  if (nd == 2 && axes[0] == 1) {
    // Tiles of 64 × 64 keep both sides in cache.
    const int64_t r = shape[0], c = shape[1];
    constexpr int64_t B = 64;
    for (int64_t i0 = 0; i0 < c; i0 += B)
      for (int64_t j0 = 0; j0 < r; j0 += B)
        for (int64_t i = i0; i < std::min(i0 + B, c); i++)
          for (int64_t j = j0; j < std::min(j0 + B, r); j++) out[i * r + j] = x[j * c + i];
    return;
  }
  std::vector<int64_t> is(nd, 1);
  for (int64_t d = int64_t(nd) - 2; d >= 0; d--) is[size_t(d)] = is[size_t(d) + 1] * shape[size_t(d) + 1];
  std::vector<int64_t> os(nd), ps(nd);
  for (size_t d = 0; d < nd; d++) {
    os[d] = shape[size_t(axes[d])];
    ps[d] = is[size_t(axes[d])];
  }
  std::vector<int64_t> idx(nd, 0);
  int64_t src = 0;
  for (int64_t o = 0; o < n; o++) {
    out[o] = x[src];
    for (int64_t d = int64_t(nd) - 1; d >= 0; d--) {
      src += ps[size_t(d)];
      if (++idx[size_t(d)] < os[size_t(d)]) break;
      src -= ps[size_t(d)] * os[size_t(d)];
      idx[size_t(d)] = 0;
    }
  }
}

void MatmulBlocks(int64_t m, int64_t n, const std::vector<int64_t>& ks, const std::vector<const double*>& as,
                  const std::vector<const double*>& bs, double* out) {
  std::fill(out, out + m * n, 0.0);
  constexpr int64_t KB = 128;  // rows of B reused across all of A's rows while in cache
  for (size_t p = 0; p < ks.size(); p++) {
    const int64_t k = ks[p];
    const double* a = as[p];
    const double* b = bs[p];
    for (int64_t q0 = 0; q0 < k; q0 += KB) {
      const int64_t q1 = std::min(q0 + KB, k);
      for (int64_t i = 0; i < m; i++) {
        double* c = out + i * n;
        for (int64_t q = q0; q < q1; q++) {
          const double av = a[i * k + q];  // no skip of zeros: 0 × NaN must stay NaN
          const double* br = b + q * n;
          for (int64_t j = 0; j < n; j++) c[j] += av * br[j];
        }
      }
    }
  }
}

}  // namespace basin
