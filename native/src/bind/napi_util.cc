#include "bind/napi_util.h"

#include "store/store.h"

namespace basin {

Napi::Value Guard(const Napi::CallbackInfo& info, const std::function<Napi::Value()>& fn) {
  Napi::Env env = info.Env();
  std::string code, message;
  try {
    return fn();
  } catch (const Napi::Error&) {
    throw;
  } catch (const BasinError& e) {
    code = e.code;
    message = e.what();
  } catch (const std::bad_alloc&) {
    code = "BASIN_OOM";
    message = "out of host memory";
  } catch (const std::exception& e) {
    code = "BASIN_INTERNAL";
    message = e.what();
  }
  Napi::Error err = Napi::Error::New(env, message);
  err.Set("code", Napi::String::New(env, code));
  throw err;
}

uint64_t HandleArg(const Napi::Value& v) { return uint64_t(v.As<Napi::Number>().Int64Value()); }
Napi::Value HandleValue(Napi::Env env, uint64_t handle) { return Napi::Number::New(env, double(handle)); }
TablePtr TableArg(const Napi::Value& v) { return Store::Instance().get(HandleArg(v)); }
Napi::Value PutTable(Napi::Env env, TablePtr t) {
  uint64_t h = Store::Instance().put(std::move(t));
  try {
    return HandleValue(env, h);
  } catch (...) {
    Store::Instance().release(h);  // the thread is terminating: nobody will ever own it
    throw;
  }
}

std::vector<std::string> StringList(const Napi::Value& v) {
  std::vector<std::string> out;
  auto a = v.As<Napi::Array>();
  for (uint32_t i = 0; i < a.Length(); i++) out.push_back(a.Get(i).As<Napi::String>().Utf8Value());
  return out;
}

std::vector<int> IntList(const Napi::Value& v) {
  std::vector<int> out;
  auto a = v.As<Napi::Array>();
  for (uint32_t i = 0; i < a.Length(); i++) out.push_back(a.Get(i).As<Napi::Number>().Int32Value());
  return out;
}

}  // namespace basin
