// JS entry points for the row kernels (engine/native/addon.ts).
#include <napi.h>

#include "bind/napi_util.h"
#include "ops/rows.h"

namespace basin {

void RegisterRows(Napi::Env env, Napi::Object exports) {
  // distinctRows(h, keys) -> handle
  exports.Set("distinctRows", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      TablePtr t = TableArg(info[0]);
      return PutTable(info.Env(), DistinctRows(*t, IntList(info[1])));
    });
  }));
  // topKRows(h, keys, column, k, descending) -> handle
  exports.Set("topKRows", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      TablePtr t = TableArg(info[0]);
      int column = info[2].As<Napi::Number>().Int32Value();
      int64_t k = info[3].As<Napi::Number>().Int64Value();
      bool descending = info[4].ToBoolean().Value();
      return PutTable(info.Env(), TopKRows(*t, IntList(info[1]), column, k, descending));
    });
  }));
  // sampleKeys(h, seed, part) -> handle with __sample_key and __sample_pos appended
  exports.Set("sampleKeys", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      TablePtr t = TableArg(info[0]);
      uint64_t seed = uint64_t(info[1].As<Napi::Number>().Int64Value());
      int64_t part = info[2].As<Napi::Number>().Int64Value();
      return PutTable(info.Env(), SampleKeys(*t, seed, part));
    });
  }));
}

}  // namespace basin
