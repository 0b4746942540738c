// JS entry points for Parquet: checking page bodies (io/parquet_pages.h) and decoding
// flat column chunks into a stored table (io/parquet_decode.h).
#include <napi.h>

#include <memory>

#include "bind/napi_util.h"
#include "bind/plan_args.h"
#include "io/parquet_decode.h"
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
  // parquetDecode({ path, rows, columns: [{ name, type, physical, optional, unsigned, timeMul,
  //   timeDiv, codec, pages: [{ type, body, raw, values, encoding, levelBytes, compressed, group }] }],
  //   predicate?, outputs?, outputNames? }) -> handle of the rows the predicate (over these
  //   columns) holds for, of the columns `outputs` (indices) under `outputNames`
  exports.Set("parquetDecode", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Guard(info, [&]() -> Napi::Value {
      auto o = info[0].As<Napi::Object>();
      auto num = [](const Napi::Object& x, const char* k) { return x.Get(k).As<Napi::Number>().Int64Value(); };
      std::vector<ParquetColumnIn> columns;
      auto cols = o.Get("columns").As<Napi::Array>();
      for (uint32_t i = 0; i < cols.Length(); i++) {
        auto c = cols.Get(i).As<Napi::Object>();
        ParquetColumnIn in;
        in.name = c.Get("name").As<Napi::String>().Utf8Value();
        in.type = DTypeFromName(c.Get("type").As<Napi::String>().Utf8Value());
        in.physical = int(num(c, "physical"));
        in.optional = c.Get("optional").ToBoolean().Value();
        in.unsignedInt = c.Get("unsigned").ToBoolean().Value();
        in.timeMul = num(c, "timeMul");
        in.timeDiv = num(c, "timeDiv");
        in.codec = int(num(c, "codec"));
        auto pages = c.Get("pages").As<Napi::Array>();
        for (uint32_t k = 0; k < pages.Length(); k++) {
          auto p = pages.Get(k).As<Napi::Object>();
          auto body = p.Get("body").As<Napi::Uint8Array>();
          ParquetPageIn page;
          page.type = int(num(p, "type"));
          page.body = body.Data();
          page.size = body.ElementLength();
          page.raw = num(p, "raw");
          page.values = num(p, "values");
          page.encoding = int(num(p, "encoding"));
          page.levelBytes = num(p, "levelBytes");
          page.compressed = p.Get("compressed").ToBoolean().Value();
          page.group = int(num(p, "group"));
          in.pages.push_back(page);
        }
        columns.push_back(std::move(in));
      }
      const std::string path = o.Get("path").As<Napi::String>().Utf8Value();
      std::unique_ptr<Expr> predicate;
      if (o.Has("predicate") && o.Get("predicate").IsObject())
        predicate = std::make_unique<Expr>(ParseExpr(o.Get("predicate").As<Napi::Object>()));
      std::vector<int> outputs;
      std::vector<std::string> outputNames;
      const bool pick = o.Has("outputs") && o.Get("outputs").IsArray();
      if (pick) {
        auto idx = o.Get("outputs").As<Napi::Array>();
        auto names = o.Get("outputNames").As<Napi::Array>();
        for (uint32_t k = 0; k < idx.Length(); k++) {
          const int at = idx.Get(k).As<Napi::Number>().Int32Value();
          if (at < 0 || size_t(at) >= columns.size()) throw BasinError("BASIN_INTERNAL", "parquetDecode: an output column is out of range");
          outputs.push_back(at);
          outputNames.push_back(names.Get(k).As<Napi::String>().Utf8Value());
        }
      }
      return PutTable(info.Env(), DecodeParquet(columns, num(o, "rows"), path, predicate.get(), pick ? &outputs : nullptr,
                                                pick ? &outputNames : nullptr));
    });
  }));

  // parquetCodecSupported(codec) -> whether parquetDecode reads pages compressed with it
  exports.Set("parquetCodecSupported", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Napi::Boolean::New(info.Env(), ParquetCodecSupported(info[0].As<Napi::Number>().Int32Value()));
  }));
}

}  // namespace basin
