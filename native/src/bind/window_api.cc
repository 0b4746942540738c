// JS entry points for window functions (engine/native/addon.ts).
#include <napi.h>

#include "bind/napi_util.h"
#include "ops/window.h"

namespace basin {
namespace {

// [{ op, column, n, minPeriods, name }] -> WindowSpec list
std::vector<WindowSpec> SpecsArg(const Napi::Value& v) {
  auto arr = v.As<Napi::Array>();
  std::vector<WindowSpec> specs;
  for (uint32_t i = 0; i < arr.Length(); i++) {
    auto o = arr.Get(i).As<Napi::Object>();
    WindowSpec s;
    s.op = WindowOpFromName(o.Get("op").As<Napi::String>().Utf8Value());
    s.column = o.Get("column").As<Napi::Number>().Int32Value();
    s.n = o.Get("n").As<Napi::Number>().Int64Value();
    s.minPeriods = o.Get("minPeriods").As<Napi::Number>().Int64Value();
    s.name = o.Get("name").As<Napi::String>().Utf8Value();
    specs.push_back(std::move(s));
  }
  return specs;
}

TablePtr OptionalTable(const Napi::Value& v) { return v.IsNull() || v.IsUndefined() ? nullptr : TableArg(v); }

Napi::Value HandleList(Napi::Env env, const std::vector<TablePtr>& ts) {
  auto out = Napi::Array::New(env, ts.size());
  for (size_t i = 0; i < ts.size(); i++) out.Set(uint32_t(i), PutTable(env, ts[i]));
  return out;
}

}  // namespace

void RegisterWindow(Napi::Env env, Napi::Object exports) {
  // windowEval(h, specs, keys, before | null, after | null) -> handle
  exports.Set("windowEval", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      TablePtr t = TableArg(info[0]);
      TablePtr before = OptionalTable(info[3]), after = OptionalTable(info[4]);
      return PutTable(info.Env(), WindowEval(*t, SpecsArg(info[1]), IntList(info[2]), before.get(), after.get()));
    });
  }));
  // windowCarry(h, specs, rows, fromEnd) -> handle
  exports.Set("windowCarry", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      TablePtr t = TableArg(info[0]);
      int64_t rows = info[2].As<Napi::Number>().Int64Value();
      return PutTable(info.Env(), WindowCarry(*t, SpecsArg(info[1]), rows, info[3].ToBoolean().Value()));
    });
  }));
  // windowScan(carries[], specs, rows, fromEnd) -> handle[] (one per carry)
  exports.Set("windowScan", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      auto arr = info[0].As<Napi::Array>();
      std::vector<TablePtr> carries;
      for (uint32_t i = 0; i < arr.Length(); i++) carries.push_back(TableArg(arr.Get(i)));
      int64_t rows = info[2].As<Napi::Number>().Int64Value();
      return HandleList(info.Env(), WindowScan(carries, SpecsArg(info[1]), rows, info[3].ToBoolean().Value()));
    });
  }));
  // rowIndex(h, start, name) -> handle
  exports.Set("rowIndex", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      TablePtr t = TableArg(info[0]);
      int64_t start = info[1].As<Napi::Number>().Int64Value();
      return PutTable(info.Env(), WithRowIndex(*t, start, info[2].As<Napi::String>().Utf8Value()));
    });
  }));
}

}  // namespace basin
