// JS entry points for the small dense linear algebra kernels (engine/native/addon.ts).
// Matrices cross as row-major Float64Arrays: they are one chunk or a stack of small
// R factors, so a copy each way costs little next to the O(m·n²) work.
#include <napi.h>

#include <cstring>
#include <string>

#include "array/linalg.h"
#include "bind/napi_util.h"

namespace basin {
namespace {

const double* MatrixArg(const Napi::Value& v, int64_t rows, int64_t cols) {
  auto a = v.As<Napi::Float64Array>();
  if (int64_t(a.ElementLength()) != rows * cols)
    throw BasinError("BASIN_INTERNAL", "matrix of " + std::to_string(a.ElementLength()) + " elements for shape " +
                                           std::to_string(rows) + "x" + std::to_string(cols));
  return a.Data();
}

Napi::Float64Array ToJs(Napi::Env env, const std::vector<double>& v) {
  auto out = Napi::Float64Array::New(env, v.size());
  if (!v.empty()) std::memcpy(out.Data(), v.data(), v.size() * sizeof(double));
  return out;
}

int64_t IntArg(const Napi::Value& v) { return v.As<Napi::Number>().Int64Value(); }

}  // namespace

void RegisterLinalg(Napi::Env env, Napi::Object exports) {
  // linalgQr(a, m, n) -> { q: m×k, r: k×n }, k = min(m, n)
  exports.Set("linalgQr", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      const int64_t m = IntArg(info[1]), n = IntArg(info[2]);
      std::vector<double> q, r;
      HouseholderQr(MatrixArg(info[0], m, n), m, n, q, r);
      auto out = Napi::Object::New(info.Env());
      out.Set("q", ToJs(info.Env(), q));
      out.Set("r", ToJs(info.Env(), r));
      return out;
    });
  }));
  // linalgSvd(a, m, n) -> { u: m×k, s: k, vt: k×n }, k = min(m, n)
  exports.Set("linalgSvd", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      const int64_t m = IntArg(info[1]), n = IntArg(info[2]);
      std::vector<double> u, s, vt;
      JacobiSvd(MatrixArg(info[0], m, n), m, n, u, s, vt);
      auto out = Napi::Object::New(info.Env());
      out.Set("u", ToJs(info.Env(), u));
      out.Set("s", ToJs(info.Env(), s));
      out.Set("vt", ToJs(info.Env(), vt));
      return out;
    });
  }));
  // linalgSolve(a, n, b, k) -> x (n×k), or the column (a number) where A turned out singular
  exports.Set("linalgSolve", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      const int64_t n = IntArg(info[1]), k = IntArg(info[3]);
      std::vector<double> x;
      int64_t column = -1;
      if (!LuSolve(MatrixArg(info[0], n, n), n, MatrixArg(info[2], n, k), k, x, column))
        return Napi::Number::New(info.Env(), double(column));
      return ToJs(info.Env(), x);
    });
  }));
}

}  // namespace basin
