// JS entry points for array chunk kernels (engine/native/addon.ts): chunks in and
// out as store handles, so a step copies no chunk between JS and native memory.
#include <napi.h>

#include <algorithm>
#include <cmath>

#include "array/array.h"
#include "bind/napi_util.h"

namespace basin {
namespace {

std::vector<int64_t> Int64List(const Napi::Value& v) {
  auto a = v.As<Napi::Array>();
  std::vector<int64_t> out(a.Length());
  for (uint32_t i = 0; i < a.Length(); i++) out[i] = a.Get(i).As<Napi::Number>().Int64Value();
  return out;
}

std::string Str(const Napi::Object& o, const char* key) { return o.Get(key).As<Napi::String>().Utf8Value(); }
double Num(const Napi::Object& o, const char* key) { return o.Get(key).As<Napi::Number>().DoubleValue(); }

// Whether an expression's values are integers (integer division by zero gives 0).
bool IsInt(const ChunkExpr& e) {
  if (e.kind == ChunkExpr::Kind::Scalar) return std::floor(e.value) == e.value && std::isfinite(e.value);
  return e.dtype != ArrayDType::Float64 && e.dtype != ArrayDType::Float32;
}

// A ChunkExpr (engine/lower/array_tasks.ts) for an output of `shape`; leaves get broadcast strides.
ChunkExpr ExprArg(const Napi::Value& v, const std::vector<int64_t>& shape) {
  auto o = v.As<Napi::Object>();
  ChunkExpr e;
  const std::string k = Str(o, "k");
  if (k == "scalar") {
    e.kind = ChunkExpr::Kind::Scalar;
    e.value = Num(o, "value");
    return e;
  }
  e.dtype = ArrayDTypeFromName(Str(o, "dtype"));
  if (k == "in") {
    e.kind = ChunkExpr::Kind::In;
    e.input = int(Num(o, "input"));
    const std::vector<int64_t> from = Int64List(o.Get("shape"));
    const size_t off = shape.size() - from.size();
    std::vector<int64_t> fs(from.size(), 1);
    for (int64_t d = int64_t(from.size()) - 2; d >= 0; d--) fs[size_t(d)] = fs[size_t(d) + 1] * from[size_t(d) + 1];
    e.strides.assign(shape.size(), 0);
    for (size_t d = off; d < shape.size(); d++) e.strides[d] = from[d - off] == 1 ? 0 : fs[d - off];
    return e;
  }
  e.kind = ChunkExpr::Kind::Op;
  e.op = MapOpFromName(Str(o, "op"));
  auto args = o.Get("args").As<Napi::Array>();
  for (uint32_t i = 0; i < args.Length(); i++) e.args.push_back(ExprArg(args.Get(i), shape));
  e.ints = std::all_of(e.args.begin(), e.args.end(), IsInt);
  return e;
}

Generator GeneratorArg(const Napi::Object& o) {
  Generator g;
  const std::string kind = Str(o, "kind");
  using K = Generator::Kind;
  if (kind == "fill") {
    g.kind = K::Fill;
    g.value = Num(o, "value");
  } else if (kind == "arange" || kind == "linspace") {
    g.kind = kind == "arange" ? K::Arange : K::Linspace;
    g.start = Num(o, "start");
    g.step = Num(o, "step");
    if (kind == "linspace") {
      g.stop = Num(o, "stop");
      g.endpoint = o.Get("endpoint").ToBoolean().Value();
    }
  } else {
    const std::string dist = Str(o, "dist");
    g.kind = dist == "uniform" ? K::Uniform : dist == "normal" ? K::Normal : K::Integers;
    g.seed = uint32_t(o.Get("seed").As<Napi::Number>().Int64Value());
    g.a = Num(o, "a");
    g.b = Num(o, "b");
  }
  return g;
}

int64_t SizeOf(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// A new chunk of n elements, filled by `fill`.
template <typename F>
Napi::Value MakeChunk(Napi::Env env, int64_t n, F fill) {
  auto t = std::make_shared<Table>();
  Column c;
  c.type = DType::Float64;
  c.length = n;
  c.data = MakeBuffer(size_t(n) * sizeof(double));
  fill(c.data->as<double>());
  t->names = {"v"};
  t->rows = n;
  t->columns.push_back(std::move(c));
  return PutTable(env, t);
}

const double* ChunkData(const TablePtr& t) { return t->columns.at(0).values<double>(); }

}  // namespace

void RegisterArray(Napi::Env env, Napi::Object exports) {
  // arrayMap(expr, inputs, shape) -> handle
  exports.Set("arrayMap", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      const std::vector<int64_t> shape = Int64List(info[2]);
      ChunkExpr e = ExprArg(info[0], shape);
      auto hs = info[1].As<Napi::Array>();
      std::vector<TablePtr> tables;
      std::vector<const double*> inputs;
      for (uint32_t i = 0; i < hs.Length(); i++) {
        tables.push_back(TableArg(hs.Get(i)));
        inputs.push_back(ChunkData(tables.back()));
      }
      return MakeChunk(info.Env(), SizeOf(shape), [&](double* out) { EvalChunkExpr(std::move(e), inputs, shape, out); });
    });
  }));
  // arrayGenerate(gen, dtype, shape, offset, full) -> handle
  exports.Set("arrayGenerate", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      const Generator g = GeneratorArg(info[0].As<Napi::Object>());
      const ArrayDType t = ArrayDTypeFromName(info[1].As<Napi::String>().Utf8Value());
      const std::vector<int64_t> shape = Int64List(info[2]), offset = Int64List(info[3]), full = Int64List(info[4]);
      return MakeChunk(info.Env(), SizeOf(shape), [&](double* out) { Generate(g, t, shape, offset, full, out); });
    });
  }));
  // arrayTranspose(h, shape, axes) -> handle
  exports.Set("arrayTranspose", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      TablePtr x = TableArg(info[0]);
      const std::vector<int64_t> shape = Int64List(info[1]);
      const std::vector<int> axes = IntList(info[2]);
      return MakeChunk(info.Env(), SizeOf(shape), [&](double* out) { Transpose(ChunkData(x), shape, axes, out); });
    });
  }));
  // arrayMatmul(m, n, ks, handles [a0, b0, a1, b1, …], dtype) -> handle
  exports.Set("arrayMatmul", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      const int64_t m = info[0].As<Napi::Number>().Int64Value(), n = info[1].As<Napi::Number>().Int64Value();
      const std::vector<int64_t> ks = Int64List(info[2]);
      auto hs = info[3].As<Napi::Array>();
      const ArrayDType t = ArrayDTypeFromName(info[4].As<Napi::String>().Utf8Value());
      std::vector<TablePtr> tables;
      std::vector<const double*> as, bs;
      for (uint32_t i = 0; i < hs.Length(); i++) {
        tables.push_back(TableArg(hs.Get(i)));
        (i % 2 ? bs : as).push_back(ChunkData(tables.back()));
      }
      return MakeChunk(info.Env(), m * n, [&](double* out) {
        MatmulBlocks(m, n, ks, as, bs, out);
        Narrow(out, m * n, t);
      });
    });
  }));
}

}  // namespace basin
