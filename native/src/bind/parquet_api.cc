// JS entry point for checking Parquet page bodies (see io/parquet_pages.h).
#include <napi.h>

#include "bind/napi_util.h"
#include "io/parquet_pages.h"

namespace basin {

void RegisterParquet(Napi::Env env, Napi::Object exports) {
  // parquetPageDamage(body: Uint8Array, page) -> why it is damaged, or null
  exports.Set("parquetPageDamage", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      auto body = info[0].As<Napi::Uint8Array>();
      auto o = info[1].As<Napi::Object>();
      auto num = [&](const char* k, double d) { return o.Has(k) ? o.Get(k).As<Napi::Number>().DoubleValue() : d; };
      ParquetPage p;
      p.codec = int(num("codec", 0));
      p.raw = int64_t(num("raw", 0));
      p.levels = int64_t(num("levels", 0));
      p.checkValues = o.Has("values");
      if (p.checkValues) {
        auto v = o.Get("values").As<Napi::Object>();
        p.numValues = v.Get("count").As<Napi::Number>().Int64Value();
        p.encoding = v.Get("encoding").As<Napi::Number>().Int32Value();
        p.physical = v.Get("physical").As<Napi::Number>().Int32Value();
        p.optional = v.Get("optional").ToBoolean().Value();
        p.dictionary = v.Get("dictionary").As<Napi::Number>().Int64Value();
      }
      const std::string why = DamagedParquetPage(body.Data(), body.ElementLength(), p);
      return why.empty() ? info.Env().Null() : Napi::String::New(info.Env(), why);
    });
  }));
}

}  // namespace basin
